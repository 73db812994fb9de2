#include "model/streams.h"

#include <stdio.h>
#include <string.h>

const struct rm_stream_def rm_stream_defs[RM_STREAM_COUNT] = {
    [RM_STREAM_GPU] = {.name = "gpu",
                       .stem = "gpu",
                       .kind = RM_INPUT_GPU_CSV,
                       .what = "nvidia-smi --query-gpu, one row per GPU",
                       .needs = RM_NEEDS_NVIDIA_SMI,
                       .option = "gpu-csv",
                       .option_help = "an nvidia-smi --query-gpu CSV (repeatable, in time order)",
                       .guess = RM_GUESS_DEFAULT,
                       .chart = "gpu",
                       .drawn = true,
                       .subject = RM_SUBJECT_GPUS,
                       .influx = true,
                       .own_time = true},
    [RM_STREAM_DMON] = {.name = "dmon",
                        .stem = "dmon",
                        .kind = RM_INPUT_DMON_CSV,
                        .what = "nvidia-smi dmon, one row per GPU",
                        .needs = RM_NEEDS_NVIDIA_SMI,
                        .option = "dmon",
                        .option_help = "nvidia-smi dmon output, text or runmon's dmon.csv",
                        .guess = RM_GUESS_ANYWHERE,
                        .chart = "gpu",
                        .drawn = false,
                        .subject = RM_SUBJECT_NONE,
                        .influx = false,
                        .own_time = true},
    [RM_STREAM_CPU] = {.name = "cpu",
                       .stem = "cpu",
                       .kind = RM_INPUT_CPU_CSV,
                       .what = "/proc/stat and /proc/meminfo",
                       .needs = 0,
                       .option = "cpu-csv",
                       .option_help = "a cpu.csv (or another monitor's cpu_metrics.csv)",
                       .guess = RM_GUESS_PREFIX,
                       .chart = "cpu",
                       .drawn = true,
                       .subject = RM_SUBJECT_HOST,
                       .influx = true},
    [RM_STREAM_PROC] = {.name = "proc",
                        .stem = "proc",
                        .kind = RM_INPUT_PROC_CSV,
                        .what = "the command's process tree",
                        .needs = RM_NEEDS_COMMAND,
                        .option = "proc-csv",
                        .option_help = "a proc.csv",
                        .guess = RM_GUESS_PREFIX,
                        .chart = "proc",
                        .drawn = true,
                        .subject = RM_SUBJECT_TREE,
                        .influx = true},
    [RM_STREAM_APPS] = {.name = "apps",
                        .stem = "apps",
                        .kind = RM_INPUT_APPS_CSV,
                        .what = "nvidia-smi pmon, one row per process",
                        .needs = RM_NEEDS_NVIDIA_SMI,
                        .option = "apps-csv",
                        .option_help = "an apps.csv, or nvidia-smi's per-process output",
                        .guess = RM_GUESS_PREFIX,
                        .chart = "apps",
                        .drawn = true,
                        .subject = RM_SUBJECT_PROCESSES,
                        .influx = true,
                        .own_time = true},
    [RM_STREAM_IO] = {.name = "io",
                      .stem = "io",
                      .kind = RM_INPUT_IO_CSV,
                      .what = "/proc/diskstats, /proc/net/dev, /proc/pressure, /proc/PID/io",
                      .needs = 0,
                      .option = "io-csv",
                      .option_help = "an io.csv (disks, network, pressure, the tree's bytes)",
                      .guess = RM_GUESS_PREFIX,
                      .chart = "io",
                      .drawn = true,
                      .subject = RM_SUBJECT_IO,
                      .influx = false},
    [RM_STREAM_STALL] = {.name = "stall",
                         .stem = "stall",
                         .kind = RM_INPUT_STALL_CSV,
                         .what = "/proc/PID/task/TID/schedstat and stat, the workload's cgroup",
                         .needs = RM_NEEDS_COMMAND,
                         .option = "stall-csv",
                         .option_help = "a stall.csv (the workload's run-queue wait, blocked "
                                        "threads, its cgroup's pressure)",
                         .guess = RM_GUESS_PREFIX,
                         .chart = "io",
                         .drawn = false,
                         .subject = RM_SUBJECT_STALLS,
                         .influx = false},
};

const char *const rm_apps_cols[RM_APPS_COL_COUNT + 1] = {
    [RM_APPS_COL_TS] = "ts",           [RM_APPS_COL_GPU] = "gpu",
    [RM_APPS_COL_UUID] = "uuid",       [RM_APPS_COL_PID] = "pid",
    [RM_APPS_COL_PROCESS] = "process", [RM_APPS_COL_VRAM] = "vram_mb",
    [RM_APPS_COL_SM] = "sm_pct",       [RM_APPS_COL_IN_WORKLOAD] = "in_workload",
    [RM_APPS_COL_COUNT] = NULL,
};

const struct rm_input_def rm_input_defs[RM_INPUT_COUNT] = {
    [RM_INPUT_GPU_CSV] = {"gpu_csv", RM_STREAM_GPU, false},
    [RM_INPUT_DMON_TEXT] = {"dmon_text", RM_STREAM_DMON, true},
    [RM_INPUT_DMON_CSV] = {"dmon_csv", RM_STREAM_DMON, false},
    [RM_INPUT_CPU_CSV] = {"cpu_csv", RM_STREAM_CPU, false},
    [RM_INPUT_PROC_CSV] = {"proc_csv", RM_STREAM_PROC, false},
    [RM_INPUT_APPS_CSV] = {"apps_csv", RM_STREAM_APPS, false},
    [RM_INPUT_IO_CSV] = {"io_csv", RM_STREAM_IO, false},
    [RM_INPUT_PMON_TEXT] = {"pmon_text", RM_STREAM_APPS, true},
    [RM_INPUT_COMPUTE_APPS] = {"compute_apps_csv", RM_STREAM_APPS, false},
    [RM_INPUT_ACCOUNTED_APPS] = {"accounted_apps_csv", RM_STREAM_APPS, false},
    [RM_INPUT_STALL_CSV] = {"stall_csv", RM_STREAM_STALL, false},
};

int rm_stream_of_subject(enum rm_stream_subject part)
{
    for (int i = 0; i < RM_STREAM_COUNT; i++)
        if (part != RM_SUBJECT_NONE && rm_stream_defs[i].subject == part) return i;
    return -1;
}

unsigned rm_streams_influx(void)
{
    unsigned set = 0;
    for (int i = 0; i < RM_STREAM_COUNT; i++)
        if (rm_stream_defs[i].influx) set |= 1u << i;
    return set;
}

int rm_stream_by_name(const char *name)
{
    for (int i = 0; i < RM_STREAM_COUNT; i++)
        if (!strcmp(name, rm_stream_defs[i].name)) return i;
    return -1;
}

int rm_input_by_name(const char *name)
{
    for (int i = 0; i < RM_INPUT_COUNT; i++)
        if (!strcmp(name, rm_input_defs[i].name)) return i;
    return -1;
}

enum rm_input_kind rm_input_of_stream(int stream, int c)
{
    if (c == '#' || c == EOF)
        for (int i = 0; i < RM_INPUT_COUNT; i++)
            if ((int)rm_input_defs[i].stream == stream && rm_input_defs[i].hash_first)
                return (enum rm_input_kind)i;
    return rm_stream_defs[stream].kind;
}

bool rm_stream_sniffed(int stream)
{
    for (int i = 0; i < RM_INPUT_COUNT; i++)
        if ((int)rm_input_defs[i].stream == stream && rm_input_defs[i].hash_first) return true;
    return false;
}

int rm_stream_guess(const char *base)
{
    int fallback = -1;
    for (int i = 0; i < RM_STREAM_COUNT; i++)
        if (rm_stream_defs[i].guess == RM_GUESS_ANYWHERE && strstr(base, rm_stream_defs[i].stem))
            return i;
    for (int i = 0; i < RM_STREAM_COUNT; i++) {
        const char *stem = rm_stream_defs[i].stem;
        if (rm_stream_defs[i].guess == RM_GUESS_PREFIX && !strncmp(base, stem, strlen(stem)))
            return i;
        if (rm_stream_defs[i].guess == RM_GUESS_DEFAULT) fallback = i;
    }
    return fallback;
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
