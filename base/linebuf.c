/* Fixed-capacity line splitter; see linebuf.h. */
#include "base/linebuf.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Bounds the work of one rm_linebuf_read call: with `yes` as the writer the fd never runs dry. */
#define RM_LB_MAX_READS 16

void rm_linebuf_init(rm_linebuf *lb, char *storage, size_t size)
{
    lb->buf = storage;
    lb->size = size;
    rm_linebuf_reset(lb);
}

void rm_linebuf_reset(rm_linebuf *lb)
{
    lb->len = 0;
    lb->discarding = false;
    lb->eof = false;
}

static void deliver(char *p, size_t n, unsigned flags, rm_line_cb cb, void *ctx)
{
    if (!(flags & RM_LINE_TRUNCATED) && n > 0 && p[n - 1] == '\r') n--;
    p[n] = '\0';
    cb(ctx, p, n, flags);
}

/* n new bytes were appended at buf[len]; bytes before them hold no '\n'. Invariant on return:
 * len < size, so there is always room to read into and to NUL-terminate a torn line. */
static void absorb(rm_linebuf *lb, size_t n, rm_line_cb cb, void *ctx)
{
    char *buf = lb->buf;
    size_t pos = lb->len, start = 0;
    lb->len += n;
    if (lb->discarding) {
        /* len was 0 when discarding began, so everything here belongs to the dropped tail
         * until the first '\n'. */
        char *nl = memchr(buf + pos, '\n', lb->len - pos);
        if (!nl) {
            lb->len = 0;
            return;
        }
        lb->discarding = false;
        start = pos = (size_t)(nl - buf) + 1;
    }
    for (;;) {
        char *nl = pos < lb->len ? memchr(buf + pos, '\n', lb->len - pos) : NULL;
        if (!nl) break;
        size_t end = (size_t)(nl - buf);
        deliver(buf + start, end - start, 0, cb, ctx);
        start = pos = end + 1;
    }
    if (start > 0) {
        memmove(buf, buf + start, lb->len - start);
        lb->len -= start;
    }
    if (lb->len == lb->size) {
        /* Full and no '\n': the line is longer than size-1. The byte overwritten by the NUL
         * belongs to the dropped tail. */
        deliver(buf, lb->size - 1, RM_LINE_TRUNCATED, cb, ctx);
        lb->len = 0;
        lb->discarding = true;
    }
}

void rm_linebuf_feed(rm_linebuf *lb, const char *data, size_t n, rm_line_cb cb, void *ctx)
{
    while (n > 0) {
        size_t room = lb->size - lb->len;
        size_t chunk = n < room ? n : room;
        memcpy(lb->buf + lb->len, data, chunk);
        absorb(lb, chunk, cb, ctx);
        data += chunk;
        n -= chunk;
    }
}

void rm_linebuf_finish(rm_linebuf *lb, rm_line_cb cb, void *ctx)
{
    /* The tail of a truncated line was already reported with its head. */
    if (lb->len > 0 && !lb->discarding) deliver(lb->buf, lb->len, RM_LINE_TORN, cb, ctx);
    lb->len = 0;
    lb->discarding = false;
}

static rm_linebuf_status read_lines(rm_linebuf *lb, int fd, rm_line_cb cb, void *ctx,
                                    int stop_short)
{
    if (lb->eof) return RM_LB_EOF;
    for (int i = 0; i < RM_LB_MAX_READS; i++) {
        size_t want = lb->size - lb->len;
        ssize_t r = read(fd, lb->buf + lb->len, want);
        if (r > 0) {
            absorb(lb, (size_t)r, cb, ctx);
            if (stop_short && (size_t)r < want) return RM_LB_AGAIN;
        } else if (r == 0) {
            rm_linebuf_finish(lb, cb, ctx);
            lb->eof = true;
            return RM_LB_EOF;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return RM_LB_AGAIN;
        } else if (errno != EINTR) {
            return RM_LB_ERROR;
        }
    }
    return RM_LB_AGAIN;
}

rm_linebuf_status rm_linebuf_read(rm_linebuf *lb, int fd, rm_line_cb cb, void *ctx)
{
    return read_lines(lb, fd, cb, ctx, 0);
}

rm_linebuf_status rm_linebuf_read_ready(rm_linebuf *lb, int fd, rm_line_cb cb, void *ctx)
{
    return read_lines(lb, fd, cb, ctx, 1);
}
