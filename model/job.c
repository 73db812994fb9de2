#include "model/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void take(char *dst, size_t cap, rm_env_fn env, const char *name)
{
    const char *v = env(name);
    snprintf(dst, cap, "%s", v ? v : "");
}

/* A count: a positive decimal number, else -1 (SLURM_NTASKS may be absent in an sbatch). */
static int count(rm_env_fn env, const char *name)
{
    const char *v = env(name);
    if (!v || !*v) return -1;
    char *end;
    long n = strtol(v, &end, 10);
    return (*end || n < 0 || n > 1000000000L) ? -1 : (int)n;
}

void rm_job_from_env(struct rm_job *job, rm_env_fn env)
{
    memset(job, 0, sizeof *job);
    job->nnodes = job->ntasks = job->procid = -1;
    const char *id = env("SLURM_JOB_ID");
    if (!id || !*id) return;
    job->known = 1;
    take(job->job_id, sizeof job->job_id, env, "SLURM_JOB_ID");
    take(job->array_job_id, sizeof job->array_job_id, env, "SLURM_ARRAY_JOB_ID");
    take(job->array_task_id, sizeof job->array_task_id, env, "SLURM_ARRAY_TASK_ID");
    take(job->step_id, sizeof job->step_id, env, "SLURM_STEP_ID");
    take(job->node, sizeof job->node, env, "SLURMD_NODENAME");
    take(job->partition, sizeof job->partition, env, "SLURM_JOB_PARTITION");
    const char *step_gpus = env("SLURM_STEP_GPUS");
    take(job->gpus, sizeof job->gpus, env,
         step_gpus && *step_gpus ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS");
    job->nnodes = count(env, "SLURM_JOB_NUM_NODES");
    if (job->nnodes < 0) job->nnodes = count(env, "SLURM_NNODES");
    job->ntasks = count(env, "SLURM_NTASKS");
    job->procid = count(env, "SLURM_PROCID");
}
