#include "model/streams.h"

#include <stdio.h>
#include <string.h>

const struct rm_stream_def rm_stream_defs[RM_STREAM_COUNT] = {
    [RM_STREAM_GPU] = {"gpu", "gpu", RM_INPUT_GPU_CSV, "nvidia-smi --query-gpu, one row per GPU"},
    [RM_STREAM_DMON] = {"dmon", "dmon", RM_INPUT_DMON_CSV, "nvidia-smi dmon, one row per GPU"},
    [RM_STREAM_CPU] = {"cpu", "cpu", RM_INPUT_CPU_CSV, "/proc/stat and /proc/meminfo"},
    [RM_STREAM_PROC] = {"proc", "proc", RM_INPUT_PROC_CSV, "the command's process tree"},
    [RM_STREAM_APPS] = {"apps", "apps", RM_INPUT_APPS_CSV, "nvidia-smi pmon, one row per process"},
};

int rm_stream_by_name(const char *name)
{
    for (int i = 0; i < RM_STREAM_COUNT; i++)
        if (!strcmp(name, rm_stream_defs[i].name)) return i;
    return -1;
}

int rm_segment_name(char *out, size_t cap, int stream, int number)
{
    const char *stem = rm_stream_defs[stream].stem;
    int n = number ? snprintf(out, cap, "%s-%06d.csv", stem, number)
                   : snprintf(out, cap, "%s.csv", stem);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int rm_segment_parse_name(const char *name, int *stream, int *sealed)
{
    size_t len = strlen(name);
    if (len < 5 || strcmp(name + len - 4, ".csv")) return 0;
    for (int k = 0; k < RM_STREAM_COUNT; k++) {
        const char *stem = rm_stream_defs[k].stem;
        size_t sl = strlen(stem);
        if (strncmp(name, stem, sl)) continue;
        if (len == sl + 4) {
            *stream = k;
            *sealed = 0;
            return 1;
        }
        if (name[sl] != '-' || len == sl + 5) continue;
        int digits = 1;
        for (size_t i = sl + 1; i < len - 4; i++)
            digits &= name[i] >= '0' && name[i] <= '9';
        if (!digits) continue;
        *stream = k;
        *sealed = 1;
        return 1;
    }
    return 0;
}
