/* Scanning one file into its aggregate: the reader of its input kind, row by row, the
 * sampling interval found first, and what a file without data rows says about itself. */
#include "summary/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/energy.h"
#include "summary/csvread.h"
#include "summary/inputs.h"
#include "summary/period.h"
#include "summary/sniff.h"

static void reset_parser(struct file_agg *f)
{
    rm_input_reader(f->kind)->reset(f);
}

int rm_scan_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    return rm_input_reader(f->kind)->row(f, row, add, t);
}

/* Median spacing of the distinct sample times in the first 256 KiB of the file. */
struct prescan {
    int64_t t[65];
    int n;
};

static void prescan_gpu(void *ctx, const struct rm_gpu_sample *s)
{
    struct prescan *p = ctx;
    if (s->t_ns != RM_NO_TIME && p->n < 65 && (p->n == 0 || p->t[p->n - 1] != s->t_ns))
        p->t[p->n++] = s->t_ns;
}

struct prescan_ctx {
    struct file_agg *f;
    struct prescan ps;
};

static void prescan_csv_row(void *ctx, const struct rm_csv_row *row)
{
    struct prescan_ctx *c = ctx;
    struct rm_gpu_sample s;
    if (rm_input_reader(c->f->kind)->row(c->f, row, false, &s.t_ns) == 1) prescan_gpu(&c->ps, &s);
}

static void prescan_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct prescan_ctx *c = ctx;
    struct rm_gpu_sample s;
    if (rm_input_reader(c->f->kind)->line(c->f, line, len, torn, false, &s.t_ns) == 1)
        prescan_gpu(&c->ps, &s);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads up to cap bytes from the start of f's file and hands them to the parser of its kind:
 * line_fn for a kind read by line, row_fn for CSV (its last, cut-off row only when finish is set).
 * The parser is reset before and after. Returns the bytes (the caller frees them) with *got set, or
 * NULL when the file cannot be opened or memory is short. stop (CSV only, may be NULL): read and
 * parsed 64 KiB at a time, and no further once row_fn has set *stop (nothing more to learn). */
static char *scan_head(struct file_agg *f, size_t cap, rm_line_fn line_fn, rm_csv_row_fn row_fn,
                       void *ctx, int finish, size_t *got, const bool *stop)
{
    *got = 0;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *buf = malloc(cap);
    bool by_line = rm_input_reader(f->kind)->line != NULL;
    struct rm_csv_reader *piecewise = NULL;
    if (buf && stop && !by_line) {
        reset_parser(f);
        piecewise = rm_csv_new(row_fn, ctx);
    }
    while (buf && *got < cap && !(stop && *stop)) {
        size_t want = cap - *got;
        if (piecewise && want > 65536) want = 65536;
        ssize_t r = read(fd, buf + *got, want);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        if (piecewise) rm_csv_feed(piecewise, buf + *got, (size_t)r);
        *got += (size_t)r;
    }
    close(fd);
    if (piecewise) {
        if (finish && !*stop) rm_csv_finish(piecewise);
        rm_csv_free(piecewise);
        reset_parser(f);
        return buf;
    }
    reset_parser(f);
    if (buf && by_line) {
        rm_split_lines(buf, *got, 65536, line_fn, ctx, NULL);
    } else if (buf) {
        struct rm_csv_reader *r = rm_csv_new(row_fn, ctx);
        if (r) {
            rm_csv_feed(r, buf, *got);
            if (finish) rm_csv_finish(r);
            rm_csv_free(r);
        }
    }
    reset_parser(f);
    return buf;
}

static int64_t prescan_interval(struct file_agg *f)
{
    struct prescan_ctx c = {.f = f};
    size_t got;
    /* Only whole lines: the cut-off last one would read as torn anyway. */
    free(scan_head(f, 256 * 1024, prescan_line, prescan_csv_row, &c, 0, &got, NULL));
    int64_t d[64];
    int n = 0;
    for (int i = 1; i < c.ps.n; i++)
        if (c.ps.t[i] > c.ps.t[i - 1]) d[n++] = c.ps.t[i] - c.ps.t[i - 1];
    if (n == 0) return 0;
    qsort(d, (size_t)n, sizeof d[0], cmp_i64);
    return d[n / 2];
}

/* A GPU file's gaps are its GPUs' own: one GPU's hole while another's rows go on is a gap
 * (the file's times alone would hide it). Host files keep the spacing of the file's times. */
static void gaps_per_gpu(struct file_agg *f)
{
    if (!rm_input_reader(f->kind)->gpu_gaps) return;
    f->gaps = 0;
    f->gap_total_ns = 0;
    for (size_t i = 0; i < f->gpus.n; i++) {
        f->gaps += f->gpus.s[i].st.gaps;
        if (__builtin_add_overflow(f->gap_total_ns, f->gpus.s[i].st.gap_ns, &f->gap_total_ns))
            f->gap_total_ns = INT64_MAX;
    }
}

/* For a file without data rows: the first line its reader rejects as not data (a header is
 * not one), read again from the first 64 KiB. A file of nvidia-smi's output that holds only
 * "Failed to initialize NVML: ..." is explained by that line better than by anything else. */
struct first_bad {
    struct file_agg *f;
    uint64_t line, at;
};

static void first_bad_row(void *ctx, const struct rm_csv_row *row)
{
    struct first_bad *b = ctx;
    int64_t t;
    int rc = rm_input_reader(b->f->kind)->row(b->f, row, false, &t);
    if (!b->line && rc < 0 && rc != -(1 + RM_SKIP_PER_CPU)) b->line = row->line;
}

static void first_bad_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct first_bad *b = ctx;
    int64_t t;
    b->at++; /* blank lines are delivered too, so this is the line number */
    if (!b->line && rm_input_reader(b->f->kind)->line(b->f, line, len, torn, false, &t) < 0)
        b->line = b->at;
}

/* Writes "; its first line that is not data (line N) ...: TEXT" (TEXT escaped) into out, or
 * nothing when every line was data, a header or blank. */
static void quote_first_bad_line(struct file_agg *f, char *out, size_t cap)
{
    out[0] = '\0';
    struct first_bad b = {.f = f};
    size_t got;
    char *buf = scan_head(f, 64 * 1024, first_bad_line, first_bad_row, &b, 1, &got, NULL);
    if (!buf) return;
    const char *p = buf, *end = buf + got;
    for (uint64_t n = 1; b.line && n < b.line && p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (b.line && p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        char text[240];
        size_t full = rm_term_escape_n(text, sizeof text, p, len);
        snprintf(out, cap,
                 "; its first line that is not data (line %llu), maybe nvidia-smi's "
                 "own error: %s%s",
                 (unsigned long long)b.line, text, full >= sizeof text ? "..." : "");
    }
    free(buf);
}

/* Rows of a query-gpu file without index, uuid, bus id or time carry only their order (and
 * maybe a name): the names of the first 4 MiB, interned, to find their period. */
#define IDENT_SCAN_BYTES (4u << 20)
struct ident_scan {
    struct file_agg *f;
    bool identified; /* a row had an identity or a time: nothing to decide */
    uint32_t *ids;
    size_t n, cap;
    char **names;
    size_t nnames;
};

static void ident_row(void *ctx, const struct rm_csv_row *row)
{
    struct ident_scan *c = ctx;
    struct rm_gpu_sample s;
    if (c->identified || rm_gpucsv_row(&c->f->parser->gpu, row, &s) != 1) return;
    if (s.index.len || s.uuid.len || s.pci.len || s.t_ns != RM_NO_TIME) {
        c->identified = true;
        return;
    }
    uint32_t id = 0;
    while (id < c->nnames && !(strlen(c->names[id]) == s.name.len &&
                               (!s.name.len || memcmp(c->names[id], s.name.s, s.name.len) == 0)))
        id++;
    if (id == c->nnames) {
        c->names = rm_xrealloc(c->names, (c->nnames + 1) * sizeof *c->names);
        c->names[c->nnames] = rm_xcalloc(1, s.name.len + 1);
        if (s.name.len) memcpy(c->names[c->nnames], s.name.s, s.name.len);
        c->nnames++;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->ids = rm_xrealloc(c->ids, c->cap * sizeof *c->ids);
    }
    c->ids[c->n++] = id;
}

/* Without session.json's GPU count, rows with no identity and no time are told apart by the
 * smallest period of their name sequence: 7 "GTX 1080 Ti" and a "GTX 1080" are 8 GPUs, not 7
 * samples of one and a sample of another. f->ident_note says what was assumed. */
static void split_by_name_period(struct file_agg *f)
{
    if (!rm_input_reader(f->kind)->name_period || f->gpu_count > 0) return;
    struct ident_scan c = {.f = f};
    size_t got;
    free(scan_head(f, IDENT_SCAN_BYTES, NULL, ident_row, &c, 1, &got, &c.identified));
    bool named = c.nnames > 1 || (c.nnames == 1 && c.names[0][0]);
    if (!c.identified && c.n > 0 && !named) {
        snprintf(f->ident_note, sizeof f->ident_note,
                 "%s: rows without index, uuid, bus id, time or name: nothing tells GPUs or "
                 "samples apart; read as %zu samples of one GPU%s",
                 f->path, c.n, got >= IDENT_SCAN_BYTES ? " (counted in the first 4 MiB)" : "");
    } else if (!c.identified && c.n > 0) {
        size_t p = rm_smallest_period(c.ids, c.n);
        if (p <= 256) f->gpu_count = (int)p;
        snprintf(f->ident_note, sizeof f->ident_note,
                 "%s: rows with no index, uuid, bus id or time: GPUs told apart by the period "
                 "of the name sequence, %zu rows (the smallest period the %s agrees with)%s",
                 f->path, p, got >= IDENT_SCAN_BYTES ? "first 4 MiB" : "whole file",
                 p == 1 ? "; rows of one name could also be several GPUs of that model" : "");
    }
    for (size_t i = 0; i < c.nnames; i++)
        free(c.names[i]);
    free(c.names);
    free(c.ids);
}

/* Everything before the rows: the parser, the sampling interval, the file's size. */
int rm_scan_prepare(struct file_agg *f, int64_t interval_ns)
{
    f->parser = calloc(1, sizeof *f->parser);
    if (!f->parser) {
        f->rc = 1;
        snprintf(f->err, sizeof f->err, "%s: out of memory", f->path);
        return -1;
    }
    /* Each stream's gaps against its own period (dmon's whole seconds); some kinds sample at
     * their own spacing whatever the session's interval (pmon's whole seconds). */
    f->interval_ns =
        rm_input_reader(f->kind)->own_spacing ? 0 : rm_stream_period_ns(f->kind, interval_ns);
    if (f->interval_ns <= 0) f->interval_ns = prescan_interval(f);
    if (f->interval_ns > 86400 * RM_NS_PER_SEC)
        f->interval_ns = 86400 * RM_NS_PER_SEC; /* keeps 3 x interval far from overflow */
    f->gap_ns = 3 * f->interval_ns;
    split_by_name_period(f);
    reset_parser(f);
    struct stat st;
    if (stat(f->path, &st) == 0) f->bytes = (uint64_t)st.st_size;
    return 0;
}

/* The rows of bytes [off, end) of the file into f. */
int rm_scan_range(struct file_agg *f, uint64_t off, uint64_t end, _Atomic uint64_t *progress,
                  uint64_t *longl, bool *quoted)
{
    if (rm_input_reader(f->kind)->line)
        return rm_read_lines_range(f->path, off, end, 65536, rm_input_fold_line, f, progress, longl,
                                   f->err, sizeof f->err);
    return rm_csv_read_range(f->path, off, end, rm_input_fold_row, f, progress, longl, quoted,
                             f->err, sizeof f->err);
}

/* After the rows: the last sample group, gaps, notes, and why a file without rows is empty. */
void rm_scan_finish(struct file_agg *f, int rc, uint64_t longl)
{
    enum rm_sniff sniff;
    f->skipped[RM_SKIP_LONG_LINE] += longl;
    if (f->group_open) rm_file_flush_group(f);
    gaps_per_gpu(f);
    const struct rm_input_reader *rd = rm_input_reader(f->kind);
    if (rd->close) rd->close(f);
    if (rd->note) rd->note(f);
    if (f->ident_note[0]) {
        size_t u = strlen(f->note);
        snprintf(f->note + u, sizeof f->note - u, "%s%s", u ? "; " : "", f->ident_note);
    }
    if (rc == 0 && f->err[0]) { /* the reader's note: rows it skipped for a limit */
        size_t u = strlen(f->note);
        snprintf(f->note + u, sizeof f->note - u, "%s%s", u ? "; " : "", f->err);
        f->err[0] = '\0';
    }
    /* A file the user named whose head is neither runmon's nor nvidia-smi's is refused even
     * where some of its lines parse as rows (a README read as 41 GPUs); others only when no
     * row does. */
    if (rc) {
        f->rc = 2;
    } else if ((f->sniffed == RM_SNIFF_TEXT || f->sniffed == RM_SNIFF_BINARY ||
                (f->rows == 0 && f->path)) &&
               (sniff = f->sniffed != RM_SNIFF_EMPTY ? (enum rm_sniff)f->sniffed
                                                     : rm_sniff_file(f->path)) != RM_SNIFF_EMPTY &&
               sniff != RM_SNIFF_NVSMI) {
        /* Neither runmon's nor nvidia-smi's: advice on their layouts would mislead. */
        f->rc = 2;
        f->note[0] = '\0';
        snprintf(f->err, sizeof f->err, "%s: not a runmon or nvidia-smi file (%s)", f->path,
                 sniff == RM_SNIFF_BINARY
                     ? "binary data"
                     : "text, but no line like nvidia-smi's: no CSV header or rows of numbers, "
                       "no dmon header, no nvidia-smi message");
    } else if (f->rows == 0) {
        f->rc = 2;
        char why[384];
        quote_first_bad_line(f, why, sizeof why);
        snprintf(f->err, sizeof f->err, "%s: holds no data rows (%s)%s", f->path,
                 rm_input_defs[f->kind].name, why);
    }
    free(f->parser);
    f->parser = NULL;
}

void rm_scan_file(struct file_agg *f, int64_t interval_ns, _Atomic uint64_t *progress)
{
    if (rm_scan_prepare(f, interval_ns)) return;
    uint64_t longl = 0;
    int rc = rm_scan_range(f, 0, UINT64_MAX, progress, &longl, NULL);
    rm_scan_finish(f, rc, longl);
}
