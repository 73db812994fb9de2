/* One consistent picture of a recording for the exporters (record/snapshot.h). */
#include "record/snapshot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rm_time.h"
#include "monitor/policy.h"

int rm_snapshot_source_init(struct rm_snapshot_source *src, const struct rm_port *port,
                            int have_command, const char *runlog)
{
    memset(src, 0, sizeof *src);
    src->port = port;
    src->have_command = have_command;
    if (!runlog) return 0;
    src->phases = malloc(sizeof *src->phases);
    if (!src->phases) return -1;
    rm_phase_follow_init(src->phases, runlog, 1);
    return 0;
}

void rm_snapshot_source_fini(struct rm_snapshot_source *src)
{
    if (src->phases) {
        rm_phase_follow_fini(src->phases);
        free(src->phases);
    }
    src->phases = NULL;
}

void rm_snapshot_take(struct rm_snapshot *out, struct rm_snapshot_source *src, int64_t mono_ns,
                      int final)
{
    const struct rm_port *port = src->port;
    const struct rm_session *s = port->sess;
    struct rm_phase_follow *pf = src->phases;
    if (pf) rm_phase_follow_poll(pf);
    out->final = final;
    out->mono_ns = mono_ns;
    out->now_ns = rm_now_realtime_ns();
    out->host = s->host;
    out->session = s->id;
    out->dir = s->dir;
    out->driver_version = s->driver_version;
    out->started_ns = s->started_ns;
    out->interval_s = port->interval_s;
    out->stale_ns = rm_stale_after_ns((int64_t)llround(port->interval_s * 1e9));
    out->have_command = src->have_command;
    out->phase = pf ? rm_phase_follow_current(pf) : NULL;
    out->done = pf ? pf->done : NULL;
    out->ndone = pf ? pf->ndone : 0;

    pthread_mutex_lock(port->lock);
    out->latest = *port->latest;
    for (int c = 0; c < RM_STREAM_COUNT; c++) {
        out->health[c] = s->collectors[c].health;
        out->collector[c] = s->collectors[c].name;
    }
    out->status = s->status ? s->status : "running";
    out->stop_signal = s->stop_signal;
    out->warn_pct = s->warn_pct;
    out->crit_pct = s->crit_pct;
    pthread_mutex_unlock(port->lock);
    /* The inventory is taken on this thread before the collectors start: no lock needed. */
    memset(out->gpu_uuid, 0, sizeof out->gpu_uuid);
    out->ngpus = s->ngpus;
    for (int i = 0; i < s->ngpus && i < RM_MAX_GPUS; i++) {
        int idx = s->gpus[i].index;
        if (idx >= 0 && idx < RM_MAX_GPUS) out->gpu_uuid[idx] = s->gpus[i].uuid;
    }
}

static enum rm_prom_health prom_health(enum rm_health h)
{
    switch (h) {
    case RM_HEALTH_HEALTHY:
        return RM_PROM_UP;
    case RM_HEALTH_DISABLED:
        return RM_PROM_DISABLED;
    default:
        return RM_PROM_DOWN;
    }
}

void rm_snapshot_prom_input(const struct rm_snapshot *snap, double period_s,
                            struct rm_prom_input *in)
{
    *in = (struct rm_prom_input){
        .host = snap->host,
        .session = snap->session,
        .driver_version = snap->driver_version,
        .status = snap->status,
        .latest = &snap->latest,
        .ngpus_inventory = RM_MAX_GPUS,
        .phase = snap->phase,
        .now_ns = snap->now_ns,
        .stale_ns = snap->stale_ns,
        .have_command = snap->have_command,
        .final = snap->final,
        .done = snap->done,
        .ndone = snap->ndone,
        .interval_s = snap->interval_s,
        .period_s = period_s,
        .warn_ratio = snap->warn_pct / 100.0,
        .crit_ratio = snap->crit_pct / 100.0,
    };
    memcpy(in->inventory_uuid, snap->gpu_uuid, sizeof in->inventory_uuid);
    for (int c = 0; c < RM_STREAM_COUNT; c++)
        in->collector[c] = prom_health(snap->health[c]);
}
