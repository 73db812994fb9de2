/* The one provider of the workload's pids (model/workload.h says who the workload is). Every
 * sampler that looks at the workload's processes (the tree's CPU and RSS in proc.csv, its
 * I/O in io.csv, apps.csv's in_workload, the stalls) asks it, each tick, through a reader of
 * its own:
 *
 *     struct rm_workload_reader r;
 *     rm_workload_reader_init(&r, port, procfs);          // procfs: the sampler's own handle
 *     ...each tick:
 *     struct rm_tree_member m[N];
 *     size_t n = rm_workload_pids(&r, now_mono, m, N);    // may exceed N: then grow and ask
 *                                                          // rm_procfs_tree_members again
 *     ...
 *     rm_workload_reader_fini(&r);
 *
 * What the pids are, by kind: child, the recorded command's tree (root: port->workload_pid,
 * 0 before it starts and after it ends); pid, the attached process's tree; cgroup, the pids
 * in cgroup.procs of the cgroup and of every cgroup below it (v1 or v2), re-read each tick;
 * slurm_step, the command's tree and the step cgroup's pids. The recorder's own processes
 * (runmon, its nvidia-smi children) are never the workload's. One reader belongs to one thread.
 */
#ifndef RUNMON_MONITOR_WORKLOAD_H
#define RUNMON_MONITOR_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/workload.h"
#include "monitor/port.h"
#include "monitor/procfs.h"

struct rm_workload_reader {
    const struct rm_workload *w; /* port->workload; NULL: the command's tree */
    atomic_int *command;         /* the command's pid (port->workload_pid), may be NULL */
    struct rm_procfs *procfs;    /* the sampler's own /proc handle (not owned) */
    int32_t *cg;                 /* the cgroup's pids, read each tick */
    size_t ncg, cgcap;
    int32_t self;             /* the recorder's pid, in the /proc tree's view */
    pid_t cmd_ours, cmd_view; /* the command's pid in our namespace, and in the tree's */
};

void rm_workload_reader_init(struct rm_workload_reader *r, const struct rm_port *port,
                             struct rm_procfs *procfs);
void rm_workload_reader_fini(struct rm_workload_reader *r);

/* A pid of our PID namespace (a child we forked) as the /proc tree at proc_fd names it: the
 * same pid, unless that tree is another namespace's procfs (runmon in a container that sees
 * the host's /proc, where the driver's pids live): then the process whose /proc/PID/status
 * NSpid line ends with pid at our depth, found by a scan (0: none). */
pid_t rm_pid_in_proc_view(int proc_fd, pid_t pid);

/* The root of the workload's tree now: the command (child, slurm_step), the attached process
 * (pid), 0 when there is none (cgroup, or not started, or ended). */
pid_t rm_workload_root(const struct rm_workload *w, pid_t command);

/* This tick's sample of the workload (procfs.h's struct: processes, RSS, CPU since the
 * previous sample). born_after_ns as rm_procfs_tree_sample_since. Returns 0, 1 when there is
 * no workload now (the command not started or ended, the attached process gone), -1 out of
 * memory. The members are then rm_procfs_tree_members(r->procfs, ...). */
int rm_workload_sample(struct rm_workload_reader *r, int64_t mono_ns, int64_t born_after_ns,
                       struct rm_tree_sample *out);

/* The workload's pids now, sorted: rm_workload_sample, then its members (at most max copied
 * into out; returns how many there are, 0 when none). */
size_t rm_workload_pids(struct rm_workload_reader *r, int64_t mono_ns, struct rm_tree_member *out,
                        size_t max);

/* Whether pid (in the /proc tree at proc_fd) is the workload's now: 1, 0, or -1 unknown (no
 * such pid here, or its name does not start like name when name is given: a host pid seen
 * from inside a container). command: the command's pid (0: none). */
int rm_workload_contains(const struct rm_workload *w, pid_t command, int proc_fd, pid_t pid,
                         const char *name, size_t name_len);

/* The pids listed in cgroup.procs of the folder dir and of every cgroup below it but its child
 * named skip (NULL: none), appended to *buf (grown as needed; *n and *cap its use). 0, or -1
 * when dir's own cgroup.procs cannot be read (errno). */
int rm_cgroup_pids(const char *dir, const char *skip, int32_t **buf, size_t *n, size_t *cap);

/* --pid ARG: a live process here (not a zombie). Fills w (kind pid). 0, or -1 with one line
 * of reason in err. */
int rm_workload_attach_pid(struct rm_workload *w, const char *proc_root, const char *arg, char *err,
                           size_t errsz);
/* --cgroup PATH: a folder on a cgroup file system (v1 or v2) with a cgroup.procs. Fills w
 * (kind cgroup). 0, or -1 with one line of reason in err. */
int rm_workload_attach_cgroup(struct rm_workload *w, const char *path, char *err, size_t errsz);
/* Inside a SLURM step (SLURM_JOB_ID and SLURM_STEP_ID set, env(name) reads them): the step's
 * cgroup, found from proc_root/self/cgroup (the step_<id> folder of runmon's own cgroup) and
 * proc_root/self/mountinfo. Fills w (kind slurm_step) and returns 0; 1 when not in a step or
 * no step cgroup is found (w untouched). */
int rm_workload_find_slurm_step(struct rm_workload *w, const char *proc_root,
                                const char *(*env)(const char *));

/* Whether the attached process (kind pid) is still the one attached to: 1 alive, 0 gone. */
int rm_workload_alive(const struct rm_workload *w, const char *proc_root);

#endif
