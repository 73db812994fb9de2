/* Which GPUs a session records: the ones the environment names as the job's
 * (CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS, NVIDIA_VISIBLE_DEVICES, first set
 * wins), resolved against nvidia-smi's inventory once at start. Pure: the environment comes
 * through a function, the inventory and `nvidia-smi -L` text as arguments. The rules, and the
 * traps they avoid, are in docs/FORMATS.md ("gpu_selection"). */
#ifndef RUNMON_MONITOR_GPU_SELECT_H
#define RUNMON_MONITOR_GPU_SELECT_H

#include <stddef.h>

#include "model/job.h"
#include "model/session.h"

#define RM_GPU_SELECT_WARNINGS 4

struct rm_gpu_selection {
    char by[32];          /* the variable that decided, "--all-gpus", or "" (none set) */
    char value[512];      /* what it held (cut at 511 bytes) */
    int pos[RM_MAX_GPUS]; /* the chosen GPUs: positions in the inventory, in its order */
    int n;
    int all; /* every GPU nvidia-smi shows is kept (no -i needed) */
    char warning[RM_GPU_SELECT_WARNINGS][512];
    int nwarnings;
};

/* 1 when the deciding variable names a MIG instance by its MIG-<uuid>: resolving it to its
 * GPU needs `nvidia-smi -L` (list_text below). */
int rm_gpu_select_needs_list(rm_env_fn env, int all_gpus);

/* Chooses among gpus[0..ngpus) (nvidia-smi's inventory, its order). list_text: the output of
 * `nvidia-smi -L`, or NULL. Never fails: what cannot be resolved is named in a warning and
 * the choice falls back as FORMATS.md says. */
void rm_gpu_select(const struct rm_gpu_info *gpus, int ngpus, int all_gpus, rm_env_fn env,
                   const char *list_text, struct rm_gpu_selection *sel);

/* The `-i` argument for nvidia-smi: the chosen GPUs' UUIDs, comma separated (their indices
 * where a UUID is missing). "" when every GPU is kept. Returns -1 if it does not fit. */
int rm_gpu_select_ids(const struct rm_gpu_selection *sel, const struct rm_gpu_info *gpus, char *buf,
                      size_t cap);

#endif
