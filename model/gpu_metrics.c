#include "model/gpu_metrics.h"

#include <string.h>

/* Its Prometheus gauge: name, help, the scale from the unit to the family's. */
#define PROM(n, h, k) .prom = {(n), (h), (k)}

const struct rm_gpu_metric_def rm_gpu_metrics[RM_GM_COUNT] = {
    [RM_GM_UTIL] = {"util",
                    "utilization.gpu",
                    NULL,
                    {"sm", NULL},
                    "%",
                    PROM("runmon_gpu_utilization_ratio",
                         "GPU utilization (utilization.gpu), 0 to 1.", 0.01)},
    [RM_GM_MEMUTIL] = {"memutil",
                       "utilization.memory",
                       NULL,
                       {"mem", NULL},
                       "%",
                       PROM("runmon_gpu_memory_utilization_ratio",
                            "GPU memory controller utilization (utilization.memory), 0 to 1.",
                            0.01)},
    [RM_GM_VRAM_USED] = {"vram_used",
                         "memory.used",
                         NULL,
                         {"fb", NULL},
                         "MiB",
                         PROM("runmon_gpu_memory_used_bytes", "GPU memory in use (memory.used).",
                              1048576.0)},
    [RM_GM_VRAM_TOTAL] = {"vram_total",
                          "memory.total",
                          NULL,
                          {NULL, NULL},
                          "MiB",
                          PROM("runmon_gpu_memory_total_bytes", "GPU memory in all (memory.total).",
                               1048576.0)},
    [RM_GM_POWER] = {"power",
                     "power.draw",
                     NULL,
                     {"pwr", NULL},
                     "W",
                     PROM("runmon_gpu_power_watts", "GPU power draw (power.draw).", 1.0)},
    [RM_GM_TEMP] = {"temp",
                    "temperature.gpu",
                    NULL,
                    {"gtemp", "temp"},
                    "C",
                    PROM("runmon_gpu_temperature_celsius",
                         "GPU core temperature (temperature.gpu).", 1.0)},
    [RM_GM_SMCLK] = {"smclk",
                     "clocks.current.sm",
                     "clocks.sm",
                     {"pclk", NULL},
                     "MHz",
                     PROM("runmon_gpu_sm_clock_hertz", "GPU SM clock (clocks.current.sm).", 1e6)},
    [RM_GM_MEMCLK] = {"memclk",
                      "clocks.current.memory",
                      "clocks.mem",
                      {"mclk", NULL},
                      "MHz",
                      PROM("runmon_gpu_memory_clock_hertz",
                           "GPU memory clock (clocks.current.memory).", 1e6)},
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
