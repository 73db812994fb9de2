/* Tests of monitor/child: real processes only (sh, sleep, cat). The test process makes itself
 * a child subreaper, so orphaned grandchildren come back to it and can be checked for death
 * by reaping them rather than by guessing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/linebuf.h"
#include "base/rm_time.h"
#include "monitor/child.h"

static int64_t now_ms(void)
{
    return rm_now_monotonic_ns() / RM_NS_PER_MS;
}

static void nap_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

struct seen {
    char log[2048];
    int n;
};

static void record(void *ctx, char *line, size_t len, unsigned flags)
{
    struct seen *s = ctx;
    size_t used = strlen(s->log);
    snprintf(s->log + used, sizeof s->log - used, "%.*s|%u;", (int)len, line, flags);
    s->n++;
}

/* Reads the child's captured pipes until EOF on both (or until want lines arrived on stdout
 * when want > 0), failing the test after timeout_ms. */
static void collect(rm_child *c, struct seen *out, struct seen *err, int want, int timeout_ms)
{
    char sb_out[256], sb_err[256];
    rm_linebuf lo, le;
    rm_linebuf_init(&lo, sb_out, sizeof sb_out);
    rm_linebuf_init(&le, sb_err, sizeof sb_err);
    bool out_open = c->out_fd >= 0, err_open = c->err_fd >= 0;
    int64_t deadline = now_ms() + timeout_ms;
    while ((out_open || err_open) && !(want > 0 && out->n >= want)) {
        assert_true(now_ms() < deadline);
        struct pollfd p[2] = {{.fd = out_open ? c->out_fd : -1, .events = POLLIN},
                              {.fd = err_open ? c->err_fd : -1, .events = POLLIN}};
        assert_true(poll(p, 2, 100) >= 0);
        if (out_open && p[0].revents)
            out_open = rm_linebuf_read(&lo, c->out_fd, record, out) == RM_LB_AGAIN;
        if (err_open && p[1].revents)
            err_open = rm_linebuf_read(&le, c->err_fd, record, err) == RM_LB_AGAIN;
    }
}

/* Polls rm_child_try_reap until it reaps the child. */
static int reap_within(rm_child *c, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    int r;
    while ((r = rm_child_try_reap(c)) == 0 && now_ms() < deadline)
        nap_ms(5);
    return r;
}

/* /proc/<pid>/stat state letter, or 0 if there is no such process. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' ? rp[2] : '?';
}

/* True once pid is dead: reaped by us (we are the subreaper), absent, or a zombie. */
static bool gone_within(pid_t pid, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int st;
        waitpid(pid, &st, WNOHANG);
        char s = proc_state(pid);
        if (s == 0 || s == 'Z') return true;
        if (now_ms() >= deadline) return false;
        nap_ms(5);
    }
}

/* The hex value of a /proc/<pid>/status field such as "SigBlk:". */
static unsigned long long status_field(pid_t pid, const char *name)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    unsigned long long v = ~0ULL;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, strlen(name)) == 0) v = strtoull(line + strlen(name), NULL, 16);
    fclose(f);
    return v;
}

static const rm_child_opts collector = {.new_pgrp = true,
                                        .pdeathsig = true,
                                        .capture_stdout = true,
                                        .capture_stderr = true,
                                        .reap_group = true};

static void captures_stdout_and_stderr_separately(void **state)
{
    (void)state;
    rm_child c;
    const char *argv[] = {"sh", "-c",
                          "echo out1; echo 'Failed to initialize NVML' >&2; "
                          "printf 'a\\r\\nb'; exit 18",
                          NULL};
    assert_int_equal(rm_child_spawn(&c, argv, &collector), 0);
    assert_true(c.pid > 0);
    assert_true(c.out_fd >= 0 && c.err_fd >= 0);
    assert_true(fcntl(c.out_fd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(c.out_fd, F_GETFD) & FD_CLOEXEC);
    struct seen out = {0}, err = {0};
    collect(&c, &out, &err, 0, 5000);
    assert_string_equal(out.log, "out1|0;a|0;b|2;");
    assert_string_equal(err.log, "Failed to initialize NVML|0;");
    assert_int_equal(rm_child_stop(&c, 5000), RM_CHILD_REAPED);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 18);
    rm_child_release(&c);
    assert_int_equal(c.pid, -1);
}

static void stdin_is_dev_null_and_env_is_added(void **state)
{
    (void)state;
    rm_child c;
    struct seen out = {0}, err = {0};
    const char *cat[] = {"cat", NULL};
    assert_int_equal(rm_child_spawn(&c, cat, &collector), 0);
    collect(&c, &out, &err, 0, 5000); /* cat sees EOF at once */
    assert_int_equal(out.n, 0);
    assert_int_equal(reap_within(&c, 5000), 1);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 0);
    rm_child_release(&c);

    setenv("RM_TEST_OLD", "old", 1);
    const char *env[] = {"RUNMON_RUNLOG=/tmp/run.jsonl", "RM_TEST_OLD=new", NULL};
    rm_child_opts o = collector;
    o.env_add = env;
    const char *sh[] = {"sh", "-c",
                        "echo \"$RUNMON_RUNLOG\"; env | grep -c '^RM_TEST_OLD='; "
                        "echo \"$RM_TEST_OLD\"",
                        NULL};
    assert_int_equal(rm_child_spawn(&c, sh, &o), 0);
    memset(&out, 0, sizeof out);
    collect(&c, &out, &err, 0, 5000);
    assert_string_equal(out.log, "/tmp/run.jsonl|0;1|0;new|0;");
    assert_int_equal(rm_child_stop(&c, 5000), RM_CHILD_REAPED);
    rm_child_release(&c);
    unsetenv("RM_TEST_OLD");

    const char *bad[] = {"NO_EQUALS_SIGN", NULL};
    o.env_add = bad;
    assert_int_equal(rm_child_spawn(&c, sh, &o), EINVAL);
    assert_int_equal(c.pid, -1);
}

static void exec_failure_is_reported_synchronously(void **state)
{
    (void)state;
    rm_child c;
    const char *missing[] = {"runmon-no-such-program", "-x", NULL};
    assert_int_equal(rm_child_spawn(&c, missing, &collector), ENOENT);
    assert_int_equal(c.pid, -1);
    assert_non_null(strstr(c.errmsg, "runmon-no-such-program"));
    assert_non_null(strstr(c.errmsg, "not found"));

    /* With a '/', the child's execve fails and reports through the pipe. */
    const char *abs[] = {"/nonexistent-dir/nvidia-smi", NULL};
    assert_int_equal(rm_child_spawn(&c, abs, &collector), ENOENT);
    assert_int_equal(c.pid, -1);
    assert_non_null(strstr(c.errmsg, "/nonexistent-dir/nvidia-smi"));
    assert_non_null(strstr(c.errmsg, "No such file"));
    assert_int_equal(c.out_fd, -1);
}

static void non_executable_file_is_eacces(void **state)
{
    (void)state;
    char dir[] = "/tmp/rm-child-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char prog[128];
    snprintf(prog, sizeof prog, "%s/fake-smi", dir);
    FILE *f = fopen(prog, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\necho hi\n", f);
    fclose(f);
    assert_int_equal(chmod(prog, 0644), 0);

    rm_child c;
    const char *by_path[] = {prog, NULL};
    assert_int_equal(rm_child_spawn(&c, by_path, &collector), EACCES);
    assert_non_null(strstr(c.errmsg, "Permission denied"));

    char *old_path = strdup(getenv("PATH"));
    setenv("PATH", dir, 1);
    const char *by_name[] = {"fake-smi", NULL};
    assert_int_equal(rm_child_spawn(&c, by_name, &collector), EACCES);
    assert_non_null(strstr(c.errmsg, "fake-smi"));

    /* Made executable, the same lookup runs it. */
    assert_int_equal(chmod(prog, 0755), 0);
    assert_int_equal(rm_child_spawn(&c, by_name, &collector), 0);
    setenv("PATH", old_path, 1);
    free(old_path);
    struct seen out = {0}, err = {0};
    collect(&c, &out, &err, 0, 5000);
    assert_string_equal(out.log, "hi|0;");
    assert_int_equal(rm_child_stop(&c, 5000), RM_CHILD_REAPED);
    rm_child_release(&c);
    unlink(prog);
    rmdir(dir);
}

static void own_group_empty_mask_default_dispositions(void **state)
{
    (void)state;
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGUSR1);
    assert_int_equal(sigprocmask(SIG_BLOCK, &block, &old_mask), 0);
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_term;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGTERM, &ign, &old_term);
    /* glibc's sigaction refuses its internal signal 32, so set it with the raw syscall as an
     * ignoring parent (a harness) can leave it; kernel layout: handler, flags, restorer, mask. */
    unsigned long kign[4] = {(unsigned long)SIG_IGN, 0, 0, 0}, kold[4];
    assert_int_equal(syscall(SYS_rt_sigaction, 32, kign, kold, 8), 0);

    rm_child c, d;
    const char *argv[] = {"sleep", "100", NULL};
    assert_int_equal(rm_child_spawn(&c, argv, &collector), 0);
    rm_child_opts same_group = collector;
    same_group.new_pgrp = false;
    assert_int_equal(rm_child_spawn(&d, argv, &same_group), 0);

    /* The caller's own state is untouched. */
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    assert_true(sigismember(&now, SIGUSR1));
    assert_false(sigismember(&now, SIGTERM));
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    syscall(SYS_rt_sigaction, 32, kold, NULL, 8);

    assert_int_equal(getpgid(c.pid), c.pid);
    assert_int_equal(c.pgid, c.pid);
    assert_int_equal(getpgid(d.pid), getpgid(0));
    assert_int_equal(d.pgid, 0);
    assert_int_equal(status_field(c.pid, "SigBlk:"), 0);
    assert_int_equal(status_field(c.pid, "SigIgn:"), 0);
    assert_int_equal(status_field(d.pid, "SigIgn:"), 0);

    assert_int_equal(rm_child_stop(&c, 5000), RM_CHILD_REAPED);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 128 + SIGTERM); /* TERM not ignored */
    assert_int_equal(rm_child_stop(&d, 5000), RM_CHILD_REAPED);
    assert_int_equal(rm_exit_code_from_status(d.wstatus), 128 + SIGTERM);
    rm_child_release(&c);
    rm_child_release(&d);
}

static void only_std_fds_reach_the_child(void **state)
{
    (void)state;
    /* An fd opened without O_CLOEXEC (as a careless library would) must not leak. */
    int leaky = open("/dev/null", O_RDONLY);
    assert_true(leaky >= 3);
    rm_child c;
    const char *argv[] = {"sh", "-c", "ls /proc/self/fd", NULL};
    rm_child_opts o = collector;
    o.capture_stderr = false;
    assert_int_equal(rm_child_spawn(&c, argv, &o), 0);
    struct seen out = {0}, err = {0};
    collect(&c, &out, &err, 0, 5000);
    close(leaky);
    /* ls's own directory fd (3) shows too; anything past it is a leak. */
    assert_string_equal(out.log, "0|0;1|0;2|0;3|0;");
    assert_int_equal(rm_child_stop(&c, 5000), RM_CHILD_REAPED);
    rm_child_release(&c);
}

static void stop_reaps_term_obeying_child_within_grace(void **state)
{
    (void)state;
    for (int no_pidfd = 0; no_pidfd <= 1; no_pidfd++) {
        rm_child c;
        rm_child_opts o = collector;
        o.no_pidfd = no_pidfd;
        const char *argv[] = {"sleep", "100", NULL};
        assert_int_equal(rm_child_spawn(&c, argv, &o), 0);
        assert_int_equal(rm_child_try_reap(&c), 0);
        /* Well before the grace runs out (wide: a loaded machine is slow, not wrong). */
        int64_t t0 = now_ms();
        assert_int_equal(rm_child_stop(&c, 30000), RM_CHILD_REAPED);
        assert_true(now_ms() - t0 < 15000);
        assert_true(c.reaped);
        assert_true(WIFSIGNALED(c.wstatus) && WTERMSIG(c.wstatus) == SIGTERM);
        assert_int_equal(c.pidfd, -1);
        /* Stopping again is harmless. */
        assert_int_equal(rm_child_stop(&c, 5000), RM_CHILD_REAPED);
        assert_int_equal(rm_child_try_reap(&c), 1);
        rm_child_release(&c);
    }
}

/* Reads the first stdout line of c as a pid. */
static pid_t first_line_pid(rm_child *c)
{
    struct seen out = {0}, err = {0};
    collect(c, &out, &err, 1, 5000);
    pid_t p = (pid_t)atoi(out.log);
    assert_true(p > 0);
    return p;
}

static void stop_kills_term_ignoring_group_after_grace(void **state)
{
    (void)state;
    rm_child c;
    const char *argv[] = {"sh", "-c", "trap '' TERM; sleep 100 & echo $!; wait", NULL};
    assert_int_equal(rm_child_spawn(&c, argv, &collector), 0);
    pid_t grandchild = first_line_pid(&c);
    assert_int_equal(kill(grandchild, 0), 0);
    int64_t t0 = now_ms();
    assert_int_equal(rm_child_stop(&c, 300), RM_CHILD_REAPED);
    int64_t took = now_ms() - t0;
    assert_true(took >= 300);
    assert_true(took < 300 + 10000); /* the grace, then SIGKILL: not much more */
    assert_true(WIFSIGNALED(c.wstatus) && WTERMSIG(c.wstatus) == SIGKILL);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 137);
    assert_true(gone_within(grandchild, 10000));
    rm_child_release(&c);
}

static void group_is_killed_even_when_leader_exits_first(void **state)
{
    (void)state;
    /* The leader dies on TERM at once; its child ignores TERM and would linger. The child
     * prints its pid only once TERM is ignored, so the test cannot race its setup. */
    rm_child c;
    const char *argv[] = {"sh", "-c", "sh -c 'trap \"\" TERM; echo $$; exec sleep 100' & wait",
                          NULL};
    assert_int_equal(rm_child_spawn(&c, argv, &collector), 0);
    pid_t grandchild = first_line_pid(&c);
    int64_t t0 = now_ms();
    assert_int_equal(rm_child_stop(&c, 30000), RM_CHILD_REAPED);
    assert_true(now_ms() - t0 < 15000); /* well before the grace runs out */
    assert_true(WIFSIGNALED(c.wstatus) && WTERMSIG(c.wstatus) == SIGTERM);
    assert_true(gone_within(grandchild, 10000));
    rm_child_release(&c);

    /* A leader that exits by itself: try_reap kills its leftovers when reap_group is set... */
    const char *quits[] = {"sh", "-c", "sh -c 'trap \"\" TERM; echo $$; exec sleep 100' &", NULL};
    assert_int_equal(rm_child_spawn(&c, quits, &collector), 0);
    grandchild = first_line_pid(&c);
    assert_int_equal(reap_within(&c, 5000), 1);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 0);
    assert_true(gone_within(grandchild, 10000));
    rm_child_release(&c);

    /* ...and leaves them alone when it is not (the workload's background jobs). */
    rm_child_opts o = collector;
    o.reap_group = false;
    assert_int_equal(rm_child_spawn(&c, quits, &o), 0);
    grandchild = first_line_pid(&c);
    assert_int_equal(reap_within(&c, 5000), 1);
    nap_ms(100);
    assert_int_equal(kill(grandchild, 0), 0);
    kill(grandchild, SIGKILL);
    assert_true(gone_within(grandchild, 10000));
    rm_child_release(&c);
}

/* Forks a helper that spawns `sleep 100` and sends its pid back, then SIGKILLs the helper.
 * Returns the sleep's pid; it is now an orphan adopted by us (the subreaper). */
static pid_t orphan_via_killed_parent(bool pdeathsig)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t helper = fork();
    assert_true(helper >= 0);
    if (helper == 0) {
        rm_child c;
        rm_child_opts o = collector;
        o.pdeathsig = pdeathsig;
        o.capture_stdout = o.capture_stderr = false;
        const char *argv[] = {"sleep", "100", NULL};
        pid_t pid = rm_child_spawn(&c, argv, &o) == 0 ? c.pid : -1;
        if (write(p[1], &pid, sizeof pid) != sizeof pid) _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    pid_t pid = -1;
    assert_int_equal(read(p[0], &pid, sizeof pid), sizeof pid);
    close(p[0]);
    assert_true(pid > 0);
    assert_int_equal(kill(helper, SIGKILL), 0);
    assert_int_equal(waitpid(helper, NULL, 0), helper);
    return pid;
}

/* Waits for an adopted orphan's status. */
static int wait_orphan(pid_t pid, int timeout_ms, int *st)
{
    int64_t deadline = now_ms() + timeout_ms;
    pid_t r;
    while ((r = waitpid(pid, st, WNOHANG)) == 0 && now_ms() < deadline)
        nap_ms(5);
    return r == pid;
}

static void pdeathsig_kills_collector_when_parent_is_killed(void **state)
{
    (void)state;
    pid_t pid = orphan_via_killed_parent(true);
    int st;
    assert_true(wait_orphan(pid, 10000, &st));
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void workload_without_pdeathsig_survives_parent_kill(void **state)
{
    (void)state;
    pid_t pid = orphan_via_killed_parent(false);
    int st;
    assert_false(wait_orphan(pid, 300, &st));
    assert_int_equal(kill(pid, 0), 0);
    kill(pid, SIGKILL);
    assert_true(wait_orphan(pid, 10000, &st));
}

static void *spawn_and_leave(void *arg)
{
    rm_child *c = arg;
    const char *argv[] = {"sleep", "100", NULL};
    rm_child_opts o = collector;
    o.capture_stdout = o.capture_stderr = false;
    if (rm_child_spawn(c, argv, &o) != 0) c->pid = -1;
    return NULL;
}

/* Why the supervisor thread must outlive its collectors: PR_SET_PDEATHSIG follows the thread
 * that forked, so a child spawned from a short-lived thread dies with that thread. */
static void pdeathsig_follows_the_spawning_thread(void **state)
{
    (void)state;
    rm_child c;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, spawn_and_leave, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(c.pid > 0);
    assert_int_equal(reap_within(&c, 10000), 1);
    assert_true(WIFSIGNALED(c.wstatus) && WTERMSIG(c.wstatus) == SIGKILL);
    rm_child_release(&c);
}

/* A child that cannot be reaped in time (as one stuck in D state): here its zombie is held
 * back by a tracer that never waits. stop must give up after the KILL wait, and try_reap must
 * get it later. */
static void stop_gives_up_on_unreapable_child(void **state)
{
    (void)state;
    rm_child c;
    const char *argv[] = {"sleep", "100", NULL};
    rm_child_opts o = collector;
    o.capture_stdout = o.capture_stderr = false;
    assert_int_equal(rm_child_spawn(&c, argv, &o), 0);
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t tracer = fork();
    assert_true(tracer >= 0);
    if (tracer == 0) {
        int e = ptrace(PTRACE_SEIZE, c.pid, NULL, NULL) == 0 ? 0 : errno;
        if (write(p[1], &e, sizeof e) != sizeof e) _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    int e = -1;
    assert_int_equal(read(p[0], &e, sizeof e), sizeof e);
    close(p[0]);
    if (e != 0) {
        kill(tracer, SIGKILL);
        waitpid(tracer, NULL, 0);
        assert_int_equal(rm_child_stop(&c, 1000), RM_CHILD_REAPED);
        rm_child_release(&c);
        skip(); /* no ptrace here (seccomp, capabilities) */
    }
    int64_t t0 = now_ms();
    assert_int_equal(rm_child_stop(&c, 200), RM_CHILD_UNREAPED);
    int64_t took = now_ms() - t0;
    assert_true(took >= 200 + RM_CHILD_KILL_WAIT_MS);
    assert_true(took < 200 + RM_CHILD_KILL_WAIT_MS + 10000);
    assert_false(c.reaped);
    assert_non_null(strstr(c.errmsg, "unreaped"));
    assert_int_equal(rm_child_try_reap(&c), 0);

    /* The tracer goes; the zombie is handed to us. */
    kill(tracer, SIGKILL);
    assert_int_equal(waitpid(tracer, NULL, 0), tracer);
    assert_int_equal(reap_within(&c, 10000), 1);
    assert_true(WIFSIGNALED(c.wstatus) && WTERMSIG(c.wstatus) == SIGKILL);
    rm_child_release(&c);
}

static void release_kills_an_unstopped_child(void **state)
{
    (void)state;
    rm_child c;
    const char *argv[] = {"sleep", "100", NULL};
    assert_int_equal(rm_child_spawn(&c, argv, &collector), 0);
    pid_t pid = c.pid;
    rm_child_release(&c);
    assert_int_equal(c.pid, -1);
    assert_int_equal(c.out_fd, -1);
    assert_true(gone_within(pid, 10000));
}

/* rm_child_stopped reports a stop once and never reaps; rm_child_exited leaves the exited
 * child unreaped (its status still there for rm_child_try_reap). */
static void stop_reported_once_exit_seen_unreaped(void **state)
{
    (void)state;
    rm_child c;
    const char *argv[] = {"sleep", "100", NULL};
    assert_int_equal(rm_child_spawn(&c, argv, &collector), 0);
    assert_int_equal(rm_child_stopped(&c), 0);
    assert_int_equal(rm_child_exited(&c), 0);
    kill(c.pid, SIGTSTP);
    int st = 0;
    for (int64_t end = now_ms() + 10000; !st && now_ms() < end; nap_ms(5))
        st = rm_child_stopped(&c);
    assert_int_equal(st, SIGTSTP);
    assert_int_equal(rm_child_stopped(&c), 0); /* consumed */
    kill(c.pid, SIGCONT);
    kill(c.pid, SIGTERM);
    int e = 0;
    for (int64_t end = now_ms() + 10000; e == 0 && now_ms() < end; nap_ms(5))
        e = rm_child_exited(&c);
    assert_int_equal(e, 1);
    assert_int_equal(proc_state(c.pid), 'Z'); /* exited, not reaped */
    assert_int_equal(rm_child_stopped(&c), 0);
    assert_int_equal(rm_child_try_reap(&c), 1);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 143);
    rm_child_release(&c);
}

static void exit_status_mapping(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(rm_exit_code_from_status(3 << 8), 3);
    assert_int_equal(rm_exit_code_from_status(0), 0);
    assert_int_equal(rm_exit_code_from_status(SIGKILL), 137);
    assert_int_equal(rm_exit_code_from_status(0x137f), -1); /* stopped by SIGSTOP */
    assert_string_equal(rm_status_describe(3 << 8, buf, sizeof buf), "exited with status 3");
    assert_string_equal(rm_status_describe(SIGKILL, buf, sizeof buf),
                        "killed by signal 9 (Killed)");

    /* The same through real processes. */
    rm_child c;
    const char *three[] = {"sh", "-c", "exit 3", NULL};
    assert_int_equal(rm_child_spawn(&c, three, NULL), 0);
    assert_int_equal(reap_within(&c, 5000), 1);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 3);
    rm_child_release(&c);
    const char *nine[] = {"sh", "-c", "kill -9 $$", NULL};
    assert_int_equal(rm_child_spawn(&c, nine, NULL), 0);
    assert_int_equal(reap_within(&c, 5000), 1);
    assert_int_equal(rm_exit_code_from_status(c.wstatus), 137);
    rm_child_release(&c);
}

static rm_wakeup handler_wakeup;
static void on_usr1(int sig)
{
    (void)sig;
    rm_wakeup_signal(&handler_wakeup);
}

static bool readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

static void wakeup_from_thread_or_signal_handler(void **state)
{
    (void)state;
    rm_wakeup *w = &handler_wakeup;
    assert_int_equal(rm_wakeup_open(w), 0);
    assert_true(fcntl(w->fd, F_GETFD) & FD_CLOEXEC);
    assert_false(readable(w->fd));
    assert_false(rm_wakeup_drain(w));
    rm_wakeup_signal(w);
    rm_wakeup_signal(w);
    assert_true(readable(w->fd));
    assert_true(rm_wakeup_drain(w));
    assert_false(readable(w->fd));

    struct sigaction sa = {.sa_handler = on_usr1}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    errno = 1234;
    raise(SIGUSR1);
    assert_int_equal(errno, 1234);
    sigaction(SIGUSR1, &old, NULL);
    assert_true(readable(w->fd));
    assert_true(rm_wakeup_drain(w));
    rm_wakeup_close(w);
    assert_int_equal(w->fd, -1);
}

/* After a failed test, its children would outlive the test binary: kill every child (and its
 * group) until none is left; as the subreaper we also inherit the grandchildren. */
static int kill_leftovers(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        bool any = false;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            pid_t pid = (pid_t)atoi(e->d_name), ppid = 0;
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
            FILE *f = pid > 0 ? fopen(path, "r") : NULL;
            if (!f) continue;
            char buf[512];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = '\0';
            char *rp = strrchr(buf, ')');
            if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == getpid()) {
                any = true;
                if (getpgid(pid) == pid) killpg(pid, SIGKILL);
                kill(pid, SIGKILL);
                waitpid(pid, NULL, WNOHANG);
            }
        }
        if (d) closedir(d);
        if (!any) break;
        nap_ms(20);
    }
    return 0;
}

int main(void)
{
    /* Orphans of the helpers below are re-parented to us, so their deaths can be reaped. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) perror("PR_SET_CHILD_SUBREAPER");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(captures_stdout_and_stderr_separately),
        cmocka_unit_test(stdin_is_dev_null_and_env_is_added),
        cmocka_unit_test(exec_failure_is_reported_synchronously),
        cmocka_unit_test(non_executable_file_is_eacces),
        cmocka_unit_test(own_group_empty_mask_default_dispositions),
        cmocka_unit_test(only_std_fds_reach_the_child),
        cmocka_unit_test(stop_reaps_term_obeying_child_within_grace),
        cmocka_unit_test(stop_kills_term_ignoring_group_after_grace),
        cmocka_unit_test(group_is_killed_even_when_leader_exits_first),
        cmocka_unit_test(pdeathsig_kills_collector_when_parent_is_killed),
        cmocka_unit_test(workload_without_pdeathsig_survives_parent_kill),
        cmocka_unit_test(pdeathsig_follows_the_spawning_thread),
        cmocka_unit_test(stop_gives_up_on_unreapable_child),
        cmocka_unit_test(release_kills_an_unstopped_child),
        cmocka_unit_test(stop_reported_once_exit_seen_unreaped),
        cmocka_unit_test(exit_status_mapping),
        cmocka_unit_test(wakeup_from_thread_or_signal_handler),
    };
    return cmocka_run_group_tests(tests, NULL, kill_leftovers);
}
