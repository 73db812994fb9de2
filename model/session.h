/* A recording session's facts, as the workers, the sink and the summary know them. The data
 * only: writing session.json is sink/session.h's job. */
#ifndef RUNMON_MODEL_SESSION_H
#define RUNMON_MODEL_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/job.h"
#include "model/streams.h"
#include "model/workload.h"

#define RM_MAX_GPUS 64

enum rm_health { RM_HEALTH_HEALTHY, RM_HEALTH_DEGRADED, RM_HEALTH_UNAVAILABLE, RM_HEALTH_DISABLED };
extern const char *const rm_health_names[];

struct rm_collector_health {
    const char *name;
    enum rm_health health;
    uint64_t failure_event_count;
    uint64_t nonconforming_lines;
    uint64_t arrival_ts_rows; /* rows stamped with their arrival time (monitor/policy.h) */
    char last_error[512];
};

struct rm_gpu_info {
    int index;
    char uuid[96];
    char name[128];
    char pci_bus_id[32];
    double memory_total_mb; /* NaN when nvidia-smi did not report it */
};

/* How the recorded GPUs were chosen (monitor/gpu_select.h): session.json's gpu_selection. */
#define RM_GPU_CHOICE_WARNINGS 4
struct rm_gpu_choice {
    char by[32];     /* the variable that decided, "--all-gpus", or "" (nothing named them) */
    char value[512]; /* what it held */
    int visible;     /* how many GPUs nvidia-smi showed */
    char warning[RM_GPU_CHOICE_WARNINGS][512];
    int nwarnings;
};

struct rm_session {
    char id[160];
    char dir[PATH_MAX];
    char host[256];
    pid_t pid;
    int64_t started_ns, ended_ns; /* CLOCK_REALTIME; ended 0 while running */
    char *const *command;         /* NULL when recording without a command */
    const char *sweep;            /* the sweep it belongs to, or NULL */
    const char *params_json;      /* its parameters: a JSON object's text, or NULL (none) */
    int exit_code;                /* -1 until known */
    const char *status;           /* running, completed, failed, interrupted */
    int stop_signal;              /* the signal that stopped the run (interrupted), 0 when none */
    char command_error[96];       /* the command never ran: "command not found", ...; "" */
    double interval_s;
    const char *gpu_fields;
    const char *dmon_metrics;
    int dmon_interval_s;
    double warn_pct, crit_pct;
    struct rm_gpu_info gpus[RM_MAX_GPUS];
    int ngpus;
    char driver_version[64];
    /* The power fields probe (model/energy.h's rm_power_fields): whether it ran, which fields
     * the driver knows (a valid query field) and which gave a number on some GPU. */
    int power_probed;
    unsigned power_known, power_supported;
    /* Asked in the same query: bit i set when rm_gpu_clock_fields[i] (clocks.max.sm, the
     * throttle reasons' mask) gave a value on some GPU, so the default fields record it. */
    unsigned clock_supported;
    struct rm_gpu_choice gpu_choice;
    struct rm_job job;           /* the batch job it runs in (job.known 0: none) */
    struct rm_workload workload; /* who the workload is: session.json's "workload" */
    struct rm_collector_health collectors[RM_STREAM_COUNT]; /* by stream: one collector each */
    int64_t max_sample_lateness_ns; /* the CPU sampler's worst distance from its schedule */
    uint64_t cpu_samples;
};

/* Names each collector and sets its health before it starts: disabled when what its stream
 * needs (rm_stream_defs[].needs) is missing: gpu false (record --no-gpu), command false (no
 * command recorded), or its bit (1u << stream) set in off (the stream's own --no-X option). */
void rm_session_init_collectors(struct rm_session *s, bool gpu, bool command, unsigned off);

/* A session's status for people: "interrupted (SIGTERM)" when a signal stopped it (sig > 0),
 * else the status as it is. Returns buf. */
const char *rm_session_status_text(char *buf, size_t cap, const char *status, long long sig);

#endif
