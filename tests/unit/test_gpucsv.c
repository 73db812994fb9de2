/* query-gpu rows: header with units, no header (legacy list, leading ts), repeated header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "saved_tz.h"
#include "summary/gpucsv.h"

struct ctx {
    struct rm_gpucsv g;
    int rc[32];
    struct rm_gpu_sample s[32];
    int n;
};

static void row(void *p, const struct rm_csv_row *r)
{
    struct ctx *c = p;
    if (c->n < 32) {
        c->rc[c->n] = rm_gpucsv_row(&c->g, r, &c->s[c->n]);
        c->n++;
    }
}

static void parse(struct ctx *c, const char *text, const char *fields)
{
    memset(c, 0, sizeof *c);
    rm_gpucsv_init(&c->g, fields);
    struct rm_csv_reader *r = rm_csv_new(row, c);
    rm_csv_feed(r, text, strlen(text));
    rm_csv_finish(r);
    rm_csv_free(r);
}

static void header_with_units(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          "timestamp, index, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
          "2026/11/21 10:15:02.113, 0, 53 %, 80257 MiB, 123.00 W\n"
          "2026/11/21 10:15:02.113, 1, [N/A], [Unknown Error], 99.5 W\n",
          NULL);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.rc[0], 0);
    assert_int_equal(c.rc[1], 1);
    assert_true(c.s[1].v[RM_GM_UTIL] == 53 && c.s[1].v[RM_GM_VRAM_USED] == 80257);
    assert_true(c.s[1].v[RM_GM_POWER] == 123);
    assert_int_equal(c.rc[2], 1);
    assert_int_equal(c.s[2].valid, 1u << RM_GM_POWER);
    assert_false(c.g.assumed);
}

static void no_header_with_ts(void **state)
{
    (void)state;
    struct ctx c;
    parse(
        &c,
        "2026-11-21T10:15:02.200+00:00,2026/11/21 10:15:02.113,0,53,7,100,200,300.5,40,1980,2619\n"
        "Xid 79 notice\n"
        "2026-11-21T10:15:03.200+00:00,2026/11/21 10:15:03.113,0,54,7\n"
        "2026-11-21T10:15:04.200+00:00,2026/11/21 10:15:03.113,0,54,7,100,200,300.5,40,1980,2619",
        "timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,"
        "temperature.gpu,clocks.current.sm,clocks.current.memory");
    assert_int_equal(c.rc[0], 1);
    assert_true(c.g.assumed && c.g.has_ts);
    assert_true(c.s[0].v[RM_GM_POWER] == 300.5);
    /* ts wins over timestamp: 10:15:02.200 UTC */
    assert_int_equal(c.s[0].t_ns % 1000000000LL, 200000000LL);
    assert_int_equal(c.rc[1], -1 - RM_SKIP_NOT_DATA);
    assert_int_equal(c.rc[2], -1 - RM_SKIP_BAD_FIELD_COUNT);
    assert_int_equal(c.rc[3], -1 - RM_SKIP_TORN);
    assert_non_null(strstr(c.g.note, "assumed"));
}

/* A list that fits no row says the column count and the list; one that fits some rows
 * says only what was assumed. */
static void no_header_list_that_does_not_fit(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c, "2026/11/21 10:00:00.000, 0, 150.00 W\n2026/11/21 10:00:01.000, 0, 250.00 W\n", NULL);
    assert_int_equal(c.rc[0], -1 - RM_SKIP_BAD_FIELD_COUNT);
    assert_int_equal(c.rc[1], -1 - RM_SKIP_BAD_FIELD_COUNT);
    assert_non_null(strstr(c.g.note, "the rows have 3 columns, the list assumed (legacy list) "
                                     "has 9: timestamp,utilization.gpu,"));
    assert_non_null(strstr(c.g.note, "--gpu-fields"));

    parse(&c, "2026/11/21 10:00:00.000, 0\n2026/11/21 10:00:00.000, 0, 150.00 W\n",
          "timestamp,index,power.draw");
    assert_int_equal(c.rc[0], -1 - RM_SKIP_BAD_FIELD_COUNT);
    assert_int_equal(c.rc[1], 1);
    assert_true(c.s[1].v[RM_GM_POWER] == 150);
    assert_non_null(strstr(c.g.note, "no header: assumed columns timestamp,index,power.draw"));
    assert_null(strstr(c.g.note, "fits"));
}

static void bad_time_and_repeated_header(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          "ts,index,power.draw\n"
          "yesterday,0,5\n"
          "ts,index,utilization.gpu,power.draw\n"
          "2026-11-21T10:15:02.200+00:00,0,9,5\n",
          NULL);
    assert_int_equal(c.rc[1], -1 - RM_SKIP_BAD_TIME);
    assert_int_equal(c.rc[2], 0);
    assert_int_equal(c.rc[3], 1);
    assert_true(c.s[3].v[RM_GM_UTIL] == 9);
}

/* A quoted line takes libcsv's path, the others the fast splitter: same fields either way. */
static void quoted_and_plain_lines_agree(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          "index,name,power.draw [W]\r\n"
          "0, \"GPU, big\" , 10.5 W\r\n"
          "\n"
          "1,  GPU small\t, 20.5 W\r\n"
          "2,\"multi\nline\",30 W\n",
          NULL);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.rc[1], 1);
    assert_int_equal(c.s[1].name.len, 8); /* "GPU, big" */
    assert_true(c.s[1].v[RM_GM_POWER] == 10.5);
    assert_int_equal(c.rc[2], 1);
    assert_int_equal(c.s[2].name.len, 9); /* "GPU small": blanks trimmed like libcsv */
    assert_true(c.s[2].v[RM_GM_POWER] == 20.5);
    assert_int_equal(c.rc[3], 1);
    assert_true(c.s[3].v[RM_GM_POWER] == 30);
}

/* What a reader hands over: every row's flags and fields, one string (not its line number:
 * libcsv's path counts a line of only "\r" apart, as before this test). */
struct rows_text {
    char buf[8192];
    size_t len;
};

static void rows_text_add(void *p, const struct rm_csv_row *r)
{
    struct rows_text *t = p;
    /* A line of blanks only: the fast splitter hands over one empty field, libcsv no row
     * (as before this test; both are skipped as not data). */
    if (r->n == 1 && r->len[0] == 0 && !r->torn) return;
    int n = snprintf(t->buf + t->len, sizeof t->buf - t->len, "%c%c%zu:", r->torn ? 'T' : '-',
                     r->overflow ? 'O' : '-', r->n);
    if (n > 0) t->len += (size_t)n;
    for (size_t i = 0; i < r->n && t->len + r->len[i] + 2 < sizeof t->buf; i++) {
        memcpy(t->buf + t->len, r->f[i], r->len[i]);
        t->len += r->len[i];
        t->buf[t->len++] = '|';
    }
    if (t->len + 1 < sizeof t->buf) t->buf[t->len++] = '\n';
}

/* text in one feed (the fast splitter takes its whole lines) or a byte at a time (libcsv
 * takes every row): the rows as text. */
static void rows_of(const char *text, size_t len, bool bytewise, struct rows_text *t)
{
    t->len = 0;
    struct rm_csv_reader *r = rm_csv_new(rows_text_add, t);
    if (bytewise)
        for (size_t i = 0; i < len; i++)
            rm_csv_feed(r, text + i, 1);
    else
        rm_csv_feed(r, text, len);
    rm_csv_finish(r);
    rm_csv_free(r);
    t->buf[t->len] = '\0';
}

/* The fast splitter trims blanks as libcsv does: on random lines of blanks, tabs, commas,
 * "\r\n" and short words (runs of blanks longer than a word of 8 included, and fields at
 * both ends of the buffer), both give the same rows. */
static void fast_splitter_trims_as_libcsv(void **state)
{
    (void)state;
    static const char *const bits[] = {" ", "  ", "\t",       "        ", "         \t", ",", ",",
                                       "a", "12", "3665 MiB", "x y",      "\r\n",        "\n"};
    static struct rows_text fast, slow;
    char text[512];
    srand(5);
    for (int k = 0; k < 20000; k++) {
        size_t len = 0, parts = 1 + (size_t)rand() % 24;
        for (size_t i = 0; i < parts; i++) {
            const char *b = bits[(size_t)rand() % (sizeof bits / sizeof bits[0])];
            size_t n = strlen(b);
            memcpy(text + len, b, n);
            len += n;
        }
        if (rand() % 4) text[len++] = '\n';
        rows_of(text, len, false, &fast);
        rows_of(text, len, true, &slow);
        if (strcmp(fast.buf, slow.buf)) {
            fprintf(stderr, "input: [%.*s]\nfast: %s\nlibcsv: %s\n", (int)len, text, fast.buf,
                    slow.buf);
            fail();
        }
    }
}

/* Consecutive ts values take the time-of-day shortcut (same date and offset): each must
 * equal the general parser's value, across a new day, a new offset, a longer fraction and a
 * leap second. */
static void ts_shortcut_matches_general_parser(void **state)
{
    (void)state;
    static const char *const ts[] = {
        "2026-11-21T10:15:02.113+00:00",    "2026-11-21T10:15:02.613+00:00",
        "2026-11-21T10:16:59.999+00:00",    "2026-11-21T23:59:59.500+00:00",
        "2026-11-22T00:00:00.000+00:00",    "2026-11-22T00:00:00.500+02:00",
        "2026-11-22T13:45:10.250+02:00",    "2026-11-22T13:45:10.250123+02:00",
        "2026-11-22T13:45:11.250123+02:00", "2026-12-31T23:59:60.000+00:00",
        "2026-12-31T23:59:59.000-05:30",    "2026-12-31T09:00:00.001-05:30",
    };
    char text[4096] = "ts,index,power.draw\n";
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        size_t u = strlen(text);
        snprintf(text + u, sizeof text - u, "%s,0,%zu\n", ts[i], 100 + i);
    }
    struct ctx c;
    parse(&c, text, NULL);
    assert_int_equal(c.n, (int)(sizeof ts / sizeof ts[0]) + 1);
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        int64_t want;
        int ok = rm_parse_time_field(ts[i], strlen(ts[i]), false, NULL, &want);
        if (ok != 0) {
            assert_int_equal(c.rc[i + 1], -(1 + RM_SKIP_BAD_TIME));
            continue;
        }
        assert_int_equal(c.rc[i + 1], 1);
        assert_true(c.s[i + 1].t_ns == want);
    }
}

/* nvidia-smi's local timestamps take the shortcut too (same date, the zone's offset at the new
 * time): each must equal the general parser's value in a zone with DST, across both of its
 * changes, a new day, a leap second, a longer fraction, a time with its own offset and epoch
 * seconds. */
static void local_shortcut_matches_general_parser(void **state)
{
    (void)state;
    static const char *const ts[] = {
        "2026/03/29 01:15:02.113",
        "2026/03/29 01:59:59.900",
        "2026/03/29 03:00:00.100",
        "2026/03/29 03:00:01.100",
        "2026/03/29 23:59:59.999",
        "2026/03/30 00:00:00.000",
        "2026/10/25 01:59:59.000",
        "2026/10/25 02:00:00.000",
        "2026/10/25 02:30:00.500",
        "2026/10/25 02:59:59.999",
        "2026/10/25 03:00:00.000",
        "2026/10/25 04:10:00.000",
        "2026/12/31 23:59:59.000",
        "2026/12/31 23:59:60.000",
        "2026/12/31 23:59:59.250123",
        "2026/12/31 23:59:58.250123",
        "2026/12/31 12:00:00.000+02:00",
        "2026/12/31 12:00:01.000+02:00",
        "1795255200.5",
        "1795255201.5",
        "2026-12-31 13:00:00.000",
        "2026-12-31 13:00:01.000",
    };
    struct saved_tz tz = set_tz("Europe/Berlin");
    char text[4096] = "timestamp, index, power.draw [W]\n";
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        size_t u = strlen(text);
        snprintf(text + u, sizeof text - u, "%s, 0, %zu W\n", ts[i], 100 + i);
    }
    struct ctx c;
    memset(&c, 0, sizeof c);
    rm_gpucsv_init(&c.g, NULL);
    struct rm_csv_reader *r = rm_csv_new(row, &c);
    rm_csv_feed(r, text, strlen(text));
    rm_csv_finish(r);
    rm_csv_free(r);
    int64_t want[sizeof ts / sizeof ts[0]];
    int ok[sizeof ts / sizeof ts[0]];
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        ok[i] = rm_parse_time_field(ts[i], strlen(ts[i]), true, NULL, &want[i]);
    restore_tz(&tz);
    assert_int_equal(c.n, (int)(sizeof ts / sizeof ts[0]) + 1);
    assert_int_equal(c.rc[0], 0);
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        if (ok[i] != 0) {
            assert_int_equal(c.rc[i + 1], -(1 + RM_SKIP_BAD_TIME));
            continue;
        }
        assert_int_equal(c.rc[i + 1], 1);
        assert_true(c.s[i + 1].t_ns == want[i]);
    }
    /* The zone mattered: the hour lost in March is an hour between these two readings. */
    assert_true(want[2] - want[1] == 200 * 1000000LL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_with_units),
        cmocka_unit_test(no_header_with_ts),
        cmocka_unit_test(no_header_list_that_does_not_fit),
        cmocka_unit_test(bad_time_and_repeated_header),
        cmocka_unit_test(quoted_and_plain_lines_agree),
        cmocka_unit_test(fast_splitter_trims_as_libcsv),
        cmocka_unit_test(ts_shortcut_matches_general_parser),
        cmocka_unit_test(local_shortcut_matches_general_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
