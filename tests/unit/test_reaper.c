/* monitor/reaper: real processes. A setsid'd grandchild whose parent exits is adopted (the
 * test process is a subreaper), found by the walk with the rest of the tree, signalled, and
 * reaped by pid; a kept zombie is left to its owner; a zombie is never counted as alive. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "monitor/reaper.h"

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Field 3 (state) and 4 (ppid) of /proc/PID/stat; 0 when it is gone. */
static char state_of(pid_t pid, pid_t *ppid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    char st = 0;
    int pp = 0;
    if (!rp || sscanf(rp + 2, "%c %d", &st, &pp) != 2) return 0;
    if (ppid) *ppid = pp;
    return st;
}

/* A child that starts a grandchild in a session of its own, tells its pid and exits: the
 * grandchild is orphaned. Returns the grandchild's pid once it is ours. */
static pid_t orphan_in_new_session(void)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t a = fork();
    assert_true(a >= 0);
    if (a == 0) {
        pid_t b = fork();
        if (b == 0) {
            setsid();
            for (;;)
                pause();
        }
        (void)!write(p[1], &b, sizeof b);
        _exit(0);
    }
    pid_t b = 0;
    assert_int_equal(read(p[0], &b, sizeof b), (ssize_t)sizeof b);
    close(p[0]);
    close(p[1]);
    assert_int_equal(waitpid(a, NULL, 0), a);
    pid_t pp = 0;
    for (int i = 0; i < 500 && (state_of(b, &pp) == 0 || pp != getpid()); i++)
        nap_ms(10);
    assert_int_equal(pp, getpid()); /* adopted: the subreaper, not init */
    return b;
}

/* A child with a child of its own, both waiting. */
static pid_t parent_with_child(void)
{
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        if (fork() == 0)
            for (;;)
                pause();
        for (;;)
            pause();
    }
    return c;
}

static void finds_signals_and_reaps_the_whole_tree(void **state)
{
    (void)state;
    assert_int_equal(rm_reaper_enable(), 0);
    pid_t b = orphan_in_new_session();
    pid_t c = parent_with_child();
    int n = 0;
    for (int i = 0; i < 500 && (n = rm_reaper_signal(0)) < 3; i++)
        nap_ms(10);
    assert_int_equal(n, 3); /* the adopted orphan, the child and its child */
    assert_int_equal(rm_reaper_signal(SIGKILL), 3);
    int left = 1;
    for (int i = 0; i < 500 && left; i++) {
        rm_reaper_reap(0);
        left = rm_reaper_signal(0);
        if (left) nap_ms(10);
    }
    assert_int_equal(left, 0);
    /* Every one reaped (the grandchild of c was adopted in turn): no child of ours is left. */
    for (int i = 0; i < 500 && rm_reaper_reap(0) >= 0 && waitpid(-1, NULL, WNOHANG) == 0; i++)
        nap_ms(10);
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    assert_int_equal(state_of(b, NULL), 0);
    assert_int_equal(state_of(c, NULL), 0);
}

static void keeps_the_commands_zombie_and_counts_no_zombie(void **state)
{
    (void)state;
    pid_t e = fork();
    assert_true(e >= 0);
    if (e == 0) _exit(7);
    for (int i = 0; i < 500 && state_of(e, NULL) != 'Z'; i++)
        nap_ms(10);
    assert_int_equal(state_of(e, NULL), 'Z');
    assert_int_equal(rm_reaper_signal(0), 0); /* dead: nothing to signal */
    assert_int_equal(rm_reaper_reap(e), 0);   /* kept for its owner */
    int st = 0;
    assert_int_equal(waitpid(e, &st, WNOHANG), e);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

/* Whatever a failed test left running goes too. */
static int kill_leftovers(void **state)
{
    (void)state;
    rm_reaper_signal(SIGKILL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_signals_and_reaps_the_whole_tree),
        cmocka_unit_test(keeps_the_commands_zombie_and_counts_no_zombie),
    };
    return cmocka_run_group_tests(tests, NULL, kill_leftovers);
}
