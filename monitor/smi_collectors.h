/* The collectors that run an nvidia-smi child, as one table: record/recorder.c starts each
 * row in turn and never names a stream. A new nvidia-smi collector exports its row from its
 * own file (declared in its header) and takes one line in smi_collectors.c. */
#ifndef RUNMON_MONITOR_SMI_COLLECTORS_H
#define RUNMON_MONITOR_SMI_COLLECTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/collector.h"
#include "monitor/port.h"
#include "monitor/stream.h"

/* What every nvidia-smi collector starts from (record's options, the session's folder). */
struct rm_smi_start {
    const struct rm_port *port; /* port->sess->dir is the session folder */
    const char *nvidia_smi;
    double interval_s;
    const char *gpu_fields;   /* --gpu-fields, with the probed power fields */
    const char *dmon_metrics; /* --dmon-metrics */
    const char *proc_root;    /* RUNMON_PROC_ROOT */
    bool no_apps;             /* record --no-apps */
    const char *gpu_ids;      /* nvidia-smi -i: the chosen GPUs' UUIDs; NULL or "": all */
};

struct rm_smi_collector {
    int stream;      /* RM_STREAM_*: the stream it writes */
    size_t ctx_size; /* the context start fills, zeroed by the caller */
    /* Whether this run wants it (an option may switch it off); NULL: always. */
    bool (*wanted)(const struct rm_smi_start *st);
    /* Fills ctx, opens the stream's file and sets c's argv, callbacks and ctx; the caller
     * has set up c for the stream (rm_collector_setup) and sets c->stale_ns from *period_ns.
     * 0, or -1 with the reason in err. */
    int (*start)(void *ctx, const struct rm_smi_start *st, struct rm_collector *c,
                 int64_t *period_ns, char *err, size_t errsz);
    struct rm_stream *(*out)(void *ctx); /* the stream file, for the sink */
    void (*stop)(void *ctx);             /* closes what start opened (also after a failure) */
};

extern const struct rm_smi_collector *const rm_smi_collectors[];
extern const int rm_smi_ncollectors;

/* Appends `-i st->gpu_ids` to c's argv when the run records only some GPUs (every
 * nvidia-smi child samples the same GPUs: monitor/gpu_select.h). */
void rm_smi_select_gpus(struct rm_collector *c, const struct rm_smi_start *st);

/* The streams st switches off (a bit per RM_STREAM_*): rows whose wanted() says no. */
unsigned rm_smi_collectors_off(const struct rm_smi_start *st);

#endif
