#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/linebuf.h"

/* What the callback saw: lines joined as "text|flags;" so a whole run compares at once. */
struct seen {
    char log[4096];
    int n;
};

static void record(void *ctx, char *line, size_t len, unsigned flags)
{
    struct seen *s = ctx;
    assert_int_equal(line[len], '\0');
    size_t used = strlen(s->log);
    snprintf(s->log + used, sizeof s->log - used, "%.*s|%u;", (int)len, line, flags);
    s->n++;
}

static void feed_str(rm_linebuf *lb, const char *str, struct seen *s)
{
    rm_linebuf_feed(lb, str, strlen(str), record, s);
}

static void lines_split_across_feeds(void **state)
{
    (void)state;
    char store[64];
    rm_linebuf lb;
    struct seen s = {0};
    rm_linebuf_init(&lb, store, sizeof store);
    feed_str(&lb, "ab", &s);
    assert_int_equal(s.n, 0);
    feed_str(&lb, "c\nde", &s);
    feed_str(&lb, "f\n\ng\n", &s);
    assert_string_equal(s.log, "abc|0;def|0;|0;g|0;");
}

static void crlf_is_stripped_once(void **state)
{
    (void)state;
    char store[64];
    rm_linebuf lb;
    struct seen s = {0};
    rm_linebuf_init(&lb, store, sizeof store);
    feed_str(&lb, "a,b\r\n\r\nx\r\r\n", &s);
    assert_string_equal(s.log, "a,b|0;|0;x\r|0;");
}

static void overlong_line_truncated_once_and_next_intact(void **state)
{
    (void)state;
    char store[8]; /* lines up to 7 bytes arrive whole */
    rm_linebuf lb;
    struct seen s = {0};
    rm_linebuf_init(&lb, store, sizeof store);
    feed_str(&lb, "1234567\n", &s); /* exactly the capacity: whole */
    feed_str(&lb, "abcdefghij", &s);
    feed_str(&lb, "klmnopqrstuvwxyz", &s); /* still the same line: dropped */
    feed_str(&lb, "ABC\nnext\n", &s);
    assert_string_equal(s.log, "1234567|0;abcdefg|1;next|0;");
    /* One feed holding a long line and what follows it. */
    memset(&s, 0, sizeof s);
    feed_str(&lb, "0123456789012345678901234\nok\r\n", &s);
    assert_string_equal(s.log, "0123456|1;ok|0;");
}

static void torn_last_line_flagged_at_finish(void **state)
{
    (void)state;
    char store[16];
    rm_linebuf lb;
    struct seen s = {0};
    rm_linebuf_init(&lb, store, sizeof store);
    feed_str(&lb, "row1\nro", &s);
    rm_linebuf_finish(&lb, record, &s);
    assert_string_equal(s.log, "row1|0;ro|2;");
    /* Nothing held: nothing delivered. The tail of a truncated line is not torn again. */
    memset(&s, 0, sizeof s);
    rm_linebuf_finish(&lb, record, &s);
    feed_str(&lb, "0123456789abcdefghij", &s);
    rm_linebuf_finish(&lb, record, &s);
    assert_string_equal(s.log, "0123456789abcde|1;");
}

static void reads_nonblocking_pipe_until_eof(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    char store[32];
    rm_linebuf lb;
    struct seen s = {0};
    rm_linebuf_init(&lb, store, sizeof store);
    assert_int_equal(rm_linebuf_read(&lb, p[0], record, &s), RM_LB_AGAIN);
    assert_int_equal(write(p[1], "one\ntw", 6), 6);
    assert_int_equal(rm_linebuf_read(&lb, p[0], record, &s), RM_LB_AGAIN);
    assert_string_equal(s.log, "one|0;");
    assert_int_equal(write(p[1], "o\r\nthr", 6), 6);
    close(p[1]);
    assert_int_equal(rm_linebuf_read(&lb, p[0], record, &s), RM_LB_EOF);
    assert_string_equal(s.log, "one|0;two|0;thr|2;");
    assert_int_equal(rm_linebuf_read(&lb, p[0], record, &s), RM_LB_EOF);
    assert_int_equal(s.n, 3);
    close(p[0]);
    /* A bad fd is an error, not EOF. */
    rm_linebuf_reset(&lb);
    errno = 0;
    assert_int_equal(rm_linebuf_read(&lb, p[0], record, &s), RM_LB_ERROR);
    assert_int_equal(errno, EBADF);
}

/* The one-read variant for a pipe poll() reported readable: a short read ends the call (no
 * read() to see EAGAIN), a full one reads on; EOF and errors are reported as by
 * rm_linebuf_read. */
static void read_ready_stops_after_a_short_read(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    char store[8];
    rm_linebuf lb;
    struct seen s = {0};
    rm_linebuf_init(&lb, store, sizeof store);
    assert_int_equal(write(p[1], "ab\ncd", 5), 5);
    assert_int_equal(rm_linebuf_read_ready(&lb, p[0], record, &s), RM_LB_AGAIN);
    assert_string_equal(s.log, "ab|0;");
    /* More than the buffer holds: read on until a read comes back short. */
    assert_int_equal(write(p[1], "\n0123\n4567\n89", 13), 13);
    assert_int_equal(rm_linebuf_read_ready(&lb, p[0], record, &s), RM_LB_AGAIN);
    assert_string_equal(s.log, "ab|0;cd|0;0123|0;4567|0;");
    close(p[1]);
    assert_int_equal(rm_linebuf_read_ready(&lb, p[0], record, &s), RM_LB_EOF);
    assert_string_equal(s.log, "ab|0;cd|0;0123|0;4567|0;89|2;");
    close(p[0]);
    rm_linebuf_reset(&lb);
    assert_int_equal(rm_linebuf_read_ready(&lb, p[0], record, &s), RM_LB_ERROR);
}

/* Byte-at-a-time feeding gives the same result as one big feed, for every capacity. */
static void same_result_whatever_the_chunking(void **state)
{
    (void)state;
    const char *in = "alpha\r\n\nbeta-is-long-line\ngamma\r\r\nxx\nlast";
    for (size_t size = 2; size < 24; size++) {
        char store[24];
        rm_linebuf a, b;
        struct seen sa = {0}, sb = {0};
        rm_linebuf_init(&a, store, size);
        feed_str(&a, in, &sa);
        rm_linebuf_finish(&a, record, &sa);
        char store2[24];
        rm_linebuf_init(&b, store2, size);
        for (const char *p = in; *p; p++)
            rm_linebuf_feed(&b, p, 1, record, &sb);
        rm_linebuf_finish(&b, record, &sb);
        assert_string_equal(sa.log, sb.log);
        if (size == 24 - 1)
            assert_string_equal(sa.log, "alpha|0;|0;beta-is-long-line|0;gamma\r|0;xx|0;last|2;");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_split_across_feeds),
        cmocka_unit_test(crlf_is_stripped_once),
        cmocka_unit_test(overlong_line_truncated_once_and_next_intact),
        cmocka_unit_test(torn_last_line_flagged_at_finish),
        cmocka_unit_test(reads_nonblocking_pipe_until_eof),
        cmocka_unit_test(read_ready_stops_after_a_short_read),
        cmocka_unit_test(same_result_whatever_the_chunking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
