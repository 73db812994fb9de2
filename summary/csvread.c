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

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
    bool saw_quote;                 /* a '"' was fed (a quoted field may span lines) */
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
    if (!r->saw_quote && memchr(s, '"', len)) r->saw_quote = true;
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

/* Bit k set when s[base + k] is ',', '\n' or '"', for the 64 bytes from base (fewer at the
 * end of the buffer): one mask per 64 bytes, its bits taken one field at a time. */
static inline uint64_t special_mask(const char *s, size_t base, size_t len)
{
    uint64_t m = 0;
    size_t i = 0;
#ifdef __SSE2__
    if (base + 64 <= len) {
        const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n'),
                      quote = _mm_set1_epi8('"');
        for (; i < 64; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + base + i));
            __m128i hit =
                _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, comma), _mm_cmpeq_epi8(x, nl)),
                             _mm_cmpeq_epi8(x, quote));
            m |= (uint64_t)(uint32_t)_mm_movemask_epi8(hit) << i;
        }
        return m;
    }
#endif
    for (; i < 64 && base + i < len; i++) {
        char c = s[base + i];
        if (c == ',' || c == '\n' || c == '"') m |= 1ull << i;
    }
    return m;
}

/* The top bit of each byte of w that is not a blank (' ' or '\t', what libcsv trims). */
static inline uint64_t nonblank_bytes(uint64_t w)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full, hi = 0x8080808080808080ull,
                   ones = 0x0101010101010101ull;
    uint64_t sp = w ^ ones * ' ', tab = w ^ ones * '\t';
    /* A byte of sp or tab is zero exactly where its top bit stays clear below (no carries). */
    return (((sp & lo7) + lo7) | sp) & (((tab & lo7) + lo7) | tab) & hi;
}

#define RM_BLANK(c) ((c) == ' ' || (c) == '\t')

/* [*fs, *fe) of s[0..len) without its leading and trailing blanks, where s[*fe] is a
 * separator (never a blank). One blank (", " separators) is taken by itself; a longer run by
 * a word of 8 bytes, when the buffer holds one there. A loop per blank (this did) cost 12 % of
 * nvidia-smi CSV's summary, its end mispredicted or waited on. */
static inline void trim_blanks(const char *s, size_t len, size_t *fs, size_t *fe)
{
    size_t a = *fs, e = *fe;
    if (a < e && RM_BLANK(s[a]) && ++a < e && RM_BLANK(s[a])) {
        uint64_t nb = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (a + 8 <= len) { /* the leading run ends at s[e] at the latest */
            uint64_t w;
            memcpy(&w, s + a, 8);
            nb = nonblank_bytes(w);
            a += nb ? (size_t)__builtin_ctzll(nb) >> 3 : 8;
        }
#endif
        if (!nb) /* no word here, or 8 blanks and more */
            while (a < e && RM_BLANK(s[a]))
                a++;
    }
    if (e > a && RM_BLANK(s[e - 1]) && --e > a && RM_BLANK(s[e - 1])) {
        uint64_t nb = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (e >= 8) { /* s[a] is no blank now: the trailing run ends above it */
            uint64_t w;
            memcpy(&w, s + e - 8, 8);
            nb = nonblank_bytes(w);
            e -= nb ? (size_t)__builtin_clzll(nb) >> 3 : 8;
        }
#endif
        if (!nb)
            while (e > a && RM_BLANK(s[e - 1]))
                e--;
    }
    *fs = a;
    *fe = e;
}
#undef RM_BLANK

/* The common case, whole lines with no quote while libcsv holds nothing: split here in one
 * pass over the separator masks, fields pointing into the input (no copy), trimmed of blanks
 * as libcsv trims them. This is what makes the summary faster than libcsv alone; a line with
 * a quote, or one not complete in this buffer, still goes through libcsv. Returns the bytes
 * consumed (whole lines), 0 when the first line must take the slow path. */
static size_t fast_lines(struct rm_csv_reader *r, const char *s, size_t len)
{
    if (r->skipping || r->pending || r->fields.n) return 0;
    size_t done = 0, base = 0, n = 0, fs = 0;
    bool overflow = false;
    uint64_t mask = special_mask(s, 0, len);
    for (;;) {
        while (!mask) {
            base += 64;
            if (base >= len) return done; /* the rest holds no line end */
            mask = special_mask(s, base, len);
        }
        size_t i = base + (size_t)__builtin_ctzll(mask);
        mask &= mask - 1;
        char c = s[i];
        if (c == '"') {
            r->saw_quote = true;
            return done;
        }
        size_t fe = i;
        if (c == '\n' && fe > fs && s[fe - 1] == '\r') fe--;
        if (c == '\n' && n == 0 && fe == fs) { /* empty line: libcsv reports no row */
            r->line++;
            r->row_line = r->line;
            done = fs = i + 1;
            continue;
        }
        trim_blanks(s, len, &fs, &fe);
        if (n == RM_CSV_MAX_FIELDS)
            overflow = true;
        else {
            r->ptr[n] = s + fs;
            r->len[n] = fe - fs;
            n++;
        }
        fs = i + 1;
        if (c != '\n') continue;
        if (overflow) count_wide(r, r->line);
        struct rm_csv_row row = {
            .n = overflow ? 0 : n,
            .f = r->ptr,
            .len = r->len,
            .line = r->line,
            .overflow = overflow,
        };
        r->fn(r->ctx, &row);
        r->line++;
        r->row_line = r->line;
        done = i + 1;
        n = 0;
        overflow = false;
    }
}

/* Aligned to a cache line: this hot loop's speed then does not depend on what is linked
 * before it (a 16-byte shift from unrelated files cost 7 % of the summary's CPU). */
__attribute__((aligned(64))) int rm_csv_feed(struct rm_csv_reader *r, const char *buf, size_t len)
{
    while (len) {
        size_t done = fast_lines(r, buf, len);
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

/* Reads [off, end) of fd (end UINT64_MAX: to end of file) in pieces, handing each to fn;
 * counts the bytes in *progress. */
static int read_range(int fd, uint64_t off, uint64_t end, char *buf, size_t cap,
                      int (*fn)(void *ctx, const char *p, size_t n), void *ctx,
                      _Atomic uint64_t *progress)
{
    while (off < end) {
        size_t want = end - off < cap ? (size_t)(end - off) : cap;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) break;
        off += (uint64_t)got;
        if (progress) atomic_fetch_add(progress, (uint64_t)got);
        if (fn(ctx, buf, (size_t)got)) return -2;
    }
    return 0;
}

static int feed_csv(void *ctx, const char *p, size_t n)
{
    return rm_csv_feed(ctx, p, n);
}

int rm_csv_read_file(const char *path, rm_csv_row_fn fn, void *ctx, _Atomic uint64_t *progress,
                     uint64_t *long_lines, char *err, size_t errsz)
{
    return rm_csv_read_range(path, 0, UINT64_MAX, fn, ctx, progress, long_lines, NULL, err, errsz);
}

int rm_csv_read_range(const char *path, uint64_t off, uint64_t end, rm_csv_row_fn fn, void *ctx,
                      _Atomic uint64_t *progress, uint64_t *long_lines, bool *quoted, char *err,
                      size_t errsz)
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
    if (rc == 0 && off == 0) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (rc == 0) {
        int e = read_range(fd, off, end, buf, CHUNK, feed_csv, r, progress);
        if (e == -1) snprintf(err, errsz, "%s: %s", path, strerror(errno));
        if (e == -2) snprintf(err, errsz, "%s: CSV parser failed (out of memory)", path);
        if (e) rc = -1;
    }
    if (rc == 0 && rm_csv_finish(r)) {
        snprintf(err, errsz, "%s: CSV parser failed at end of file", path);
        rc = -1;
    }
    if (r && long_lines) *long_lines = r->long_lines;
    /* The reader saw every byte (its fast path stops at a quote): no second pass for one. */
    if (r && quoted && r->saw_quote) *quoted = true;
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

/* Appends data up to and including line ends, handing complete lines to fn: in place when
 * the whole line is in p (the common case: no copy), else from the line buffer. */
static void lines_push(struct line_state *ls, const char *p, size_t n, rm_line_fn fn, void *ctx)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (nl && !ls->used && !ls->dropping && take <= ls->max) {
            fn(ctx, p, take, false);
            p += take + 1;
            n -= take + 1;
            continue;
        }
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

struct lines_feed {
    struct line_state *ls;
    rm_line_fn fn;
    void *ctx;
};

static int feed_lines(void *ctx, const char *p, size_t n)
{
    struct lines_feed *l = ctx;
    lines_push(l->ls, p, n, l->fn, l->ctx);
    return 0;
}

int rm_read_lines(const char *path, size_t max_line, rm_line_fn fn, void *ctx,
                  _Atomic uint64_t *progress, uint64_t *long_lines, char *err, size_t errsz)
{
    return rm_read_lines_range(path, 0, UINT64_MAX, max_line, fn, ctx, progress, long_lines, err,
                               errsz);
}

int rm_read_lines_range(const char *path, uint64_t off, uint64_t end, size_t max_line,
                        rm_line_fn fn, void *ctx, _Atomic uint64_t *progress, uint64_t *long_lines,
                        char *err, size_t errsz)
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
    struct lines_feed lf = {&ls, fn, ctx};
    if (rc == 0 && read_range(fd, off, end, chunk, CHUNK, feed_lines, &lf, progress)) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0) lines_end(&ls, fn, ctx);
    if (long_lines) *long_lines = ls.long_lines;
    free(ls.buf);
    free(chunk);
    close(fd);
    return rc;
}
