/* State shared by the threads of one `runmon record` session. */
#ifndef RUNMON_RECORDER_H
#define RUNMON_RECORDER_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "monitor/prom.h"
#include "monitor/session.h"

struct rm_runlog;
struct rm_sink;

struct rm_record_opts {
    const char *output_dir;
    double interval_s;
    const char *gpu_fields;
    const char *dmon_metrics;
    const char *nvidia_smi;
    int no_gpu;
    int per_cpu;
    int quiet;
    double warn_pct, crit_pct;
    double duration_s; /* 0: until a signal (or the command's end) */
    char *const *command;
    const char *proc_root;
    const char *prom_textfile; /* --prom-textfile PATH, NULL: no export */
    /* The telemetry sink (monitor/sink.h). */
    double flush_s;            /* --flush-seconds: fdatasync + manifest at least this often */
    double rollover_mb;        /* --rollover-mb: seal the active file at this size (0: never) */
    int retention_files;       /* --retention-files: sealed segments kept per stream (0: all) */
    double retention_total_mb; /* --retention-total-mb: retained bytes in the sink (0: all) */
};

struct rm_recorder {
    struct rm_record_opts opts;
    struct rm_session sess;
    struct rm_runlog *log;
    struct rm_sink *sink; /* NULL when the sink could not be opened */
    /* Guards sess.collectors against the writers of session.json. */
    pthread_mutex_t lock;
    atomic_int stop;
    atomic_int workload_pid; /* 0 until the command runs; read by the CPU sampler */
    /* The latest value of each GPU, the CPU and the command's tree (monitor/prom.h), for
     * the Prometheus export; written by the collector threads, under lock. */
    struct rm_latest latest;
};

/* Writes {"type":"event","event":name,"data":data} to the session's run log. Takes
 * ownership of data (may be NULL). Safe from any thread; a failure is counted, not fatal. */
void rm_recorder_event(struct rm_recorder *r, const char *name, json_t *data);

/* Updates one collector's health under the lock. last_error may be NULL (kept as is). */
void rm_recorder_set_health(struct rm_recorder *r, int collector, enum rm_health h,
                            const char *last_error, int count_failure);

#endif
