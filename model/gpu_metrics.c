#include "model/gpu_metrics.h"

#include <string.h>

const struct rm_gpu_metric_def rm_gpu_metrics[RM_GM_COUNT] = {
    [RM_GM_UTIL] = {"util", "utilization.gpu", NULL, {"sm", NULL}, "%"},
    [RM_GM_MEMUTIL] = {"memutil", "utilization.memory", NULL, {"mem", NULL}, "%"},
    [RM_GM_VRAM_USED] = {"vram_used", "memory.used", NULL, {"fb", NULL}, "MiB"},
    [RM_GM_VRAM_TOTAL] = {"vram_total", "memory.total", NULL, {NULL, NULL}, "MiB"},
    [RM_GM_POWER] = {"power", "power.draw", NULL, {"pwr", NULL}, "W"},
    [RM_GM_TEMP] = {"temp", "temperature.gpu", NULL, {"gtemp", "temp"}, "C"},
    [RM_GM_SMCLK] = {"smclk", "clocks.current.sm", "clocks.sm", {"pclk", NULL}, "MHz"},
    [RM_GM_MEMCLK] = {"memclk", "clocks.current.memory", "clocks.mem", {"mclk", NULL}, "MHz"},
};

static int same(const char *name, const char *s, size_t len)
{
    return name && strlen(name) == len && !memcmp(name, s, len);
}

int rm_gpu_metric_by_query_field(const char *s, size_t len)
{
    for (int m = 0; m < RM_GM_COUNT; m++)
        if (same(rm_gpu_metrics[m].query_field, s, len) ||
            same(rm_gpu_metrics[m].query_alias, s, len))
            return m;
    return -1;
}

int rm_gpu_metric_by_dmon_column(const char *s, size_t len)
{
    for (int m = 0; m < RM_GM_COUNT; m++)
        if (same(rm_gpu_metrics[m].dmon_column[0], s, len) ||
            same(rm_gpu_metrics[m].dmon_column[1], s, len))
            return m;
    return -1;
}
