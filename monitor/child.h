/* Child-process supervision: spawn, read, stop and reap collectors (nvidia-smi) and the
 * user's workload.
 *
 * What a spawned child gets: argv exec'd directly (no shell; PATH looked up before fork, as
 * execvp would), an empty signal mask and default dispositions for every signal, stdin from
 * /dev/null unless inherited, stdout/stderr to non-blocking close-on-exec pipes or inherited,
 * no other fd of ours (O_CLOEXEC everywhere, plus close_range(CLOEXEC) in the child for fds
 * other threads or libraries opened without it). Optionally its own process group and
 * PR_SET_PDEATHSIG(SIGKILL). An exec failure (not found, permission denied, ...) is reported
 * synchronously by rm_child_spawn through a close-on-exec pipe, never as an exit 127.
 *
 * Threads. The functions on one rm_child are not thread-safe: one thread owns it. For a child
 * spawned with pdeathsig that thread must also outlive the child, because the kernel sends the
 * death signal when the *thread* that forked the child exits, not the process (see
 * prctl(2)). The monitor's supervisor thread spawns, polls, stops and reaps all collectors; a
 * short-lived helper thread must never spawn them. Different rm_child objects may be used from
 * different threads; rm_child_spawn is safe to call while other threads run (the child side
 * only makes async-signal-safe calls). rm_exit_code_from_status, rm_status_describe and
 * rm_wakeup_signal may be called from any thread; rm_wakeup_signal also from a signal handler.
 * rm_child_spawn reads environ and PATH: no setenv/putenv in other threads meanwhile.
 *
 * Reaping. rm_child_* reap only their own pid (waitpid(pid), never waitpid(-1)), so the caller
 * must not reap these children itself (no SIGCHLD handler calling wait(-1), no SIG_IGN for
 * SIGCHLD).
 */
#ifndef RUNMON_CHILD_H
#define RUNMON_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RM_CHILD_ERRLEN 256
/* How long rm_child_stop waits after SIGKILL before reporting RM_CHILD_UNREAPED. */
#define RM_CHILD_KILL_WAIT_MS 1000

typedef struct rm_child_opts {
    bool new_pgrp;       /* own process group (collectors: yes; stop signals the group) */
    bool pdeathsig;      /* SIGKILL when the spawning thread dies (collectors: yes;
                            the user's workload: no, it must outlive a killed runmon) */
    bool inherit_stdin;  /* else stdin is /dev/null */
    bool capture_stdout; /* else inherited */
    bool capture_stderr; /* else inherited */
    bool reap_group;     /* when the leader exits on its own, SIGKILL what is left of its group
                            before reaping it (collectors: yes) */
    bool no_pidfd;       /* don't use pidfd_open (tests; it falls back by itself on ENOSYS) */
    bool foreground;     /* with new_pgrp: the child makes its group the foreground process
                            group of the terminal on its stdin before exec, as a shell does for
                            a job (the user's workload when runmon holds the terminal) */
    /* NULL-terminated "NAME=value" entries added to (or replacing in) our environment;
     * may be NULL. Copied before fork, not kept. */
    const char *const *env_add;
} rm_child_opts;

typedef struct rm_child {
    pid_t pid;       /* > 0 while spawned and not yet reaped-and-cleared; -1 if never spawned */
    pid_t pgid;      /* == pid with new_pgrp, else 0 (stop then signals the pid only) */
    int out_fd;      /* read end of the stdout pipe (non-blocking), or -1 */
    int err_fd;      /* read end of the stderr pipe (non-blocking), or -1 */
    int pidfd;       /* readable (POLLIN) once the child has exited, for the caller's poll loop;
                        -1 if unavailable. Closed on reap. (A child traced by someone else can
                        be readable yet not reapable: if rm_child_try_reap then returns 0,
                        stop polling it and retry on a timer.) */
    bool reaped;     /* wstatus is valid */
    bool reap_group; /* from opts (only with new_pgrp) */
    int wstatus;     /* waitpid status once reaped */
    char errmsg[RM_CHILD_ERRLEN]; /* why spawn failed / a stop problem, "" otherwise */
} rm_child;

typedef enum rm_stop_result {
    RM_CHILD_REAPED = 0,  /* exited and reaped: c->wstatus is valid */
    RM_CHILD_UNREAPED = 1 /* did not die even after SIGKILL (D state?): call rm_child_try_reap
                             later, e.g. on each supervisor tick, and never block on it */
} rm_stop_result;

/* Sets c to the "no child" state (pid -1, fds -1). Optional before rm_child_spawn. */
void rm_child_init(rm_child *c);

/* Starts argv[0] (looked up in PATH unless it contains '/') with argv. opts may be NULL (all
 * false). Returns 0, or an errno value (ENOENT, EACCES, ENOEXEC, EMFILE, ...) with c->errmsg
 * saying what could not be run and why; no process is left behind on failure. Unlike execvp,
 * a script without "#!" is not retried with /bin/sh: that is ENOEXEC. */
int rm_child_spawn(rm_child *c, const char *const argv[], const rm_child_opts *opts);

/* SIGTERM to the group (or the pid), up to grace_ms for it to exit, then SIGKILL, then up to
 * RM_CHILD_KILL_WAIT_MS more. Never blocks longer than that. Once the leader has exited, the
 * whole group gets SIGKILL before the leader is reaped, so no grandchild survives it.
 * Safe to call on an already reaped child (returns RM_CHILD_REAPED). */
rm_stop_result rm_child_stop(rm_child *c, int grace_ms);

/* Non-blocking: if the child has exited, kills what is left of its group, reaps it and
 * returns 1 (c->wstatus valid); 0 if it still runs; -1 with errno on error (ECHILD: someone
 * else reaped it; c->reaped stays false). */
int rm_child_try_reap(rm_child *c);

/* Non-blocking: 1 if the child has exited (it stays unreaped, so its pid and process group
 * cannot be reused yet), 0 if it runs, -1 with errno on error. */
int rm_child_exited(const rm_child *c);

/* Non-blocking: the signal that stopped the child (SIGTSTP, SIGSTOP, ...) if it stopped since
 * the last call, else 0. Consumes that stop report; never reaps. */
int rm_child_stopped(rm_child *c);

/* Closes the pipes and the pidfd. If the child was not reaped, it is SIGKILLed (group too)
 * first and reaped if that happens at once; otherwise it stays a zombie until this process
 * exits. Leaves c in the init state; the caller copies wstatus out first if needed. */
void rm_child_release(rm_child *c);

/* Exit code a shell would report: WEXITSTATUS, or 128+N for death by signal N; -1 if the
 * status is neither (stopped/continued). */
int rm_exit_code_from_status(int wstatus);

/* "exited with status 3", "killed by signal 9 (Killed)". Returns buf. */
const char *rm_status_describe(int wstatus, char *buf, size_t len);

/* Wakeup for a poll loop: an eventfd (non-blocking, close-on-exec) that a stop request, from
 * another thread or a signal handler, makes readable. */
typedef struct rm_wakeup {
    int fd;
} rm_wakeup;

int rm_wakeup_open(rm_wakeup *w);    /* 0, or -1 with errno */
void rm_wakeup_signal(rm_wakeup *w); /* async-signal-safe; preserves errno */
bool rm_wakeup_drain(rm_wakeup *w);  /* true if it had been signalled; clears it */
void rm_wakeup_close(rm_wakeup *w);

#endif
