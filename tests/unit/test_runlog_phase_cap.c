/* The run log's phases past the cap (issue 27, item 6): folded into one phase, exits still
 * paired with their own enters, the keep filter taking no row; and the window index answering
 * as a scan of every window would, under windows that span the whole run. */
#include <math.h>
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

static void feed(struct rm_phase_index *r, const char *s)
{
    rm_runlog_line(r, s, strlen(s), false);
}

/* phase_enter or phase_exit of path by pid at second sec after 10:00:00. */
static void mark(struct rm_phase_index *r, const char *type, int pid, const char *path, int sec)
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
    struct rm_phase_index r;
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
    struct rm_phase_index r;
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
        struct rm_phase_index r;
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

/* ---- folding after reading (the budget of phase rows x GPUs) ------------------------ */

/* A run of phase lines of 12 paths by two pids, nested and overlapping, some `phase` lines
 * with framework peaks, and enters never closed. */
static void feed_run(struct rm_phase_index *r)
{
    srand(6);
    char p[32], b[512];
    for (int i = 0; i < 200; i++) {
        int pid = 1 + rand() % 2, k = rand() % 12, sec = 3 * i;
        snprintf(p, sizeof p, "p%d", k);
        if (rand() % 4 == 0) {
            snprintf(b, sizeof b,
                     "{\"ts\":\"2026-11-21T10:%02d:%02d.000+00:00\",\"type\":\"phase\","
                     "\"path\":\"%s\",\"seconds\":1.5,\"status\":\"%s\",\"pid\":%d,"
                     "\"framework\":{\"name\":\"torch\",\"peak_allocated_mb\":{\"%d\":%d}}}",
                     sec / 60 % 60, sec % 60, p, k % 3 ? "ok" : "error", pid, k % 4, 100 + i);
            feed(r, b);
            continue;
        }
        mark(r, "phase_enter", pid, p, sec);
        if (rand() % 9) mark(r, "phase_exit", pid, p, sec + 1 + rand() % 5);
    }
}

static void folding_later_is_reading_with_the_lower_cap(void **state)
{
    (void)state;
    struct rm_phase_index a, b;
    rm_runlog_init(&a);
    rm_runlog_init(&b);
    a.max_phases = 4;
    feed_run(&a);
    feed_run(&b);
    assert_int_equal(b.nphases, 12); /* nothing folded while reading */
    rm_runlog_fold_after(&b, 4);
    assert_int_equal(b.max_phases, 4);
    int64_t end = a.last_ns + 60 * SEC;
    rm_runlog_finish(&a, end, NULL, NULL);
    rm_runlog_finish(&b, end, NULL, NULL);
    assert_int_equal(a.nphases, 5);
    assert_int_equal(b.nphases, a.nphases);
    assert_int_equal(b.other, a.other);
    assert_int_equal(b.folded_paths, a.folded_paths);
    for (size_t i = 0; i < a.nphases; i++) {
        const struct rm_phase *x = &a.phases[i], *y = &b.phases[i];
        assert_string_equal(y->path, x->path);
        assert_int_equal(y->depth, x->depth);
        assert_int_equal(y->count, x->count);
        assert_int_equal(y->ok, x->ok);
        assert_int_equal(y->error, x->error);
        assert_int_equal(y->unterminated, x->unterminated);
        assert_true(fabs(y->total_s - x->total_s) < 1e-9);
        assert_int_equal(y->first_start_ns, x->first_start_ns);
        assert_int_equal(y->last_end_ns, x->last_end_ns);
        assert_int_equal(!y->fw, !x->fw);
        for (int d = 0; x->fw && d < RM_FW_MAX_DEVICES; d++)
            assert_true(isnan(x->fw->allocated_mb[d])
                            ? isnan(y->fw->allocated_mb[d])
                            : y->fw->allocated_mb[d] == x->fw->allocated_mb[d]);
    }
    assert_true(a.phases[a.other].fw != NULL);
    /* The same windows, each of the same phase. */
    assert_int_equal(b.nwin, a.nwin);
    for (size_t i = 0; i < a.nwin; i++) {
        struct seen wa = {0}, wb = {0};
        rm_runlog_windows_over(&a, a.win[i].start_ns, a.win[i].start_ns + 1, over, &wa);
        rm_runlog_windows_over(&b, a.win[i].start_ns, a.win[i].start_ns + 1, over, &wb);
        assert_int_equal(wb.n, wa.n);
        assert_int_equal(wb.sum, wa.sum);
    }
    char p[32];
    for (int k = 0; k < 13; k++) {
        snprintf(p, sizeof p, "p%d", k);
        assert_int_equal(rm_runlog_phase_of(&b, p), rm_runlog_phase_of(&a, p));
    }
    /* Lines read after it fold as the lower cap says. */
    mark(&b, "phase_enter", 3, "p2", 10);
    mark(&b, "phase_enter", 3, "new", 11);
    assert_int_equal(b.nphases, 5);
    assert_int_equal(b.folded_paths, a.folded_paths + 1);
    rm_runlog_free(&a);
    rm_runlog_free(&b);
}

static void rows_share_the_budget(void **state)
{
    (void)state;
    struct rm_phase_index r;
    rm_runlog_init(&r);
    assert_int_equal(r.max_cells, RM_MAX_PHASES_DEFAULT);
    assert_int_equal(rm_runlog_rows_for(&r, 0), 10000);
    assert_int_equal(rm_runlog_rows_for(&r, 1), 10000);
    assert_int_equal(rm_runlog_rows_for(&r, 8), 1250);
    assert_int_equal(rm_runlog_rows_for(&r, 3), 3333);
    assert_int_equal(rm_runlog_rows_for(&r, 20000), 1);
    /* Fewer paths than the rows: nothing folds, and no other phase is made. */
    mark(&r, "phase", 1, "a", 5);
    rm_runlog_fold_after(&r, 0);
    assert_int_equal(r.nphases, 1);
    assert_int_equal(r.other, RM_NO_PHASE);
    assert_int_equal(r.max_phases, 1);
    rm_runlog_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths_past_the_cap_fold_into_one_phase),
        cmocka_unit_test(left_out_paths_take_no_row),
        cmocka_unit_test(folding_later_is_reading_with_the_lower_cap),
        cmocka_unit_test(rows_share_the_budget),
        cmocka_unit_test(window_index_answers_as_a_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
