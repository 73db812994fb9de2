#include "summary/csvread.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/csvfields.h"

struct rm_csv_reader {
    struct csv_parser p;
    rm_csv_row_fn fn;
    void *ctx;
    struct rm_csv_fields fields; /* the current row's fields (base/csvfields.h) */
    size_t off[RM_CSV_MAX_FIELDS];
    size_t len[RM_CSV_MAX_FIELDS];
    const char *ptr[RM_CSV_MAX_FIELDS];
    uint64_t line, row_line;
    size_t pending; /* bytes fed since the last row ended */
    bool skipping;  /* dropping a too-long line up to its newline */
    uint64_t long_lines;
    uint64_t first_long_line;       /* the line number of the first one */
    uint64_t wide_rows, first_wide; /* rows with more than RM_CSV_MAX_FIELDS fields */
    bool ended;                     /* a row ended during the current feed step */
};

static void count_wide(struct rm_csv_reader *r, uint64_t line)
{
    if (!r->wide_rows++) r->first_wide = line;
}

/* libcsv hands both callbacks one pointer: the fields, inside their reader. */
static void on_row(int c, void *data)
{
    struct rm_csv_reader *r =
        (struct rm_csv_reader *)((char *)data - offsetof(struct rm_csv_reader, fields));
    struct rm_csv_fields *f = &r->fields;
    for (size_t i = 0; i < f->n; i++)
        r->ptr[i] = f->store + f->off[i];
    struct rm_csv_row row = {
        .n = f->overflow ? 0 : f->n,
        .f = r->ptr,
        .len = r->len,
        .line = r->row_line,
        .torn = c == -1,
        .overflow = f->overflow,
    };
    if (f->overflow) count_wide(r, r->row_line);
    r->fn(r->ctx, &row);
    rm_csv_fields_clear(f);
    r->ended = true;
}

static int parser_init(struct rm_csv_reader *r)
{
    /* Not strict: a stray quote in a notice line must not stop the file. */
    if (csv_init(&r->p, 0)) return -1;
    /* libcsv grows a field's buffer by this much at a time (default 128 bytes: a field of a
     * megabyte took 8000 reallocations, each a copy, quadratic; under ASan 20 s and 400 MB).
     * 64 KiB: at most ~17 steps up to RM_CSV_MAX_LINE, one 64 KiB buffer for a normal file. */
    csv_set_blk_size(&r->p, 64 * 1024);
    return 0;
}

struct rm_csv_reader *rm_csv_new(rm_csv_row_fn fn, void *ctx)
{
    struct rm_csv_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->fn = fn;
    r->ctx = ctx;
    r->fields = (struct rm_csv_fields){
        .grow = true, .max = RM_CSV_MAX_FIELDS, .off = r->off, .len = r->len};
    r->line = 1;
    r->row_line = 1;
    if (parser_init(r)) {
        free(r);
        return NULL;
    }
    return r;
}

void rm_csv_free(struct rm_csv_reader *r)
{
    if (!r) return;
    csv_free(&r->p);
    free(r->fields.store);
    free(r);
}

uint64_t rm_csv_long_lines(const struct rm_csv_reader *r)
{
    return r->long_lines;
}

/* Feeds one piece that holds at most one line end, so that row line numbers are exact
 * enough and a runaway line is caught within RM_CSV_MAX_LINE bytes. */
static int feed_piece(struct rm_csv_reader *r, const char *s, size_t len, bool has_nl)
{
    if (r->skipping) {
        if (has_nl) {
            r->skipping = false;
            r->line++;
            r->row_line = r->line;
        }
        return 0;
    }
    r->ended = false;
    if (csv_parse(&r->p, s, len, rm_csv_fields_cb, on_row, &r->fields) != len) return -1;
    if (has_nl) r->line++;
    if (r->ended) {
        r->pending = 0;
        r->row_line = r->line;
    } else {
        r->pending += len;
    }
    if (r->pending > RM_CSV_MAX_LINE) {
        /* Drop what libcsv holds and resynchronise at the next newline. */
        csv_free(&r->p);
        if (parser_init(r)) return -1;
        rm_csv_fields_clear(&r->fields);
        r->pending = 0;
        if (!r->long_lines++) r->first_long_line = r->row_line;
        r->skipping = !has_nl;
        r->row_line = r->line;
    }
    return 0;
}

/* Bytes of x equal to the byte in rep (0x0101.. * byte): their high bits set. The lowest
 * flagged byte is always a true match (borrows only run upwards). */
static inline uint64_t byte_eq(uint64_t x, uint64_t rep)
{
    uint64_t y = x ^ rep;
    return (y - 0x0101010101010101ull) & ~y & 0x8080808080808080ull;
}

/* Index of the first ',', '\n' or '"' at or after i, or len: eight bytes per step. */
static inline size_t next_special(const char *s, size_t i, size_t len)
{
    while (i + 8 <= len) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t m = byte_eq(w, 0x2c2c2c2c2c2c2c2cull) | byte_eq(w, 0x0a0a0a0a0a0a0a0aull) |
                     byte_eq(w, 0x2222222222222222ull);
        if (m) return i + (size_t)(__builtin_ctzll(m) >> 3);
        i += 8;
    }
    while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '"')
        i++;
    return i;
}

/* The common case, a whole line with no quote while libcsv holds nothing: split it here in
 * one pass, fields pointing into the input (no copy), trimmed of blanks as libcsv trims
 * them. This is what makes the summary faster than libcsv alone; a line with a quote, or one
 * not complete in this buffer, still goes through libcsv. Returns the bytes consumed, 0 when
 * the line must take the slow path. */
static size_t fast_line(struct rm_csv_reader *r, const char *s, size_t len)
{
    if (r->skipping || r->pending || r->fields.n) return 0;
    size_t n = 0, fs = 0, i = 0;
    bool overflow = false;
    for (;; i++) {
        i = next_special(s, i, len);
        if (i == len) return 0; /* no line end here */
        char c = s[i];
        if (c == '"') return 0;
        size_t fe = i;
        if (c == '\n' && fe > fs && s[fe - 1] == '\r') fe--;
        if (c == '\n' && n == 0 && fe == fs) break; /* empty line: libcsv reports no row */
        while (fs < fe && (s[fs] == ' ' || s[fs] == '\t'))
            fs++;
        while (fe > fs && (s[fe - 1] == ' ' || s[fe - 1] == '\t'))
            fe--;
        if (n == RM_CSV_MAX_FIELDS)
            overflow = true;
        else {
            r->ptr[n] = s + fs;
            r->len[n] = fe - fs;
            n++;
        }
        fs = i + 1;
        if (c == '\n') break;
    }
    if (overflow) count_wide(r, r->line);
    if (n) {
        struct rm_csv_row row = {
            .n = overflow ? 0 : n,
            .f = r->ptr,
            .len = r->len,
            .line = r->line,
            .overflow = overflow,
        };
        r->fn(r->ctx, &row);
    }
    r->line++;
    r->row_line = r->line;
    return i + 1;
}

int rm_csv_feed(struct rm_csv_reader *r, const char *buf, size_t len)
{
    while (len) {
        size_t done = fast_line(r, buf, len);
        if (done) {
            buf += done;
            len -= done;
            continue;
        }
        const char *nl = memchr(buf, '\n', len);
        size_t n = nl ? (size_t)(nl - buf) + 1 : len;

        if (n > 65536 && !nl) n = 65536;
        if (feed_piece(r, buf, n, nl && n == (size_t)(nl - buf) + 1)) return -1;
        buf += n;
        len -= n;
    }
    return 0;
}

int rm_csv_finish(struct rm_csv_reader *r)
{
    if (r->skipping) return 0;
    return csv_fini(&r->p, rm_csv_fields_cb, on_row, &r->fields) ? -1 : 0;
}

int rm_csv_read_file(const char *path, rm_csv_row_fn fn, void *ctx, _Atomic uint64_t *progress,
                     uint64_t *long_lines, char *err, size_t errsz)
{
    if (errsz) err[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct rm_csv_reader *r = rm_csv_new(fn, ctx);
    enum { CHUNK = 1 << 18 };
    char *buf = malloc(CHUNK);
    int rc = 0;
    if (!r || !buf) {
        snprintf(err, errsz, "%s: out of memory", path);
        rc = -1;
    }
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    while (rc == 0) {
        ssize_t got = read(fd, buf, CHUNK);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(err, errsz, "%s: %s", path, strerror(errno));
            rc = -1;
            break;
        }
        if (got == 0) break;
        if (progress) atomic_fetch_add(progress, (uint64_t)got);
        if (rm_csv_feed(r, buf, (size_t)got)) {
            snprintf(err, errsz, "%s: CSV parser failed (out of memory)", path);
            rc = -1;
        }
    }
    if (rc == 0 && rm_csv_finish(r)) {
        snprintf(err, errsz, "%s: CSV parser failed at end of file", path);
        rc = -1;
    }
    if (r && long_lines) *long_lines = r->long_lines;
    if (rc == 0 && r) {
        /* Rows skipped for a limit: a note that says which limit and where. */
        char a[256] = "", b[256] = "";
        if (r->long_lines)
            snprintf(a, sizeof a,
                     "line %llu is longer than the limit of %u bytes (%llu such line%s skipped)",
                     (unsigned long long)r->first_long_line, RM_CSV_MAX_LINE,
                     (unsigned long long)r->long_lines, r->long_lines == 1 ? "" : "s");
        if (r->wide_rows)
            snprintf(b, sizeof b,
                     "line %llu has more than the limit of %d fields (%llu such row%s skipped)",
                     (unsigned long long)r->first_wide, RM_CSV_MAX_FIELDS,
                     (unsigned long long)r->wide_rows, r->wide_rows == 1 ? "" : "s");
        if (a[0] || b[0]) snprintf(err, errsz, "%s: %s%s%s", path, a, a[0] && b[0] ? "; " : "", b);
    }
    rm_csv_free(r);
    free(buf);
    close(fd);
    return rc;
}

struct line_state {
    char *buf;
    size_t used, max;
    bool dropping;
    uint64_t long_lines;
};

/* Appends data up to and including line ends, handing complete lines to fn. */
static void lines_push(struct line_state *ls, const char *p, size_t n, rm_line_fn fn, void *ctx)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (!ls->dropping) {
            if (ls->used + take > ls->max) {
                ls->dropping = true;
                ls->long_lines++;
            } else {
                memcpy(ls->buf + ls->used, p, take);
                ls->used += take;
            }
        }
        if (!nl) return;
        if (!ls->dropping) fn(ctx, ls->buf, ls->used, false);
        ls->dropping = false;
        ls->used = 0;
        p += take + 1;
        n -= take + 1;
    }
}

static void lines_end(struct line_state *ls, rm_line_fn fn, void *ctx)
{
    if (!ls->dropping && ls->used) fn(ctx, ls->buf, ls->used, true);
}

void rm_split_lines(const char *buf, size_t len, size_t max_line, rm_line_fn fn, void *ctx,
                    uint64_t *long_lines)
{
    /* Lines are passed in place, no copy needed: only the limit is enforced. */
    uint64_t dropped = 0;
    while (len) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (take > max_line)
            dropped++;
        else
            fn(ctx, buf, take, nl == NULL);
        if (!nl) break;
        buf += take + 1;
        len -= take + 1;
    }
    if (long_lines) *long_lines = dropped;
}

int rm_read_lines(const char *path, size_t max_line, rm_line_fn fn, void *ctx,
                  _Atomic uint64_t *progress, uint64_t *long_lines, char *err, size_t errsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    enum { CHUNK = 1 << 16 };
    struct line_state ls = {.buf = malloc(max_line + 1), .max = max_line};
    char *chunk = malloc(CHUNK);
    int rc = 0;
    if (!ls.buf || !chunk) {
        snprintf(err, errsz, "%s: out of memory", path);
        rc = -1;
    }
    while (rc == 0) {
        ssize_t got = read(fd, chunk, CHUNK);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(err, errsz, "%s: %s", path, strerror(errno));
            rc = -1;
            break;
        }
        if (got == 0) break;
        if (progress) atomic_fetch_add(progress, (uint64_t)got);
        lines_push(&ls, chunk, (size_t)got, fn, ctx);
    }
    if (rc == 0) lines_end(&ls, fn, ctx);
    if (long_lines) *long_lines = ls.long_lines;
    free(ls.buf);
    free(chunk);
    close(fd);
    return rc;
}
