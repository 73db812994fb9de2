#include "monitor/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/csvwrite.h"
#include "base/fileio.h"
#include "base/rm_time.h"
#include "model/streams.h"

/* Opens (appending) the active file named s->path: its size and whether it has a header
 * are taken from it. 0, or -1 with errno (s->fd stays -1). */
static int open_active(struct rm_stream *s)
{
    s->fd = open(s->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, rm_file_mode());
    if (s->fd < 0) return -1;
    rm_file_trim_torn(s->fd);
    struct stat st;
    if (fstat(s->fd, &st) == 0) {
        s->bytes = (uint64_t)st.st_size;
        s->has_header = st.st_size > 0;
    }
    return 0;
}

/* A write (or the open) that failed with e: counted, and the failure episode begun. */
static void stream_failed(struct rm_stream *s, int e)
{
    s->last_errno = e;
    s->write_errors++;
    if (!s->failing) {
        s->fail_start_ns = rm_clock_mono(s->clock);
        s->fail_end_ns = 0;
    }
    s->failing = 1;
}

int rm_stream_open(struct rm_stream *s, const char *dir, int stream)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->id = stream;
    snprintf(s->name, sizeof s->name, "%s", rm_stream_defs[stream].name);
    char active[64];
    rm_segment_name(active, sizeof active, stream, 0);
    if (snprintf(s->path, sizeof s->path, "%s/%s", dir, active) >= (int)sizeof s->path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    s->buf = malloc(RM_STREAM_BUFSZ);
    if (!s->buf) return -1;
    if (open_active(s) < 0) {
        /* A full disk, a lost folder: the stream takes rows all the same, drops and counts
         * them, and each flush tries the file again (rm_stream_flush_now). */
        stream_failed(s, errno);
    }
    return 0;
}

void rm_stream_close(struct rm_stream *s)
{
    if (s->buf) rm_stream_flush_now(s); /* without a file: its rows are counted as dropped */
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    free(s->header);
    s->header = NULL;
}

static void row_put(struct rm_stream *s, const char *v, size_t n, int raw)
{
    if (s->row_overflow) return;
    size_t used = s->len + s->row_len;
    /* Keep one byte for the row's '\n'. */
    size_t cap = RM_STREAM_BUFSZ - used - 1;
    if (s->row_len + n + 3 > RM_STREAM_MAX_ROW || n + 3 > cap) {
        s->row_overflow = 1;
        return;
    }
    char *out = s->buf + used;
    if (s->row_fields > 0) {
        *out++ = ',';
        s->row_len++;
        cap--;
    }
    size_t w;
    if (raw) {
        memcpy(out, v, n);
        w = n;
    } else {
        w = rm_csv_put_field(out, cap, v, n);
        if (w == 0 && n > 0) {
            s->row_overflow = 1;
            return;
        }
    }
    s->row_len += w;
    s->row_fields++;
}

void rm_stream_begin_row(struct rm_stream *s, int64_t ts_ns)
{
    s->row_len = 0;
    s->row_fields = 0;
    s->row_overflow = 0;
    /* Make room: a full buffer is flushed before a new row starts. */
    if (s->len + RM_STREAM_MAX_ROW + 1 > RM_STREAM_BUFSZ) rm_stream_flush_now(s);
    int64_t ms = ts_ns / RM_NS_PER_MS - (ts_ns % RM_NS_PER_MS < 0); /* the text's precision */
    if (!s->ts_text_len || ms != s->ts_text_ms) {
        s->ts_text_len = rm_format_ts(ts_ns, s->ts_text);
        s->ts_text_ms = ms;
    }
    row_put(s, s->ts_text, s->ts_text_len, 1);
    if (!s->pending_rows) s->pending_first_ts = ts_ns;
    s->pending_last_ts = ts_ns;
}

void rm_stream_field(struct rm_stream *s, const char *v, size_t n)
{
    row_put(s, v, n, 0);
}

void rm_stream_field_plain(struct rm_stream *s, const char *v, size_t n)
{
    row_put(s, v, n, 1);
}

void rm_stream_field_str(struct rm_stream *s, const char *v)
{
    row_put(s, v, strlen(v), 0);
}

/* Writes v's decimal digits ending before end; returns where they start. */
static char *put_u64_rev(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

size_t rm_format_fixed(char *out, double v, int decimals)
{
    static const double scale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    if (decimals >= 0 && decimals <= 6 && isfinite(v)) {
        double x = fabs(v) * scale[decimals];
        /* Below 2^30 the product is within 1e-7 of the exact scaled value, so rounding it
         * gives printf's digits unless it sits next to a tie (printf rounds the exact binary
         * value, half to even): those few go to snprintf. */
        if (x < 1073741824.0) {
            double fl = floor(x), frac = x - fl;
            if (fabs(frac - 0.5) > 1e-6) {
                uint64_t q = (uint64_t)fl + (frac > 0.5);
                uint64_t p10 = (uint64_t)scale[decimals];
                char tmp[48], *end = tmp + sizeof tmp, *p = end;
                if (decimals > 0) {
                    uint64_t f = q % p10;
                    for (int i = 0; i < decimals; i++, f /= 10)
                        *--p = (char)('0' + f % 10);
                    *--p = '.';
                }
                p = put_u64_rev(p, q / p10);
                if (signbit(v)) *--p = '-'; /* printf keeps the sign of -0.001 as "-0.00" */
                memcpy(out, p, (size_t)(end - p));
                return (size_t)(end - p);
            }
        }
    }
    int n = isfinite(v) ? snprintf(out, RM_FIXED_BUFSZ, "%.*f", decimals, v) : 0;
    return n > 0 && n < RM_FIXED_BUFSZ ? (size_t)n : 0;
}

void rm_stream_field_double(struct rm_stream *s, double v, int decimals)
{
    char tmp[RM_FIXED_BUFSZ];
    row_put(s, tmp, rm_format_fixed(tmp, v, decimals), 1);
}

void rm_stream_field_u64(struct rm_stream *s, uint64_t v)
{
    char tmp[24], *end = tmp + sizeof tmp, *p = put_u64_rev(end, v);
    row_put(s, p, (size_t)(end - p), 1);
}

void rm_stream_end_row(struct rm_stream *s)
{
    if (s->row_overflow) {
        s->dropped_rows++;
        s->row_len = 0;
        return;
    }
    s->buf[s->len + s->row_len] = '\n';
    s->len += s->row_len + 1;
    s->row_len = 0;
    s->pending_rows++;
}

int rm_stream_header(struct rm_stream *s, const char *const *names, int n)
{
    if (s->has_header) return 0;
    char line[RM_STREAM_MAX_ROW];
    size_t len = 0;
    const char *ts = "ts";
    for (int i = -1; i < n; i++) {
        const char *v = i < 0 ? ts : names[i];
        if (i >= 0) line[len++] = ',';
        size_t w = rm_csv_put_field(line + len, sizeof line - len - 2, v, strlen(v));
        if (w == 0) {
            errno = E2BIG;
            return -1;
        }
        len += w;
    }
    line[len++] = '\n';
    char *copy = malloc(len);
    if (copy) {
        memcpy(copy, line, len);
        free(s->header);
        s->header = copy;
        s->header_len = len;
    }
    if (!copy) return -1; /* ENOMEM: without it no later flush could write the header */
    /* A header that cannot be written now (a full disk, a size limit, no file) is written
     * before the first rows that can be (rewrite_header): never fatal, never half a line. */
    if (s->fd < 0) return 0;
    if (rm_write_all(s->fd, line, len) < 0) {
        int e = errno;
        (void)!ftruncate(s->fd, 0); /* the file was empty (no header) */
        stream_failed(s, e);
        return 0;
    }
    s->bytes += len;
    s->has_header = 1;
    return 0;
}

int rm_stream_has_header(const struct rm_stream *s)
{
    return s->has_header;
}

static void notify(struct rm_stream *s)
{
    if (s->hook) s->hook(s->hook_ctx, s, RM_STREAM_FLUSHED, NULL);
    s->reopened = 0;
}

/* After a rollover the new active file gets the same header row before any data. */
static int rewrite_header(struct rm_stream *s)
{
    if (s->has_header || !s->header) return 0;
    if (rm_write_all(s->fd, s->header, s->header_len) < 0) {
        int e = errno;
        (void)!ftruncate(s->fd, 0); /* never leave half a header */
        errno = e;
        return -1;
    }
    s->bytes = s->header_len;
    s->has_header = 1;
    return 0;
}

void rm_stream_batch(struct rm_stream *s, int64_t interval_ns)
{
    s->write_every_ns = interval_ns < RM_STREAM_BATCH_NS ? RM_STREAM_BATCH_NS : 0;
}

/* The pending rows reach the rollover size: written now, the segment ends after them. */
static int would_seal(const struct rm_stream *s)
{
    return s->rollover_bytes && s->len && s->bytes + s->len >= s->rollover_bytes;
}

int rm_stream_flush_if_sealing(struct rm_stream *s)
{
    return would_seal(s) ? rm_stream_flush_now(s) : 0;
}

int rm_stream_write_due(const struct rm_stream *s)
{
    /* Held back only while the rows would not reach the rollover size: a segment then ends
     * after the same row as when every flush wrote. */
    return s->write_every_ns <= 0 || s->fd < 0 || would_seal(s) || s->len >= RM_STREAM_BUFSZ / 2 ||
           rm_clock_mono(s->clock) - s->last_write_mono_ns >= s->write_every_ns;
}

int rm_stream_flush(struct rm_stream *s)
{
    if (s->len == 0 || !rm_stream_write_due(s)) return 0;
    return rm_stream_flush_now(s);
}

int rm_stream_flush_now(struct rm_stream *s)
{
    if (s->len == 0) return 0;
    s->last_write_mono_ns = rm_clock_mono(s->clock);
    if (s->fd < 0) { /* the open failed before: again */
        if (open_active(s) < 0) goto dropped;
        s->reopened = 1; /* the observer learns of the file at this flush (notify) */
    }
    if (rewrite_header(s) < 0) goto dropped;
    /* One write: whole rows or (on failure) nothing we keep relying on. A short write to a
     * regular file means the file hit a limit (EFBIG/ENOSPC); the partial tail is cut back so
     * the next row starts on a fresh line. */
    ssize_t n = write(s->fd, s->buf, s->len);
    if (n == (ssize_t)s->len) {
        s->bytes += s->len;
        s->rows += s->pending_rows;
        if (!s->first_ts_ns) s->first_ts_ns = s->pending_first_ts;
        s->last_ts_ns = s->pending_last_ts;
        s->len = 0;
        s->pending_rows = 0;
        if (s->failing) s->fail_end_ns = rm_clock_mono(s->clock);
        s->failing = 0;
        if (s->rollover_bytes && s->bytes >= s->rollover_bytes && rm_stream_seal(s) == 0)
            rewrite_header(s); /* a failure here is retried by the next flush */
        notify(s);
        return 0;
    }
    if (n > 0) {
        /* The rest, once, to learn why (EFBIG for a size limit, ENOSPC, EDQUOT). */
        ssize_t m = write(s->fd, s->buf + n, s->len - (size_t)n);
        int why = m < 0 ? errno : rm_short_write_errno((off_t)s->bytes, s->len);
        if (ftruncate(s->fd, (off_t)s->bytes) < 0) {
            /* Could not cut it back: at least end the torn row so later rows parse. */
            (void)!write(s->fd, "\n", 1);
        }
        errno = why;
    }
dropped:
    stream_failed(s, errno);
    s->dropped_rows += s->pending_rows;
    s->len = 0;
    s->pending_rows = 0;
    /* A file-size limit (EFBIG): the next segment starts small, so rolling over now is the
     * way back to writing. */
    if (s->last_errno == EFBIG && s->rollover_bytes && s->bytes > 0 && s->fd >= 0 &&
        rm_stream_seal(s) == 0)
        rewrite_header(s);
    notify(s);
    errno = s->last_errno;
    return -1;
}

int rm_stream_seal(struct rm_stream *s)
{
    char sealed[PATH_MAX], file[64];
    const char *slash = strrchr(s->path, '/');
    int dl = slash ? (int)(slash - s->path + 1) : 0;
    for (;;) {
        if (s->next_segment == 0) s->next_segment = 1;
        if (rm_segment_name(file, sizeof file, s->id, s->next_segment) < 0 ||
            snprintf(sealed, sizeof sealed, "%.*s%s", dl, s->path, file) >= (int)sizeof sealed) {
            errno = ENAMETOOLONG;
            return -1;
        }
        if (access(sealed, F_OK) != 0) break;
        s->next_segment++;
    }
    if (rename(s->path, sealed) < 0) return -1;
    int fd = open(s->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, rm_file_mode());
    if (fd < 0) {
        int e = errno;
        (void)!rename(sealed, s->path);
        errno = e;
        return -1;
    }
    close(s->fd);
    s->fd = fd;
    if (s->hook) {
        struct rm_stream_seg seg = {.file =
                                        strrchr(sealed, '/') ? strrchr(sealed, '/') + 1 : sealed,
                                    .rows = s->rows,
                                    .bytes = s->bytes,
                                    .first_ts_ns = s->first_ts_ns,
                                    .last_ts_ns = s->last_ts_ns};
        s->hook(s->hook_ctx, s, RM_STREAM_SEALED, &seg);
    }
    s->next_segment++;
    s->bytes = 0;
    s->has_header = 0;
    s->rows = 0;
    s->first_ts_ns = s->last_ts_ns = 0;
    return 0;
}
