/* The CPU sampler: /proc/stat, /proc/meminfo and the command's process tree on an
 * absolute CLOCK_MONOTONIC schedule (clock_nanosleep TIMER_ABSTIME), so the period never
 * drifts; rows stamped with CLOCK_REALTIME into cpu.csv and proc.csv. */
#ifndef RUNMON_CPU_SAMPLER_H
#define RUNMON_CPU_SAMPLER_H

#include <pthread.h>
#include <stdint.h>

#include "monitor/procfs.h"
#include "monitor/stream.h"
#include "monitor/workload.h"

struct rm_port;
struct rm_proc_sampler;

#define RM_MAX_CPUS 1024

struct rm_proc_tick;

struct rm_cpu_sampler {
    const struct rm_port *port;
    struct rm_procfs *procfs;
    struct rm_stream cpu, proc;
    int per_cpu;
    int64_t interval_ns;
    int64_t started_mono_ns; /* when rm_cpu_sampler_begin ran: before the command existed */
    /* The schedule: slot k is due at start_mono_ns + k x interval_ns. */
    int64_t start_mono_ns, slot, worst_late_ns;
    int64_t no_root_ns;                 /* the last sample time at which no command ran */
    struct rm_workload_reader workload; /* the workload's pids (monitor/workload.h) */
    struct rm_proc_tick *tick;          /* where its walk is published (NULL: nowhere) */
    struct rm_cpu_pct percpu[RM_MAX_CPUS];
    int cpu_ids[RM_MAX_CPUS];
};

/* Opens the /proc root and the two files. 0, or -1 with a message in err. */
int rm_cpu_sampler_open(struct rm_cpu_sampler *s, const struct rm_port *port, const char *proc_root,
                        int per_cpu, int with_proc, char *err, size_t errsz);
/* It has no thread of its own: a tick runs it (monitor/ticker.h; the collectors' thread, or
 * without one rm_ticker_thread's). begin takes the baseline and starts the schedule at
 * start_mono (now, before the command exists); due is the next slot (CLOCK_MONOTONIC); tick,
 * called at or after it, samples and moves to the next slot (skipping the missed ones). */
void rm_cpu_sampler_begin(struct rm_cpu_sampler *s, int64_t start_mono);
int64_t rm_cpu_sampler_due(const struct rm_cpu_sampler *s);
void rm_cpu_sampler_tick(struct rm_cpu_sampler *s, int64_t now);
/* Closes the files, once the ticking thread has stopped. */
void rm_cpu_sampler_stop(struct rm_cpu_sampler *s);

/* Its row of the /proc samplers' table (monitor/proc_samplers.h): cpu.csv, and proc.csv
 * when a command runs. */
extern const struct rm_proc_sampler rm_cpu_sampler_row;

#endif
