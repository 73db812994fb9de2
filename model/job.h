/* The batch job a session runs in, as the scheduler's environment says (SLURM today). The
 * data and its reading from an environment; writing it is sink/session.c's job. */
#ifndef RUNMON_MODEL_JOB_H
#define RUNMON_MODEL_JOB_H

/* Looks a variable up: getenv, or a table in the tests. */
typedef const char *(*rm_env_fn)(const char *name);

struct rm_job {
    int known;              /* 1 inside a SLURM job (SLURM_JOB_ID set) */
    char job_id[32];        /* SLURM_JOB_ID */
    char array_job_id[32];  /* SLURM_ARRAY_JOB_ID, "" outside an array */
    char array_task_id[32]; /* SLURM_ARRAY_TASK_ID */
    char step_id[32];       /* SLURM_STEP_ID ("batch", "0", ...) */
    char node[256];         /* SLURMD_NODENAME */
    char partition[128];    /* SLURM_JOB_PARTITION */
    char gpus[256];         /* the scheduler's GPU list: SLURM_STEP_GPUS, else SLURM_JOB_GPUS */
    int nnodes;             /* SLURM_JOB_NUM_NODES (SLURM_NNODES), -1 unknown */
    int ntasks;             /* SLURM_NTASKS, -1 unknown */
    int procid;             /* SLURM_PROCID: this task's rank, -1 unknown */
};

/* Fills job from env; job->known is 0 outside SLURM. Values that do not fit are cut. */
void rm_job_from_env(struct rm_job *job, rm_env_fn env);

#endif
