#include "model/workload.h"

const char *const rm_workload_kind_names[] = {"child", "pid", "cgroup", "slurm_step"};
