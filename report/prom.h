/* The Prometheus text exposition format (version 0.0.4, what node_exporter's textfile
 * collector reads) of a recording's latest values: pure formatting of what it is given
 * (struct rm_prom_input), so report/ calls nothing of monitor/. The writers that run while
 * recording build the input from the recorder's snapshot: the textfile is
 * record/export_prom.c.
 *
 * Missing values are left out, never written as 0; a collector that is not healthy has its
 * sample metrics removed (runmon_collector_up says 0), as do GPUs whose latest row is stale.
 *
 * The final exposition (the session has ended) keeps only the session's final status: session
 * info, collector health, the phase counters and the last sample timestamps; no sample
 * series, so a finished run's last values never look current.
 */
#ifndef RUNMON_PROM_H
#define RUNMON_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "model/session.h"
#include "monitor/latest.h"
#include "monitor/phase_follow.h"

/* Collector health as the export sees it, per collector (RM_STREAM_*, model/streams.h). */
enum rm_prom_health { RM_PROM_UP, RM_PROM_DOWN, RM_PROM_DISABLED };

/* Everything one exposition is rendered from: a consistent copy. */
struct rm_prom_input {
    const char *host, *session, *driver_version, *status;
    const struct rm_latest *latest;
    int ngpus_inventory;
    const char *inventory_uuid[RM_MAX_GPUS]; /* by GPU index; NULL if unknown */
    enum rm_prom_health collector[RM_STREAM_COUNT];
    const char *phase; /* the current phase path, NULL or "" when none is open */
    int64_t now_ns;    /* CLOCK_REALTIME */
    int64_t stale_ns;  /* a GPU row older than this is left out (0: never) */
    int have_command;  /* process metrics only with a command */
    int final;         /* the session has ended: its status, no sample series */
    /* Completed phases by path (monitor/phase_follow.h), ndone of them (done may be NULL). */
    const struct rm_pf_done *done;
    int ndone;
    /* For alert rules; each left out when <= 0. */
    double interval_s, period_s;   /* sampling interval, textfile write period */
    double warn_ratio, crit_ratio; /* VRAM thresholds (--warn-pct, --crit-pct) / 100 */
};

/* Renders the exposition into buf. Returns its length, or -1 when it did not fit (cap). */
long rm_prom_render(char *buf, size_t cap, const struct rm_prom_input *in);

/* Appends v escaped as a label value (backslash, double quote, newline) to buf at *len.
 * Returns 0, or -1 when it does not fit. */
int rm_prom_escape(char *buf, size_t cap, size_t *len, const char *v);

#endif
