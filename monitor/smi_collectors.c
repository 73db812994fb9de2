#include "monitor/smi_collectors.h"

#include "monitor/apps_collector.h"
#include "monitor/gpu_collectors.h"

/* In the order they start: their files appear in the session folder in this order. */
const struct rm_smi_collector *const rm_smi_collectors[] = {&rm_gpu_collector, &rm_dmon_collector,
                                                            &rm_apps_collector};
const int rm_smi_ncollectors = (int)(sizeof rm_smi_collectors / sizeof *rm_smi_collectors);

unsigned rm_smi_collectors_off(const struct rm_smi_start *st)
{
    unsigned off = 0;
    for (int i = 0; i < rm_smi_ncollectors; i++) {
        const struct rm_smi_collector *c = rm_smi_collectors[i];
        if (c->wanted && !c->wanted(st)) off |= 1u << c->stream;
    }
    return off;
}

void rm_smi_select_gpus(struct rm_collector *c, const struct rm_smi_start *st)
{
    if (!st->gpu_ids || !st->gpu_ids[0]) return;
    size_t n = 0, cap = sizeof c->argv / sizeof *c->argv;
    while (n < cap && c->argv[n])
        n++;
    if (n + 2 >= cap) return; /* no room: never cut the terminating NULL */
    c->argv[n] = "-i";
    c->argv[n + 1] = st->gpu_ids;
    c->argv[n + 2] = NULL;
}
