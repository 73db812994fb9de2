/* The run log's fast reader (lines without a JSON tree) against the general one (jansson):
 * the same phases, windows, open enters and counts for every line, whichever reads it; and
 * the lines runmon's writers write taken by the fast one. */
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

static void same_state(const struct rm_phase_index *a, const struct rm_phase_index *b,
                       const char *what)
{
#define SAME(x)                                                                                    \
    do {                                                                                           \
        if (a->x != b->x)                                                                          \
            fail_msg("%s: " #x " %lld != %lld", what, (long long)a->x, (long long)b->x);           \
    } while (0)
    SAME(lines);
    SAME(events);
    SAME(torn);
    SAME(garbage);
    SAME(bad_time);
    SAME(unmatched_exits);
    SAME(nonconforming);
    SAME(warnings);
    SAME(first_ns);
    SAME(last_ns);
    SAME(session_start_ns);
    SAME(session_end_ns);
    SAME(nphases);
    SAME(other);
    SAME(folded_paths);
    SAME(nwin);
    SAME(nopen);
    for (size_t i = 0; i < a->nphases; i++) {
        const struct rm_phase *x = &a->phases[i], *y = &b->phases[i];
        if (strcmp(x->path, y->path) || x->depth != y->depth || x->count != y->count ||
            x->ok != y->ok || x->error != y->error || x->unterminated != y->unterminated ||
            memcmp(&x->total_s, &y->total_s, sizeof x->total_s) ||
            x->first_start_ns != y->first_start_ns || x->last_end_ns != y->last_end_ns ||
            !x->fw != !y->fw)
            fail_msg("%s: phase %zu (%s) differs", what, i, x->path);
    }
    SAME(metrics.lines);
    SAME(metrics.n);
    SAME(metrics.bad_lines);
    SAME(metrics.bad_values);
    SAME(metrics.past_names);
    for (size_t i = 0; i < a->metrics.n; i++)
        if (strcmp(a->metrics.name[i], b->metrics.name[i]) ||
            memcmp(&a->metrics.run[i], &b->metrics.run[i], sizeof a->metrics.run[i]))
            fail_msg("%s: metric %zu (%s) differs", what, i, a->metrics.name[i]);
    for (size_t i = 0; i < a->nwin; i++)
        if (memcmp(&a->win[i], &b->win[i], sizeof a->win[i]))
            fail_msg("%s: window %zu differs", what, i);
    for (size_t i = 0; i < a->nopen; i++)
        if (memcmp(&a->open[i], &b->open[i], sizeof a->open[i]))
            fail_msg("%s: open enter %zu differs", what, i);
#undef SAME
}

/* Each line fed to both readers, the state compared after each. */
static uint64_t feed_both(const char *const *lines, size_t n)
{
    struct rm_phase_index fast, general;
    rm_runlog_init(&fast);
    rm_runlog_init(&general);
    fast.max_phases = general.max_phases = 6; /* folding too */
    general.general_only = true;
    for (size_t i = 0; i < n; i++) {
        rm_runlog_line(&fast, lines[i], strlen(lines[i]), false);
        rm_runlog_line(&general, lines[i], strlen(lines[i]), false);
        same_state(&fast, &general, lines[i]);
    }
    assert_int_equal(general.fast_lines, 0);
    uint64_t took = fast.fast_lines;
    rm_runlog_free(&fast);
    rm_runlog_free(&general);
    return took;
}

#define TS "\"ts\":\"2026-11-21T10:00:01.250+00:00\""

static void odd_lines_read_alike(void **state)
{
    (void)state;
    static const char *const lines[] = {
        /* as the writers write them */
        "{" TS ",\"type\":\"phase_enter\",\"name\":\"a\",\"path\":\"a\",\"depth\":0,\"pid\":7,"
        "\"t\":1795410049.05}",
        "{" TS ",\"type\":\"phase_exit\",\"name\":\"a\",\"path\":\"a\",\"depth\":0,"
        "\"seconds\":0.1,\"status\":\"ok\",\"pid\":7,\"t\":1795410049.15}",
        "{" TS ",\"type\":\"phase\",\"name\":\"b\",\"seconds\":2,\"status\":\"error\",\"pid\":7}",
        /* blanks, order, keys it does not know, literals */
        "  { \"type\" : \"phase_enter\" ,\"path\":\"c\", \"x\":null,\"y\":true,\"z\":false, " TS
        " }",
        "{\"type\":\"phase_exit\",\"path\":\"c\",\"t\":1795410050,\"seconds\":1.5e0}",
        "{\"type\":\"phase_exit\",\"path\":\"c\",\"t\":1795410050.123456789012}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051,\"seconds\":0."
        "000000000000000000000001}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051,\"seconds\":0.1000000000000000000001}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":-0.0,\"seconds\":1}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":17954100510000000000,\"seconds\":1}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051,\"seconds\":1000000000}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051,\"seconds\":-1}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051,\"seconds\":\"1\"}",
        "{\"type\":\"phase\",\"path\":\"d\",\"t\":\"1795410051\",\"seconds\":1}",
        "{\"ts\":12,\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051,\"seconds\":1}",
        "{\"ts\":\"yesterday\",\"type\":\"phase\",\"path\":\"d\",\"seconds\":1}",
        "{\"type\":\"phase_enter\",\"path\":\"e\",\"depth\":1.0,\"pid\":7.0,\"t\":1795410052}",
        "{\"type\":\"phase_enter\",\"path\":\"e\",\"depth\":99999999999,\"pid\":\"7\",\"t\":"
        "1795410052}",
        "{\"type\":\"phase_exit\",\"path\":\"e\",\"pid\":0,\"t\":1795410053}",
        "{\"type\":\"phase_exit\",\"path\":7,\"name\":\"e\",\"pid\":0,\"t\":1795410053}",
        /* for the general reader: escapes, bytes past ASCII, nesting, repeats */
        "{\"type\":\"phase\",\"path\":\"f\\/g\",\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"path\":\"caf\xc3\xa9\",\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"path\":\"bad\xff\",\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"\\u0070ath\":\"h\",\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"path\":\"h\",\"path\":\"i\",\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"data\":{\"path\":\"j\"},\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"data\":\"k\",\"path\":\"k\",\"t\":1795410054,\"seconds\":1}",
        "{\"type\":\"phase\",\"path\":\"k\",\"t\":1795410054,\"seconds\":1,\"framework\":{\"name\":"
        "\"torch\",\"peak_allocated_mb\":{\"0\":5}}}",
        "{\"type\":\"phase\",\"path\":\"k\",\"t\":1795410054,\"seconds\":1,\"list\":[1,2]}",
        "{" TS ",\"type\":\"event\",\"event\":\"session_start\"}",
        "{" TS ",\"type\":\"event\",\"event\":\"warning\",\"gpu\":0}",
        "{" TS ",\"type\":\"other\"}",
        "{" TS ",\"type\":3}",
        "{" TS "}",
        "{}",
        /* not JSON, or not one object */
        "[1,2]",
        "\"phase\"",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":1} x",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":1}}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":01}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":1.}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":.5}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":+1}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":-}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":tru}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":nulls}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",}",
        "{" TS ",\"type\":\"phase\" \"path\":\"l\"}",
        "{" TS ",\"type\":\"phase\",\"path\":\"tab\there\",\"seconds\":1}",
        "{" TS ",\"type\":\"phase\",\"path\":\"l\",\"seconds\":1e999}",
        "{" TS ",",
        /* paths past the cap of 6, and exits pairing with them */
        "{" TS ",\"type\":\"phase_enter\",\"path\":\"m\",\"pid\":1}",
        "{" TS ",\"type\":\"phase_enter\",\"path\":\"n\",\"pid\":1}",
        "{" TS ",\"type\":\"phase_exit\",\"path\":\"m\",\"pid\":1}",
        "{" TS ",\"type\":\"phase_exit\",\"path\":\"n\",\"pid\":1}",
    };
    uint64_t took = feed_both(lines, sizeof lines / sizeof lines[0]);
    assert_true(took >= 20); /* the writers' lines, and the other flat ones */
}

/* Random flat lines of known keys and values, some of them broken. */
static void random_lines_read_alike(void **state)
{
    (void)state;
    static const char *const keys[] = {"ts",    "t",      "type", "path", "name", "seconds",
                                       "depth", "status", "pid",  "data", "other"};
    static const char *const vals[] = {"\"2026-11-21T10:00:01.250+00:00\"",
                                       "\"2026-11-21T10:00:0\"",
                                       "1795410049.05",
                                       "1795410049",
                                       "0.1",
                                       "2",
                                       "-3",
                                       "0",
                                       "1e2",
                                       "\"phase\"",
                                       "\"phase_enter\"",
                                       "\"phase_exit\"",
                                       "\"p1\"",
                                       "\"p2\"",
                                       "\"p3\"",
                                       "\"ok\"",
                                       "\"error\"",
                                       "null",
                                       "true",
                                       "[]",
                                       "{}",
                                       "\"\\n\"",
                                       "0.30000000000000004",
                                       "12345678901234567890",
                                       "-0.5"};
    char *lines[400];
    char b[1024];
    srand(27);
    for (size_t i = 0; i < 400; i++) {
        size_t n = 0, k = (size_t)(rand() % 7);
        n += (size_t)snprintf(b + n, sizeof b - n, "{\"type\":%s",
                              rand() % 5 ? vals[10 + rand() % 3] : vals[rand() % 25]);
        n += (size_t)snprintf(b + n, sizeof b - n, ",\"t\":%s",
                              rand() % 6 ? "1795410049.05" : vals[rand() % 25]);
        for (size_t j = 0; j < k; j++)
            n += (size_t)snprintf(b + n, sizeof b - n, ",\"%s\":%s", keys[rand() % 11],
                                  vals[rand() % 25]);
        snprintf(b + n, sizeof b - n, "%s", rand() % 20 ? "}" : "");
        lines[i] = strdup(b);
    }
    feed_both((const char *const *)lines, 400);
    for (size_t i = 0; i < 400; i++)
        free(lines[i]);
}

/* Metric lines: the writers' taken by the fast reader, every other sort left to the general
 * one, the same statistics and counts either way. */
static void metric_lines_read_alike(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "{" TS ",\"type\":\"metric\",\"step\":3,\"values\":{\"loss\":0.41,\"acc\":0.87},"
        "\"pid\":7,\"t\":1795410049.25}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"loss\":2.0},\"pid\":7}",
        "{" TS ",\"type\":\"metric\",\"values\":{ \"loss\" : 1 , \"top-1 acc\":-0.5 }}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"loss\":1e-3}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"loss\":\"NaN\"}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"loss\":null}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"a/b\":1,\"ok\":2}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\" a\":1}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"x\":1,\"x\":2}}",
        "{" TS ",\"type\":\"metric\",\"values\":{}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"x\":{\"y\":1}}}",
        "{" TS ",\"type\":\"metric\",\"values\":[1]}",
        "{" TS ",\"type\":\"metric\",\"step\":-1,\"values\":{\"x\":1}}",
        "{" TS ",\"type\":\"metric\",\"step\":1.5,\"values\":{\"x\":1}}",
        "{" TS ",\"type\":\"metric\",\"step\":\"2\",\"values\":{\"x\":1}}",
        "{" TS ",\"type\":\"metric\",\"step\":12345678901234567890,\"values\":{\"x\":1}}",
        "{" TS ",\"type\":\"metric\"}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"caf\xc3\xa9\":1}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"a\\u0001\":1}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"x\":12345678901234567890}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"x\":0.1234567890123456789}}",
        "{\"type\":\"metric\",\"values\":{\"x\":1}}",
        "{\"type\":\"metric\",\"t\":1795410050,\"values\":{\"x\":7}}",
        "{" TS ",\"type\":\"phase\",\"path\":\"p\",\"seconds\":1,\"values\":{\"x\":1}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"x\":1},\"values\":{\"y\":2}}",
        "{" TS ",\"type\":\"objective\",\"objectives\":[{\"metric\":\"x\",\"goal\":\"max\"}]}",
    };
    uint64_t took = feed_both(lines, sizeof lines / sizeof lines[0]);
    assert_true(took >= 5); /* the first three, and the two without ts */
    /* Random values objects. */
    static const char *const names[] = {"\"loss\"", "\"acc\"",  "\"a/b\"", "\"\"",
                                        "\" x\"",   "\"loss\"", "\"tput\""};
    static const char *const vals[] = {
        "1", "-0.25", "0.1", "1e2", "\"1\"", "null", "{}", "123456789012345678901", "2.5"};
    char *rl[300];
    char b[2048];
    srand(39);
    for (size_t i = 0; i < 300; i++) {
        size_t n = (size_t)snprintf(b, sizeof b, "{" TS ",\"type\":\"metric\"");
        if (rand() % 3 == 0)
            n += (size_t)snprintf(b + n, sizeof b - n, ",\"step\":%s",
                                  rand() % 4 ? "7" : vals[rand() % 9]);
        n += (size_t)snprintf(b + n, sizeof b - n, ",\"values\":{");
        for (int k = 0, m = rand() % 5; k < m; k++)
            n += (size_t)snprintf(b + n, sizeof b - n, "%s%s:%s", k ? "," : "", names[rand() % 7],
                                  rand() % 4 ? "0.5" : vals[rand() % 9]);
        snprintf(b + n, sizeof b - n, "}}");
        rl[i] = strdup(b);
    }
    feed_both((const char *const *)rl, 300);
    for (size_t i = 0; i < 300; i++)
        free(rl[i]);
}

/* Metric lines as Python writes them (repr: up to 17 significant digits) are the fast
 * reader's, with the values jansson's strtod reads: a run log of 10,000 of them through
 * jansson made each read of it 5x slower (issue 39, a sink's first open). */
static void python_metric_lines_fast(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "{" TS ",\"type\":\"metric\",\"step\":1,\"values\":{\"loss\":1.9801980198019802,"
        "\"acc\":0.00990099009900991},\"pid\":1}",
        "{" TS ",\"type\":\"metric\",\"step\":2,\"values\":{\"loss\":0.30000000000000004,"
        "\"acc\":-0.1234567890123456789}}",
        "{" TS ",\"type\":\"metric\",\"values\":{\"x\":123456789.12345678901}}",
        /* one line, split for width (parenthesized: clang's -Wstring-concatenation) */
        ("{\"type\":\"phase\",\"path\":\"d\",\"t\":1795410051.1234567891234,\"seconds\":"
         "0.1000000000000000000001}"),
    };
    size_t n = sizeof lines / sizeof lines[0];
    assert_int_equal(feed_both(lines, n), n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(odd_lines_read_alike),
        cmocka_unit_test(metric_lines_read_alike),
        cmocka_unit_test(python_metric_lines_fast),
        cmocka_unit_test(random_lines_read_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
