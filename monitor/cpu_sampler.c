#include "monitor/cpu_sampler.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/rm_time.h"
#include "monitor/port.h"
#include "monitor/proc_samplers.h"

static const char *const cpu_cols[] = {
    "cpu",         "usr_pct",   "nice_pct", "sys_pct",      "iowait_pct",       "irq_pct",
    "softirq_pct", "steal_pct", "idle_pct", "mem_total_mb", "mem_available_mb", "mem_used_mb"};
static const char *const proc_cols[] = {"root_pid", "nprocs", "rss_mb", "cpu_pct"};

int rm_cpu_sampler_open(struct rm_cpu_sampler *s, const struct rm_port *port, const char *proc_root,
                        int per_cpu, int with_proc, char *err, size_t errsz)
{
    memset(s, 0, sizeof *s);
    s->port = port;
    s->per_cpu = per_cpu;
    s->cpu.fd = s->proc.fd = -1;
    s->interval_ns = (int64_t)llround(port->interval_s * 1e9);
    s->procfs = rm_procfs_open(proc_root, err, errsz);
    if (!s->procfs) return -1;
    rm_workload_reader_init(&s->workload, port, s->procfs);
    const char *dir = port->sess->dir;
    if (rm_stream_open(&s->cpu, dir, RM_STREAM_CPU) < 0 ||
        rm_stream_header(&s->cpu, cpu_cols, (int)(sizeof cpu_cols / sizeof *cpu_cols)) < 0) {
        snprintf(err, errsz, "cannot write %s/cpu.csv: %s", dir, strerror(errno));
        return -1;
    }
    if (with_proc && (rm_stream_open(&s->proc, dir, RM_STREAM_PROC) < 0 ||
                      rm_stream_header(&s->proc, proc_cols, 4) < 0)) {
        snprintf(err, errsz, "cannot write %s/proc.csv: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static void put_pct(struct rm_stream *st, const char *cpu, const struct rm_cpu_pct *p)
{
    rm_stream_field_str(st, cpu);
    double v[] = {p->usr, p->nice, p->sys, p->iowait, p->irq, p->softirq, p->steal, p->idle};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        rm_stream_field_double(st, v[i], 2);
}

/* proc.csv's row: the workload's processes (monitor/workload.h). */
static void proc_row(struct rm_cpu_sampler *s, int64_t ts, const struct rm_tree_sample *t)
{
    pid_t root = rm_workload_root(s->workload.w, (pid_t)atomic_load(s->port->workload_pid));
    rm_stream_begin_row(&s->proc, ts);
    if (root > 0)
        rm_stream_field_u64(&s->proc, (uint64_t)root);
    else /* a cgroup has no root: unknown, never 0 */
        rm_stream_field(&s->proc, "", 0);
    rm_stream_field_u64(&s->proc, (uint64_t)t->nprocs);
    rm_stream_field_double(&s->proc, (double)t->rss_bytes / (1024.0 * 1024.0), 2);
    rm_stream_field_double(&s->proc, t->cpu_pct, 2);
    rm_stream_end_row(&s->proc);
    rm_stream_flush(&s->proc);
    if (s->port->latest) { /* for the exporters */
        pthread_mutex_lock(s->port->lock);
        s->port->latest->proc_valid = t->nprocs > 0;
        s->port->latest->proc_ts_ns = ts;
        s->port->latest->proc_rss_bytes = (double)t->rss_bytes;
        s->port->latest->proc_cpu_ratio = t->cpu_pct / 100.0;
        pthread_mutex_unlock(s->port->lock);
    }
}

/* *no_root_ns: the last sample time at which no command ran (-1: unknown), the baseline of
 * the command's first row. */
static void sample(struct rm_cpu_sampler *s, int64_t mono, int64_t *no_root_ns)
{
    struct rm_cpu_pct all;
    int n = 0;
    int64_t ts = rm_now_realtime_ns();
    int rc = rm_procfs_cpu_sample(s->procfs, &all, s->per_cpu ? s->percpu : NULL,
                                  s->per_cpu ? s->cpu_ids : NULL, s->per_cpu ? RM_MAX_CPUS : 0, &n);
    if (rc == 0) {
        struct rm_mem mem;
        int have_mem = rm_procfs_read_mem(s->procfs, &mem) == 0;
        rm_stream_begin_row(&s->cpu, ts);
        put_pct(&s->cpu, "all", &all);
        if (have_mem) {
            rm_stream_field_double(&s->cpu, rm_kib_to_mib(mem.total_kib), 2);
            rm_stream_field_double(&s->cpu, rm_kib_to_mib(mem.avail_kib), 2);
            rm_stream_field_double(&s->cpu, rm_kib_to_mib(rm_mem_used_kib(&mem)), 2);
        } else {
            for (int i = 0; i < 3; i++)
                rm_stream_field(&s->cpu, "", 0);
        }
        rm_stream_end_row(&s->cpu);
        for (int i = 0; i < n; i++) {
            char name[24];
            snprintf(name, sizeof name, "cpu%d", s->cpu_ids[i]);
            rm_stream_begin_row(&s->cpu, ts);
            put_pct(&s->cpu, name, &s->percpu[i]);
            for (int k = 0; k < 3; k++)
                rm_stream_field(&s->cpu, "", 0);
            rm_stream_end_row(&s->cpu);
        }
        rm_stream_flush(&s->cpu);
        pthread_mutex_lock(s->port->lock);
        s->port->sess->cpu_samples++;
        struct rm_latest *l = s->port->latest; /* for the exporters (NULL: none is on) */
        if (l) {
            l->cpu_valid = 1;
            l->cpu_ts_ns = ts;
            l->cpu_busy_ratio = (all.usr + all.nice + all.sys + all.irq + all.softirq) / 100.0;
            l->cpu_iowait_ratio = all.iowait / 100.0;
            l->mem_used_bytes = have_mem ? (double)rm_mem_used_kib(&mem) * 1024.0 : NAN;
            l->mem_total_bytes = have_mem ? (double)mem.total_kib * 1024.0 : NAN;
        }
        pthread_mutex_unlock(s->port->lock);
    }
    if (s->proc.fd < 0) return;
    struct rm_tree_sample t;
    int got = rm_workload_sample(&s->workload, mono, *no_root_ns, &t);
    if (s->tick) /* the rows after it at this slot read the same walk */
        *s->tick = (struct rm_proc_tick){s->tick->run, s->tick->run, s->procfs, got};
    if (got != 0)
        *no_root_ns = mono; /* no workload now: the baseline of its first row */
    else
        proc_row(s, ts, &t);
}

void rm_cpu_sampler_begin(struct rm_cpu_sampler *s, int64_t now)
{
    s->started_mono_ns = now;
    s->start_mono_ns = now;
    /* The command starts after this returned (the recorder spawns it then): its tree had 0
     * ticks at that instant, so its first row counts from there, not from its second sample,
     * even when the first slot is served after the command started. */
    s->no_root_ns = now;
    s->slot = 1;
    s->worst_late_ns = 0;
    /* The first read only sets the baseline: percentages need two samples. */
    struct rm_cpu_pct dummy;
    int n;
    rm_procfs_cpu_sample(s->procfs, &dummy, s->per_cpu ? s->percpu : NULL,
                         s->per_cpu ? s->cpu_ids : NULL, s->per_cpu ? RM_MAX_CPUS : 0, &n);
}

int64_t rm_cpu_sampler_due(const struct rm_cpu_sampler *s)
{
    return s->start_mono_ns + s->slot * s->interval_ns;
}

void rm_cpu_sampler_tick(struct rm_cpu_sampler *s, int64_t now)
{
    int64_t late = now - rm_cpu_sampler_due(s);
    if (late > s->worst_late_ns) {
        s->worst_late_ns = late;
        pthread_mutex_lock(s->port->lock);
        s->port->sess->max_sample_lateness_ns = late;
        pthread_mutex_unlock(s->port->lock);
    }
    sample(s, now, &s->no_root_ns);
    s->slot++;
    /* Asleep (suspend) or starved for more than a period: skip the missed slots rather than
     * firing a burst of samples; the schedule stays on the same grid. */
    int64_t after = rm_now_monotonic_ns();
    if (after > rm_cpu_sampler_due(s)) s->slot = (after - s->start_mono_ns) / s->interval_ns + 1;
}

void rm_cpu_sampler_stop(struct rm_cpu_sampler *s)
{
    rm_stream_close(&s->cpu);
    if (s->proc.buf) rm_stream_close(&s->proc);
    rm_workload_reader_fini(&s->workload);
    if (s->tick) s->tick->procfs = NULL; /* a later row's stop walks on its own */
    rm_procfs_close(s->procfs);
    s->procfs = NULL;
}

/* ---- its row of monitor/proc_samplers.h ---------------------------------------------- */

static int row_open(void *ctx, const struct rm_proc_start *st, char *err, size_t errsz)
{
    struct rm_cpu_sampler *s = ctx;
    int rc = rm_cpu_sampler_open(s, st->port, st->o->proc_root, st->o->per_cpu, st->with_command,
                                 err, errsz);
    s->tick = st->tick;
    return rc;
}

static int row_outs(void *ctx, struct rm_stream **out)
{
    struct rm_cpu_sampler *s = ctx;
    int n = 0;
    out[n++] = &s->cpu;
    if (s->proc.buf) out[n++] = &s->proc;
    return n;
}

static void row_begin(void *ctx, int64_t grid_mono)
{
    rm_cpu_sampler_begin(ctx, grid_mono);
}

static int64_t row_due(const void *ctx)
{
    return rm_cpu_sampler_due(ctx);
}

static void row_tick(void *ctx, int64_t now)
{
    rm_cpu_sampler_tick(ctx, now);
}

static void row_stop(void *ctx)
{
    struct rm_cpu_sampler *s = ctx;
    if (s->procfs) rm_cpu_sampler_stop(s); /* not after an open that failed */
}

const struct rm_proc_sampler rm_cpu_sampler_row = {
    .name = "cpu",
    .streams = 1u << RM_STREAM_CPU | 1u << RM_STREAM_PROC,
    .ctx_size = sizeof(struct rm_cpu_sampler),
    .batch = true,
    .open = row_open,
    .outs = row_outs,
    .begin = row_begin,
    .due = row_due,
    .tick = row_tick,
    .stop = row_stop,
};
