/* Tests of monitor/collector.c, the supervisor of the nvidia-smi children, on a fake clock
 * (tests/unit/fake_clock.h): real children (sh, fed through a FIFO the test writes to), real
 * pipes, a real epoll loop on its own thread; only "now" and the end of the loop's waits are
 * the test's. So a silent child is declared stale exactly at its deadline, restarts back off
 * 1, 2, 4 ... 30 s to the nanosecond, and down_s is exact, without sleeping through any of
 * it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <poll.h>
#include <signal.h>

#include "collector_rig.h"

/* Prints one row when it starts the first time, then relays the FIFO's lines. */
#define FIRST_ROW_THEN_FIFO "[ -e \"$2\" ] || { : >\"$2\"; echo row; }; exec cat \"$1\""

/* A child that goes silent is stale exactly stale_ns after its last row (not 1 ns sooner),
 * restarts 1 s later (not 1 ns sooner), and its first row after that is collector_recovered
 * with the whole outage as down_s; a second stale failure within the minute backs off 2 s. */
static void stale_at_deadline_restart_recovered(void **state)
{
    (void)state;
    struct rig *r = rig_new(FIRST_ROW_THEN_FIFO);
    rig_start(r);
    await_line(r, 1);
    assert_int_equal(r->line_ts[0], R0); /* the receipt time is the clock's */

    advance(r, T0 + STALE - 1);
    assert_int_equal(count(r, "collector_degraded"), 0);
    assert_int_equal(r->col.running, 1);
    advance(r, T0 + STALE);
    json_t *d = await_event(r, "collector_degraded", 1);
    assert_string_equal(str(d, "collector"), "gpu");
    assert_true(!strncmp(str(d, "reason"), "no valid row for 5.0 s", 22));
    assert_int_equal(num(d, "consecutive_failures"), 1);
    assert_true(num(d, "retry_in_s") == 1.0);
    assert_int_equal(r->health, RM_HEALTH_DEGRADED);
    assert_int_equal(r->failures, 1);
    assert_int_equal(r->col.running, 0);

    advance(r, T0 + STALE + S - 1);
    assert_int_equal(r->col.running, 0);
    advance(r, T0 + STALE + S); /* restarted: this child waits on the FIFO */
    assert_int_equal(r->col.running, 1);
    advance(r, T0 + 8 * S + S / 4);
    assert_int_equal(count(r, "collector_recovered"), 0);
    say(r, "row 2\n");
    d = await_event(r, "collector_recovered", 1);
    assert_true(num(d, "down_s") == 3.25); /* from the failure at T0+5 s to this row */
    assert_true(!strncmp(str(d, "last_error"), "no valid row for 5.0 s", 22));
    assert_int_equal(r->health, RM_HEALTH_HEALTHY);
    say(r, "row 3\n");
    await_line(r, 3);
    assert_int_equal(count(r, "collector_recovered"), 1); /* once per outage */
    assert_int_equal(r->line_ts[2], R0 + 8 * S + S / 4);

    /* Silent again from T0+8.25 s: stale at T0+13.25 s; within the minute, so 2 s. */
    advance(r, T0 + 13 * S + S / 4 - 1);
    assert_int_equal(count(r, "collector_degraded"), 1);
    advance(r, T0 + 13 * S + S / 4);
    d = await_event(r, "collector_degraded", 2);
    assert_int_equal(num(d, "consecutive_failures"), 2);
    assert_true(num(d, "retry_in_s") == 2.0);
    rig_free(r);
}

/* A child that fails at once: restarts 1, 2, 4, 8, 16 s apart, then every 30 s, each exactly
 * then; each failure quotes the child's first stderr line and its exit status. */
static void backoff_doubles_to_thirty_seconds(void **state)
{
    (void)state;
    struct rig *r = rig_new("echo 'NVIDIA-SMI has failed' >&2; exit 9");
    rig_start(r);
    static const int delay_s[] = {1, 2, 4, 8, 16, 30, 30};
    int64_t t = T0;
    for (int k = 0; k < 7; k++) {
        json_t *d = await_event(r, "collector_degraded", k + 1);
        assert_int_equal(num(d, "consecutive_failures"), k + 1);
        assert_true(num(d, "retry_in_s") == delay_s[k]);
        assert_string_equal(str(d, "reason"),
                            "nvidia-smi exited: NVIDIA-SMI has failed (exited with status 9)");
        int64_t next = t + delay_s[k] * S;
        advance(r, next - 1);
        assert_int_equal(r->col.running, 0);
        assert_int_equal(count(r, "collector_degraded"), k + 1);
        advance(r, next);
        t = next;
    }
    await_event(r, "collector_degraded", 8);
    assert_int_equal(r->failures, 8);
    assert_int_equal(count(r, "collector_recovered"), 0);
    rig_free(r);
}

/* A healthy minute (of rows) resets the backoff: the next failure waits 1 s again. */
static void backoff_resets_after_a_healthy_minute(void **state)
{
    (void)state;
    /* Fails the first time; then relays the FIFO until it reads "quit". */
    struct rig *r = rig_new("[ -e \"$2\" ] || { : >\"$2\"; exit 4; }; "
                            "while read -r l; do [ \"$l\" = quit ] && exit 5; echo \"$l\"; "
                            "done <\"$1\"");
    rig_start(r);
    json_t *d = await_event(r, "collector_degraded", 1);
    assert_true(num(d, "retry_in_s") == 1.0);
    advance(r, T0 + S);
    say(r, "row\n");
    await_event(r, "collector_recovered", 1);
    /* A row every 4 s (under the 5 s deadline) until a minute after the first good one. */
    int n = 1;
    for (int64_t t = T0 + 5 * S; t <= T0 + 61 * S; t += 4 * S) {
        advance(r, t);
        say(r, "row\n");
        await_line(r, ++n);
    }
    assert_int_equal(count(r, "collector_degraded"), 1);
    say(r, "quit\n");
    d = await_event(r, "collector_degraded", 2);
    assert_int_equal(num(d, "consecutive_failures"), 1);
    assert_true(num(d, "retry_in_s") == 1.0);
    rig_free(r);
}

/* No nvidia-smi at all: collector_unavailable once, never a restart. */
static void missing_program_is_unavailable(void **state)
{
    (void)state;
    struct rig *r = rig_new("");
    r->col.argv[0] = "/nonexistent/nvidia-smi";
    rig_start(r);
    json_t *d = await_event(r, "collector_unavailable", 1);
    assert_string_equal(str(d, "collector"), "gpu");
    assert_int_equal(r->health, RM_HEALTH_UNAVAILABLE);
    advance(r, T0 + 3600 * S);
    assert_int_equal(count(r, "collector_unavailable"), 1);
    assert_int_equal(count(r, "collector_degraded"), 0);
    assert_int_equal(r->failures, 0);
    rig_free(r);
}

/* Waits (real time) until the collector's stdout pipe holds something: the child relayed the
 * test's row. */
static void await_pipe(struct rig *r)
{
    struct pollfd p = {.fd = r->col.child.out_fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, FAKE_CLOCK_PATIENCE_S * 1000), 1);
}

/* With a tick, a collector whose read_due says no leaves its rows in the pipe at that slot
 * (a batching stream reads them when its write is due); the slot that says yes reads them.
 * A child's exit is still seen at once, and the rows it left unread are not lost. */
static void pipe_read_only_at_due_slots(void **state)
{
    (void)state;
    struct rig *r = rig_new("exec cat \"$1\"");
    rig_tick(r, S / 10);
    atomic_store(&r->read_now, 0);
    rig_start(r);
    assert_true(fake_clock_settle_after(&r->clk, 0)); /* started, waiting for its first slot */
    say(r, "row 1\n");
    if (r->col.child.pidfd < 0) {
        /* No pidfd (Linux < 5.3, or under valgrind): an exit is seen only as the pipes' EOF,
         * so they wake the thread and are read as soon as they hold something. */
        await_line(r, 1);
        rig_free(r);
        return;
    }
    await_pipe(r);
    advance(r, T0 + S / 10);
    advance(r, T0 + 2 * S / 10);
    assert_int_equal(atomic_load(&r->slots), 2);
    assert_int_equal(r->lines, 0); /* held in the pipe */
    atomic_store(&r->read_now, 1);
    advance(r, T0 + 3 * S / 10);
    assert_int_equal(r->lines, 1);
    assert_int_equal(r->line_ts[0], R0 + 3 * S / 10); /* read at that slot */

    atomic_store(&r->read_now, 0);
    say(r, "row 2\n");
    await_pipe(r);
    advance(r, T0 + 4 * S / 10);
    assert_int_equal(r->lines, 1);
    kill(r->col.child.pid, SIGKILL);
    json_t *d = await_event(r, "collector_degraded", 1);
    assert_true(!strncmp(str(d, "reason"), "nvidia-smi exited", 17));
    assert_int_equal(r->lines, 2);               /* read before the child was let go */
    assert_int_equal(atomic_load(&r->slots), 4); /* seen between slots, not at the next */
    rig_free(r);
}

int main(void)
{
    json_object_seed(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_at_deadline_restart_recovered),
        cmocka_unit_test(backoff_doubles_to_thirty_seconds),
        cmocka_unit_test(backoff_resets_after_a_healthy_minute),
        cmocka_unit_test(missing_program_is_unavailable),
        cmocka_unit_test(pipe_read_only_at_due_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
