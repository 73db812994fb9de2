/* Child-process supervision; see child.h. Modelled on git's run-command.c: everything is
 * allocated before fork, signals are blocked across it, and the child makes only
 * async-signal-safe calls before exec. */
#include "monitor/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The kernel's sigset_t: 64 signals on most arches, glibc's NSIG is one more. */
#define KSIGSET_BYTES ((NSIG - 1) / 8)

extern char **environ;

void rm_child_init(rm_child *c)
{
    memset(c, 0, sizeof *c);
    c->pid = -1;
    c->out_fd = c->err_fd = c->pidfd = -1;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* execvp's search, done before fork so the child needs no allocation: the first regular,
 * executable file wins; a match that is not executable gives EACCES if nothing better turns
 * up. A name with '/' is taken as is and exec reports its errors. */
static int resolve_path(const char *file, char **out)
{
    *out = NULL;
    if (strchr(file, '/')) {
        *out = strdup(file);
        return *out ? 0 : ENOMEM;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/bin:/usr/bin";
    size_t flen = strlen(file);
    char *buf = malloc(strlen(path) + flen + 3);
    if (!buf) return ENOMEM;
    bool eacces = false;
    for (const char *p = path;; p++) {
        const char *end = strchrnul(p, ':');
        size_t dlen = (size_t)(end - p);
        if (dlen == 0) {
            buf[0] = '.'; /* empty element: the current directory, as execvp does */
            dlen = 1;
        } else {
            memcpy(buf, p, dlen);
        }
        buf[dlen] = '/';
        memcpy(buf + dlen + 1, file, flen + 1);
        struct stat st;
        if (stat(buf, &st) == 0) {
            if (S_ISREG(st.st_mode) && access(buf, X_OK) == 0) {
                *out = buf;
                return 0;
            }
            eacces = true;
        } else if (errno == EACCES) {
            eacces = true;
        }
        if (!*end) break;
        p = end;
    }
    free(buf);
    return eacces ? EACCES : ENOENT;
}

/* environ with env_add's names replaced, then env_add. Pointers only; the strings stay where
 * they are (environ's and the caller's) until after fork. */
static int build_env(const char *const *add, char ***out)
{
    size_t n = 0, m = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    for (const char *const *a = add; a && *a; a++) {
        if (!strchr(*a, '=') || **a == '=') return EINVAL;
        m++;
    }
    char **env = malloc((n + m + 1) * sizeof *env);
    if (!env) return ENOMEM;
    size_t k = 0;
    for (char **e = environ; e && *e; e++) {
        bool replaced = false;
        for (const char *const *a = add; a && *a && !replaced; a++) {
            size_t nl = (size_t)(strchr(*a, '=') - *a) + 1; /* name and '=' */
            replaced = strncmp(*e, *a, nl) == 0;
        }
        if (!replaced) env[k++] = *e;
    }
    for (const char *const *a = add; a && *a; a++)
        env[k++] = (char *)*a;
    env[k] = NULL;
    *out = env;
    return 0;
}

struct child_plan {
    const char *path;
    char *const *argv;
    char *const *envp;
    int in_fd, out_fd, err_fd, exec_fd; /* -1: inherit */
    pid_t parent;
    bool new_pgrp, pdeathsig, foreground;
};

static _Noreturn void child_fail(int fd, int err)
{
    while (write(fd, &err, sizeof err) < 0 && errno == EINTR) {
    }
    _exit(127);
}

/* Moves an fd off 0..2 so that the dup2 calls below cannot overwrite a source still needed. */
static int lift(int fd, int exec_fd)
{
    if (fd < 0 || fd > 2) return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (nfd < 0) child_fail(exec_fd, errno);
    return nfd;
}

/* Runs in the child between fork and exec: async-signal-safe calls only, no allocation.
 * Every signal is blocked on entry (the parent blocked them around fork), so no handler of
 * the parent's can run here before the dispositions are reset. */
static _Noreturn void child_exec(struct child_plan *p)
{
    /* Raw syscalls, because glibc refuses to touch its internal signals 32 and 33, and an
     * ignored one is inherited across exec (seen: a harness that left both SIG_IGN). An
     * all-zero kernel sigaction is SIG_DFL with no flags whatever the arch's layout. */
    static const unsigned long zero[16];
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP) syscall(SYS_rt_sigaction, s, zero, NULL, KSIGSET_BYTES);

    int ef = p->exec_fd = lift(p->exec_fd, p->exec_fd);
    if (p->new_pgrp && setpgid(0, 0) < 0) child_fail(ef, errno);
    /* Every signal is still blocked, SIGTTOU included, so this works from a background group
     * too. A failure leaves the command in the background: it runs, and a read of the
     * terminal stops it (SIGTTIN), as in any background job. */
    if (p->new_pgrp && p->foreground) (void)tcsetpgrp(0, getpid());
    if (p->pdeathsig) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) child_fail(ef, errno);
        /* The parent may have died before prctl: then no signal will ever come. */
        if (getppid() != p->parent) _exit(127);
    }
    int in = lift(p->in_fd, ef), out = lift(p->out_fd, ef), err = lift(p->err_fd, ef);
    if ((in >= 0 && dup2(in, 0) < 0) || (out >= 0 && dup2(out, 1) < 0) ||
        (err >= 0 && dup2(err, 2) < 0))
        child_fail(ef, errno);
    /* Fds other threads or libraries opened without O_CLOEXEC must not reach the child.
     * Best effort: ENOSYS on kernels before 5.11. */
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

    syscall(SYS_rt_sigprocmask, SIG_SETMASK, zero, NULL, KSIGSET_BYTES);
    execve(p->path, p->argv, p->envp);
    child_fail(ef, errno);
}

static void set_msg(rm_child *c, const char *what, int err)
{
    snprintf(c->errmsg, sizeof c->errmsg, "cannot run '%s': %s", what, strerrordesc_np(err));
}

int rm_child_spawn(rm_child *c, const char *const argv[], const rm_child_opts *opts)
{
    static const rm_child_opts defaults;
    if (!opts) opts = &defaults;
    rm_child_init(c);
    if (!argv || !argv[0] || !argv[0][0]) {
        snprintf(c->errmsg, sizeof c->errmsg, "cannot run a child: empty command");
        return EINVAL;
    }
    char *path = NULL, **envp = NULL;
    int in_fd = -1, outp[2] = {-1, -1}, errp[2] = {-1, -1}, execp[2] = {-1, -1};
    int err = resolve_path(argv[0], &path);
    if (err) {
        if (err == ENOENT)
            snprintf(c->errmsg, sizeof c->errmsg, "cannot run '%s': not found in PATH", argv[0]);
        else
            set_msg(c, argv[0], err);
        return err;
    }
    err = build_env(opts->env_add, &envp);
    if (err) {
        snprintf(c->errmsg, sizeof c->errmsg, "cannot run '%s': %s", argv[0],
                 err == EINVAL ? "environment entry without NAME=" : strerrordesc_np(err));
        goto fail;
    }
    if ((!opts->inherit_stdin && (in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) ||
        (opts->capture_stdout && pipe2(outp, O_CLOEXEC) < 0) ||
        (opts->capture_stderr && pipe2(errp, O_CLOEXEC) < 0) || pipe2(execp, O_CLOEXEC) < 0) {
        err = errno;
        set_msg(c, argv[0], err);
        goto fail;
    }

    struct child_plan plan = {
        .path = path,
        .argv = (char *const *)argv,
        .envp = envp,
        .in_fd = in_fd,
        .out_fd = outp[1],
        .err_fd = errp[1],
        .exec_fd = execp[1],
        .parent = getpid(),
        .new_pgrp = opts->new_pgrp,
        .pdeathsig = opts->pdeathsig,
        .foreground = opts->foreground && opts->inherit_stdin,
    };
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) child_exec(&plan);
    err = pid < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close_fd(&in_fd);
    close_fd(&outp[1]);
    close_fd(&errp[1]);
    close_fd(&execp[1]);
    if (pid < 0) {
        set_msg(c, argv[0], err);
        goto fail;
    }
    /* Also from this side, so the group exists whichever of us runs first; EACCES once the
     * child has exec'd and ESRCH if it is already gone are both fine. */
    if (opts->new_pgrp) setpgid(pid, pid);

    /* EOF: exec succeeded (the pipe closed on exec). An int: the child's errno. */
    int child_errno = 0;
    ssize_t r;
    while ((r = read(execp[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    close_fd(&execp[0]);
    if (r != 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        err = r == (ssize_t)sizeof child_errno ? child_errno : EIO;
        set_msg(c, argv[0], err);
        goto fail;
    }

    free(path);
    free(envp);
    c->pid = pid;
    c->pgid = opts->new_pgrp ? pid : 0;
    c->reap_group = opts->reap_group && opts->new_pgrp;
    c->out_fd = outp[0];
    c->err_fd = errp[0];
    if (c->out_fd >= 0) fcntl(c->out_fd, F_SETFL, fcntl(c->out_fd, F_GETFL) | O_NONBLOCK);
    if (c->err_fd >= 0) fcntl(c->err_fd, F_SETFL, fcntl(c->err_fd, F_GETFL) | O_NONBLOCK);
    /* The child is ours and unreaped, so the pid cannot have been reused yet. pidfds are
     * always close-on-exec. */
    if (!opts->no_pidfd) c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0U);
    return 0;

fail:
    free(path);
    free(envp);
    close_fd(&in_fd);
    close_fd(&outp[0]);
    close_fd(&outp[1]);
    close_fd(&errp[0]);
    close_fd(&errp[1]);
    close_fd(&execp[0]);
    close_fd(&execp[1]);
    return err;
}

/* Signals the group if the child has one, else the pid. Only called while the leader is
 * unreaped: a zombie leader keeps its pid, and with it the pgid, from being reused, so the
 * signal cannot reach an unrelated process. After the reap, if no group member were left, a
 * new process could get that number and even make it its own group id; hence every killpg
 * here happens before the leader is reaped. */
static void signal_child(const rm_child *c, int sig)
{
    if (c->pgid > 0)
        killpg(c->pgid, sig);
    else
        kill(c->pid, sig);
}

/* 1: the child has exited (still unreaped); 0: it runs; -1: waitid failed (ECHILD). */
static int has_exited(const rm_child *c)
{
    siginfo_t si;
    for (;;) {
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
            return si.si_pid != 0;
        if (errno != EINTR) return -1;
    }
}

static int reap(rm_child *c)
{
    int st;
    pid_t r;
    while ((r = waitpid(c->pid, &st, WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r <= 0) return r;
    c->reaped = true;
    c->wstatus = st;
    close_fd(&c->pidfd);
    return 1;
}

/* Waits up to ms for the child to exit, without reaping it. Returns has_exited's value. */
static int wait_exit(rm_child *c, int ms)
{
    int64_t deadline = rm_now_monotonic_ns() + (int64_t)ms * RM_NS_PER_MS;
    bool use_pidfd = c->pidfd >= 0;
    int64_t step_ms = 1;
    for (;;) {
        int e = has_exited(c);
        if (e != 0) return e;
        int64_t left_ms = (deadline - rm_now_monotonic_ns() + RM_NS_PER_MS - 1) / RM_NS_PER_MS;
        if (left_ms <= 0) return 0;
        if (use_pidfd) {
            struct pollfd pfd = {.fd = c->pidfd, .events = POLLIN};
            int pr = poll(&pfd, 1, (int)left_ms);
            /* Readable but not waitable (traced by another process): sleep-poll instead. */
            if (pr > 0 && has_exited(c) == 0)
                use_pidfd = false;
            else if (pr < 0 && errno != EINTR)
                use_pidfd = false;
            continue;
        }
        int64_t nap = step_ms < left_ms ? step_ms : left_ms;
        struct timespec ts = {.tv_sec = nap / 1000, .tv_nsec = (nap % 1000) * RM_NS_PER_MS};
        nanosleep(&ts, NULL);
        if (step_ms < 20) step_ms *= 2;
    }
}

static void lost(rm_child *c)
{
    /* Someone else reaped it (a wait(-1) or SIGCHLD=SIG_IGN in the process): the status is
     * gone. Say so rather than invent one. */
    snprintf(c->errmsg, sizeof c->errmsg, "child %d was reaped elsewhere; exit status unknown",
             (int)c->pid);
    c->reaped = true;
    c->wstatus = 0;
    close_fd(&c->pidfd);
}

int rm_child_try_reap(rm_child *c)
{
    if (c->reaped) return 1;
    if (c->pid <= 0) {
        errno = ECHILD;
        return -1;
    }
    int e = has_exited(c);
    if (e <= 0) return e;
    if (c->reap_group) signal_child(c, SIGKILL);
    return reap(c);
}

rm_stop_result rm_child_stop(rm_child *c, int grace_ms)
{
    if (c->reaped || c->pid <= 0) return RM_CHILD_REAPED;
    int e = has_exited(c);
    if (e == 0) {
        signal_child(c, SIGTERM);
        signal_child(c, SIGCONT); /* a stopped child could not act on TERM */
        e = wait_exit(c, grace_ms > 0 ? grace_ms : 0);
    }
    if (e == 0) {
        signal_child(c, SIGKILL);
        e = wait_exit(c, RM_CHILD_KILL_WAIT_MS);
    }
    if (e < 0) {
        lost(c);
        return RM_CHILD_REAPED;
    }
    if (e == 0) {
        snprintf(c->errmsg, sizeof c->errmsg,
                 "child %d did not exit %d ms after SIGKILL (uninterruptible sleep?); "
                 "left unreaped",
                 (int)c->pid, RM_CHILD_KILL_WAIT_MS);
        return RM_CHILD_UNREAPED;
    }
    /* The leader is a zombie: its pgid is still reserved, so this reaches only its group. */
    if (c->pgid > 0) killpg(c->pgid, SIGKILL);
    if (reap(c) != 1) lost(c);
    return RM_CHILD_REAPED;
}

int rm_child_exited(const rm_child *c)
{
    if (c->reaped) return 1;
    if (c->pid <= 0) {
        errno = ECHILD;
        return -1;
    }
    return has_exited(c);
}

int rm_child_stopped(rm_child *c)
{
    if (c->reaped || c->pid <= 0) return 0;
    siginfo_t si;
    for (;;) {
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)c->pid, &si, WSTOPPED | WNOHANG) == 0)
            return si.si_pid != 0 && si.si_code == CLD_STOPPED ? si.si_status : 0;
        if (errno != EINTR) return 0;
    }
}

void rm_child_release(rm_child *c)
{
    close_fd(&c->out_fd);
    close_fd(&c->err_fd);
    if (!c->reaped && c->pid > 0) {
        signal_child(c, SIGKILL);
        /* Brief: a child that dies at once is reaped; one that does not stays a zombie. */
        if (wait_exit(c, 100) > 0) reap(c);
    }
    close_fd(&c->pidfd);
    rm_child_init(c);
}

int rm_exit_code_from_status(int wstatus)
{
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return -1;
}

const char *rm_status_describe(int wstatus, char *buf, size_t len)
{
    if (WIFEXITED(wstatus)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
    } else if (WIFSIGNALED(wstatus)) {
        const char *d = sigdescr_np(WTERMSIG(wstatus));
        snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(wstatus), d ? d : "unknown",
                 WCOREDUMP(wstatus) ? ", core dumped" : "");
    } else {
        snprintf(buf, len, "status 0x%x", (unsigned)wstatus);
    }
    return buf;
}

int rm_wakeup_open(rm_wakeup *w)
{
    w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return w->fd < 0 ? -1 : 0;
}

void rm_wakeup_signal(rm_wakeup *w)
{
    int saved = errno;
    uint64_t one = 1;
    /* EAGAIN only if the counter is saturated, which still leaves it readable. */
    ssize_t r = write(w->fd, &one, sizeof one);
    (void)r;
    errno = saved;
}

bool rm_wakeup_drain(rm_wakeup *w)
{
    uint64_t v;
    return read(w->fd, &v, sizeof v) == (ssize_t)sizeof v;
}

void rm_wakeup_close(rm_wakeup *w)
{
    close_fd(&w->fd);
}
