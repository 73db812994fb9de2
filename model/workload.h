/* Who the workload is: how `runmon record` was told which processes it records (session.json's
 * "workload"). The definition only; monitor/workload.h provides its pids each tick. */
#ifndef RUNMON_MODEL_WORKLOAD_H
#define RUNMON_MODEL_WORKLOAD_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

enum rm_workload_kind {
    RM_WORKLOAD_CHILD,      /* the command's process tree (the default) */
    RM_WORKLOAD_PID,        /* --pid: a running process and its tree */
    RM_WORKLOAD_CGROUP,     /* --cgroup: the processes of a cgroup and of its child cgroups */
    RM_WORKLOAD_SLURM_STEP, /* inside a SLURM step: the command's tree and the step's cgroup */
};

/* session.json's names of the kinds, by enum. */
extern const char *const rm_workload_kind_names[];

struct rm_workload {
    enum rm_workload_kind kind;
    pid_t pid;             /* PID: the process attached to */
    uint64_t starttime;    /* PID: its start time (ticks after boot), tells it from a reuse */
    char cgroup[PATH_MAX]; /* CGROUP, SLURM_STEP: the cgroup's folder */
    int cgroup_version;    /* 1 or 2 (CGROUP, SLURM_STEP) */
    char job_id[32], step_id[32]; /* SLURM_STEP: SLURM_JOB_ID, SLURM_STEP_ID */
    int ended;                    /* PID: the process exited while recorded */
};

#endif
