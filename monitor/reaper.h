/* runmon as the recorded command's reaper: every process the command starts, even one that
 * leaves its process group or session (`setsid cmd &`, a daemon's double fork), can be found,
 * signalled and reaped, and nothing else can.
 *
 * How. rm_reaper_enable makes runmon a child subreaper (PR_SET_CHILD_SUBREAPER) before the
 * command starts, so a process of the command's tree that loses its parent becomes a child of
 * runmon instead of init. The kernel gives such an orphan to a live thread of the subreaper,
 * the thread-group leader first: runmon's main thread, the thread that also starts the
 * command. The nvidia-smi collectors are children of the supervisor thread (monitor/child.h:
 * pdeathsig follows the spawning thread). A thread's own children are listed by
 * /proc/PID/task/TID/children (zombies included), so the main thread's children are exactly
 * the command and what its tree left behind; the functions below walk down from there and
 * reap by pid, never with wait(-1), which could take a collector's exit status from the
 * thread that supervises it.
 *
 * Call them from the main thread only (the one that spawned the command). They read the
 * real /proc, never RUNMON_PROC_ROOT: they act on live processes.
 *
 * Limits. A kernel without CONFIG_PROC_CHILDREN has no children files: then nothing is
 * found here (the functions return -1) and the caller's process-group signal is all there
 * is. A process that escapes to another subreaper (a `systemd-run`, a container runtime) is
 * not runmon's to find.
 */
#ifndef RUNMON_MONITOR_REAPER_H
#define RUNMON_MONITOR_REAPER_H

#include <sys/types.h>

/* Makes this process a child subreaper. 0, or -1 with errno. */
int rm_reaper_enable(void);

/* Sends sig (0: only counts) to every live process under the calling thread's children, those
 * children included; zombies are left alone (nothing to signal). Each process is signalled
 * through a pidfd opened after the walk saw it and checked against the start time the walk
 * read, so a pid reused meanwhile is never signalled. Returns how many live processes were
 * found, or -1 when the tree cannot be read (no children files). */
int rm_reaper_signal(int sig);

/* Reaps the zombies among the calling thread's children except keep (the command, whose
 * status its rm_child takes). Returns how many were reaped, or -1 (no children file). */
int rm_reaper_reap(pid_t keep);

#endif
