/* The run log's phases past the cap (issue 27, item 6): folded into one phase, exits still
 * paired with their own enters, the keep filter taking no row; and the window index answering
 * as a scan of every window would, under windows that span the whole run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "summary/runlog_read.h"
#include "summary/stats.h"

#define SEC 1000000000LL

static void feed(struct rm_runlog *r, const char *s)
{
    rm_runlog_line(r, s, strlen(s), false);
}

/* phase_enter or phase_exit of path by pid at second sec after 10:00:00. */
static void mark(struct rm_runlog *r, const char *type, int pid, const char *path, int sec)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"ts\":\"2026-11-21T10:%02d:%02d.000+00:00\",\"type\":\"%s\",\"name\":\"%s\","
             "\"path\":\"%s\",\"depth\":0,\"seconds\":1.0,\"status\":\"ok\",\"pid\":%d}",
             sec / 60, sec % 60, type, path, path, pid);
    feed(r, b);
}

static void paths_past_the_cap_fold_into_one_phase(void **state)
{
    (void)state;
    struct rm_runlog r;
    rm_runlog_init(&r);
    assert_int_equal(r.max_phases, RM_MAX_PHASES_DEFAULT);
    r.max_phases = 3;
    char p[32];
    for (int i = 0; i < 10; i++) { /* s0..s9, one after the other */
        snprintf(p, sizeof p, "s%d", i);
        mark(&r, "phase_enter", 7, p, 2 * i);
        mark(&r, "phase_exit", 7, p, 2 * i + 1);
    }
    mark(&r, "phase_enter", 7, "s1", 30); /* a path with a phase of its own, again */
    mark(&r, "phase_exit", 7, "s1", 31);
    /* Two folded paths open at once by one pid: each exit ends its own enter. */
    mark(&r, "phase_enter", 7, "x", 40);
    mark(&r, "phase_enter", 7, "y", 41);
    mark(&r, "phase_exit", 7, "x", 44);
    mark(&r, "phase_exit", 7, "z", 45); /* never entered */
    assert_int_equal(r.nphases, 4);     /* s0 s1 s2 and the other phase */
    assert_int_equal(r.other, 3);
    assert_string_equal(r.phases[r.other].path, RM_OTHER_PHASES_PATH);
    assert_int_equal(r.folded_paths, 7 + 3); /* s3..s9, x, y, z */
    assert_int_equal(r.unmatched_exits, 1);
    assert_int_equal(rm_runlog_phase_of(&r, "s1"), 1);
    assert_int_equal(rm_runlog_phase_of(&r, "s9"), r.other);
    assert_int_equal(rm_runlog_phase_of(&r, "never"), RM_NO_PHASE);
    /* A path spelled like the other phase is not it. */
    assert_int_equal(rm_runlog_phase_of(&r, RM_OTHER_PHASES_PATH), RM_NO_PHASE);
    int64_t t0 = r.first_ns;
    rm_runlog_finish(&r, t0 + 60 * SEC, NULL, NULL);
    assert_int_equal(r.phases[1].count, 2);
    /* s3..s9 (7), x [40, 44), z (1 s before its exit), y unterminated [41, 60). */
    const struct rm_phase *o = &r.phases[r.other];
    assert_int_equal(o->count, 7 + 3);
    assert_int_equal(o->unterminated, 1);
    assert_true(o->total_s == 7 * 1.0 + 1.0 + 1.0 + 19.0);
    assert_int_equal(o->first_start_ns, t0 + 6 * SEC);
    rm_runlog_free(&r);
}

static bool only_a(void *ctx, const char *path)
{
    (*(int *)ctx)++;
    return path[0] == 'a';
}

static void left_out_paths_take_no_row(void **state)
{
    (void)state;
    struct rm_runlog r;
    rm_runlog_init(&r);
    r.max_phases = 2;
    int calls = 0;
    rm_runlog_set_keep(&r, only_a, &calls);
    const char *paths[] = {"b1", "b2", "a1", "b3", "a2", "b1", "a3", "a1"};
    for (int i = 0; i < 8; i++) {
        mark(&r, "phase_enter", 1, paths[i], 2 * i);
        mark(&r, "phase_exit", 1, paths[i], 2 * i + 1);
    }
    assert_int_equal(r.unmatched_exits, 0);
    assert_int_equal(r.nphases, 3); /* a1 a2, and a3 folded */
    assert_string_equal(r.phases[0].path, "a1");
    assert_string_equal(r.phases[1].path, "a2");
    assert_int_equal(r.folded_paths, 1);
    assert_int_equal(calls, 6); /* once per distinct path */
    rm_runlog_finish(&r, RM_NO_TIME, NULL, NULL);
    assert_int_equal(r.nwin, 4); /* a1 twice, a2, a3 */
    assert_int_equal(r.phases[0].count, 2);
    rm_runlog_free(&r);
}

/* ---- the window index against a scan of every window ------------------------------ */

struct seen {
    size_t n;
    uint64_t sum; /* of (phase + 1) * (start + 7) */
};

static void over(void *ctx, size_t phase, int64_t a, int64_t b)
{
    (void)b;
    struct seen *s = ctx;
    s->n++;
    s->sum += (uint64_t)(phase + 1) * (uint64_t)(a + 7);
}

static void at(void *ctx, size_t phase)
{
    struct seen *s = ctx;
    s->n++;
    s->sum += phase + 1;
}

static void window_index_answers_as_a_scan(void **state)
{
    (void)state;
    srand(27);
    for (int round = 0; round < 40; round++) {
        struct rm_runlog r;
        rm_runlog_init(&r);
        size_t n = (size_t)(rand() % 300) + (round == 0 ? 0 : 1);
        for (size_t i = 0; i < n; i++) {
            int64_t a = rand() % 1000, len = rand() % 8 == 0 ? rand() % 1000 : rand() % 10;
            int64_t b = rand() % 50 == 0 ? RM_OPEN_END : a + len;
            r.win = realloc(r.win, (r.nwin + 1) * sizeof *r.win);
            r.win[r.nwin++] = (struct rm_phase_window){a, b, i % 17};
        }
        r.capwin = r.nwin;
        rm_runlog_finish(&r, RM_NO_TIME, NULL, NULL);
        for (int q = 0; q < 200; q++) {
            int64_t t0 = rand() % 1100 - 50, t1 = t0 + rand() % 40;
            struct seen got = {0}, want = {0};
            rm_runlog_windows_over(&r, t0, t1, over, &got);
            for (size_t i = 0; i < r.nwin; i++)
                if (r.win[i].start_ns < t1 && r.win[i].end_ns > t0)
                    over(&want, r.win[i].phase, r.win[i].start_ns, r.win[i].end_ns);
            assert_int_equal(got.n, want.n);
            assert_int_equal(got.sum, want.sum);
            struct seen gat = {0}, wat = {0};
            rm_runlog_windows_at(&r, t0, at, &gat);
            for (size_t i = 0; i < r.nwin; i++)
                if (r.win[i].start_ns <= t0 && r.win[i].end_ns > t0) at(&wat, r.win[i].phase);
            assert_int_equal(gat.n, wat.n);
            assert_int_equal(gat.sum, wat.sum);
        }
        rm_runlog_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths_past_the_cap_fold_into_one_phase),
        cmocka_unit_test(left_out_paths_take_no_row),
        cmocka_unit_test(window_index_answers_as_a_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
