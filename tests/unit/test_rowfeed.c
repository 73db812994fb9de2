/* The row feed (record/rowfeed.c): a stream written by the real monitor/stream.c, with
 * rollover, read as it grows: every row once and in order across sealed files, the header of
 * each file flagged, a consumer that stops gets the line again, a reader that falls behind
 * several seals catches up, a sealed file removed before it was read is counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor/stream.h"
#include "record/rowfeed.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/runmon-test-rowfeed.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* What a consumer saw. */
struct seen {
    long next;    /* the sequence number expected next */
    int headers;  /* header lines (first lines of a file) */
    int refuse;   /* refuse lines from this one on (0: take all) */
    long offered; /* lines offered, taken or not */
};

static int take(void *ctx, int stream, const char *line, size_t len, int first)
{
    struct seen *s = ctx;
    assert_int_equal(stream, RM_STREAM_GPU);
    s->offered++;
    if (first) {
        assert_true(len == 6 && !memcmp(line, "ts,seq", 6));
        s->headers++;
        return 0;
    }
    if (s->refuse && s->next >= s->refuse) return 1;
    const char *comma = memchr(line, ',', len);
    assert_non_null(comma);
    long seq = strtol(comma + 1, NULL, 10);
    if (seq != s->next) fail_msg("row %ld where %ld was due", seq, s->next);
    s->next++;
    return 0;
}

static struct rm_stream st;
static long written;

static void open_stream(uint64_t rollover)
{
    memset(&st, 0, sizeof st);
    assert_int_equal(rm_stream_open(&st, dir, RM_STREAM_GPU), 0);
    st.rollover_bytes = rollover;
    const char *names[] = {"seq"};
    assert_int_equal(rm_stream_header(&st, names, 1), 0);
    written = 0;
}

/* n rows, then a flush (which seals once the file reached the rollover size). */
static void write_rows(int n)
{
    for (int i = 0; i < n; i++) {
        rm_stream_begin_row(&st, 1700000000000000000LL + written * 1000000LL);
        rm_stream_field_u64(&st, (uint64_t)written++);
        rm_stream_end_row(&st);
    }
    assert_int_equal(rm_stream_flush_now(&st), 0);
}

static int sealed_files(void)
{
    int n = 0;
    char path[128];
    for (int k = 1; k < 1000; k++) {
        snprintf(path, sizeof path, "%s/gpu-%06d.csv", dir, k);
        n += access(path, F_OK) == 0;
    }
    return n;
}

static void drain(struct rm_rowfeed *f, struct seen *s)
{
    while (rm_rowfeed_read(f, RM_STREAM_GPU, 7, take, s) > 0) {
    }
}

static void test_follows_rollover_in_step(void **state)
{
    (void)state;
    struct rm_rowfeed f;
    struct seen s = {0};
    assert_int_equal(rm_rowfeed_open(&f, dir, 1u << RM_STREAM_GPU), 0);
    drain(&f, &s); /* nothing exists yet */
    assert_int_equal(s.offered, 0);
    open_stream(1000);
    for (int round = 0; round < 60; round++) {
        write_rows(1 + round % 9);
        drain(&f, &s);
        assert_int_equal(s.next, written);
    }
    assert_true(sealed_files() >= 5);
    assert_int_equal(s.headers, sealed_files() + 1); /* one per file */
    assert_int_equal(f.s[RM_STREAM_GPU].lost_files, 0);
    rm_stream_close(&st);
    drain(&f, &s);
    assert_int_equal(s.next, written);
    rm_rowfeed_close(&f);
}

static void test_catches_up_over_many_seals(void **state)
{
    (void)state;
    struct rm_rowfeed f;
    struct seen s = {0};
    open_stream(1500);
    write_rows(5);
    assert_int_equal(rm_rowfeed_open(&f, dir, 1u << RM_STREAM_GPU), 0);
    assert_int_equal(rm_rowfeed_read(&f, RM_STREAM_GPU, 3, take, &s), 3); /* header + 2 */
    for (int i = 0; i < 40; i++) /* the reader sleeps through several seals */
        write_rows(10);
    assert_true(sealed_files() >= 4);
    drain(&f, &s);
    assert_int_equal(s.next, written);
    assert_int_equal(s.headers, sealed_files() + 1);
    write_rows(3);
    drain(&f, &s);
    assert_int_equal(s.next, written);
    rm_stream_close(&st);
    rm_rowfeed_close(&f);
}

/* A consumer whose batch is full (or whose server is down) refuses: the line waits. */
static void test_refused_line_offered_again(void **state)
{
    (void)state;
    struct rm_rowfeed f;
    struct seen s = {.refuse = 25};
    open_stream(1000);
    assert_int_equal(rm_rowfeed_open(&f, dir, 1u << RM_STREAM_GPU), 0);
    write_rows(60); /* over a seal */
    drain(&f, &s);
    assert_int_equal(s.next, 25);
    long before = s.offered;
    drain(&f, &s);
    assert_int_equal(s.offered, before + 1); /* offered again, refused again */
    write_rows(40);
    s.refuse = 0; /* the server is back */
    drain(&f, &s);
    assert_int_equal(s.next, written);
    rm_stream_close(&st);
    rm_rowfeed_close(&f);
}

/* Rows in order but not necessarily consecutive. */
struct gaps {
    long last, rows;
};

static int take_any(void *ctx, int stream, const char *line, size_t len, int first)
{
    struct gaps *g = ctx;
    (void)stream;
    if (first) return 0;
    const char *comma = memchr(line, ',', len);
    assert_non_null(comma);
    long seq = strtol(comma + 1, NULL, 10);
    assert_true(seq > g->last);
    g->last = seq;
    g->rows++;
    return 0;
}

static long data_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long n = -1; /* the header */
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Retention removes a sealed file the reader had not reached: counted, the rest read. */
static void test_removed_file_counted(void **state)
{
    (void)state;
    struct rm_rowfeed f;
    struct gaps g = {.last = -1};
    open_stream(1000);
    assert_int_equal(rm_rowfeed_open(&f, dir, 1u << RM_STREAM_GPU), 0);
    write_rows(3);
    while (rm_rowfeed_read(&f, RM_STREAM_GPU, 100, take_any, &g) > 0) {
    }
    assert_int_equal(g.rows, 3);
    for (int i = 0; i < 30; i++)
        write_rows(10);
    assert_true(sealed_files() >= 3);
    char path[128];
    snprintf(path, sizeof path, "%s/gpu-000002.csv", dir);
    long gone = data_rows(path);
    assert_true(gone > 0);
    assert_int_equal(unlink(path), 0);
    while (rm_rowfeed_read(&f, RM_STREAM_GPU, 100, take_any, &g) > 0) {
    }
    assert_int_equal(g.rows, written - gone);
    assert_int_equal(g.last, written - 1);
    assert_int_equal(f.s[RM_STREAM_GPU].lost_files, 1);
    rm_stream_close(&st);
    rm_rowfeed_close(&f);
}

/* A line still being written is not handed out until its newline comes. */
static void test_partial_line_waits(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/gpu.csv", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "ts,seq\nx,0\nx,", 13), 13);
    struct rm_rowfeed f;
    struct seen s = {0};
    assert_int_equal(rm_rowfeed_open(&f, dir, 1u << RM_STREAM_GPU), 0);
    drain(&f, &s);
    assert_int_equal(s.next, 1);
    assert_int_equal(write(fd, "1\nx,2\n", 6), 6);
    drain(&f, &s);
    assert_int_equal(s.next, 3);
    assert_int_equal(s.headers, 1);
    close(fd);
    rm_rowfeed_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_follows_rollover_in_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_catches_up_over_many_seals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_line_offered_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removed_file_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_line_waits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
