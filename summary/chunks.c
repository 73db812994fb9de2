/* One large GPU file in chunks scanned in parallel (see chunks.h). */
#include "summary/chunks.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "summary/csvread.h"
#include "summary/inputs.h"
#include "summary/scan.h"

#define RM_CHUNK_DEFAULT (8ull << 20)

uint64_t rm_chunk_bytes(void)
{
    const char *e = getenv("RUNMON_SUMMARY_CHUNK_BYTES");
    if (!e || !*e) return RM_CHUNK_DEFAULT;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    return *end ? RM_CHUNK_DEFAULT : (uint64_t)v; /* 0: never in chunks */
}

bool rm_chunkable(enum rm_input_kind k)
{
    return rm_input_reader(k)->same_map != NULL;
}

/* Probing lines one at a time: the row reader's verdict, time and GPU key ("i:<index>", as
 * the GPU table keys it; empty without an index) for the last line fed. */
struct probe {
    struct file_agg *f;
    int rc;
    int64_t t;
    char key[24];
    size_t keylen;
};

/* The key of the row just probed, copied out of the line (which lives only for the call). */
static void probe_key(struct probe *p)
{
    const struct rm_strref *ix = &p->f->probe_index;
    p->keylen = 0;
    if (p->rc != 1 || !ix->len || ix->len + 2 > sizeof p->key) return;
    p->key[0] = 'i';
    p->key[1] = ':';
    memcpy(p->key + 2, ix->s, ix->len);
    p->keylen = ix->len + 2;
}

static void probe_row(void *ctx, const struct rm_csv_row *row)
{
    struct probe *p = ctx;
    p->rc = rm_scan_row(p->f, row, false, &p->t);
}

/* Feeds one whole line (without its "\n") to f's parser: 1 with *t for a sample, else 0 or
 * a skip. r is a CSV reader set up with probe_row (NULL for a kind read by line). */
static int probe_line(struct probe *p, struct rm_csv_reader *r, const char *line, size_t len)
{
    p->rc = 0;
    p->f->probe_index.len = 0;
    if (!r) {
        p->t = RM_NO_TIME;
        p->rc = rm_input_reader(p->f->kind)->line(p->f, line, len, false, false, &p->t);
        probe_key(p);
        return p->rc;
    }
    /* The line and its "\n" in one feed: the reader's whole-line path, nothing held back. */
    char tmp[4096];
    if (len >= sizeof tmp) return -(1 + RM_SKIP_LONG_LINE);
    memcpy(tmp, line, len);
    tmp[len] = '\n';
    if (rm_csv_feed(r, tmp, len + 1)) return -(1 + RM_SKIP_NOT_DATA);
    probe_key(p);
    return p->rc;
}

static int64_t probe_time(const struct probe *p)
{
    return p->rc == 1 ? p->t : RM_NO_TIME;
}

/* A chunk's file_agg: f's settings, its parser in state from (a copy); key: where chunks of
 * rows without time are cut (NULL for rows with time). */
static struct file_agg *new_part(const struct file_agg *f, const void *from, uint64_t off,
                                 uint64_t end, const struct probe *key)
{
    struct file_agg *p = rm_xcalloc(1, sizeof *p);
    rm_file_agg_init(p, f->kind, f->path);
    p->rl = f->rl;
    p->gpu_fields = f->gpu_fields;
    p->gpu_fields_src = f->gpu_fields_src;
    p->gpu_count = f->gpu_count;
    p->interval_ns = f->interval_ns;
    p->gap_ns = f->gap_ns;
    p->parser = rm_xmemdup(from, sizeof *p->parser);
    p->part_off = off;
    p->part_end = end;
    p->part_start = rm_xmemdup(from, sizeof *p->parser);
    if (key) {
        memcpy(p->cut_key, key->key, key->keylen);
        p->cut_keylen = key->keylen;
    }
    return p;
}

enum { PROBE_WINDOW = 256 * 1024 }; /* bytes read to find the first row or a cut */

/* The parser's state after the file's first data row (what every later chunk starts in), or
 * NULL when there is no place to cut: no data row in the first window, a quote first, or a
 * row with neither time nor GPU index. A row without time sets *key to its GPU's key (the
 * GPU that starts each sample group: cuts go where it comes again); else keylen is 0. */
static void *first_row_state(int fd, char *buf, struct probe *pr, struct rm_csv_reader *r,
                             struct probe *key)
{
    ssize_t got = pread(fd, buf, PROBE_WINDOW, 0);
    for (size_t at = 0; got > 0 && at < (size_t)got;) {
        const char *nl = memchr(buf + at, '\n', (size_t)got - at);
        if (!nl) break;
        size_t len = (size_t)(nl - (buf + at));
        if (memchr(buf + at, '"', len)) break;
        if (probe_line(pr, r, buf + at, len) == 1) {
            key->keylen = 0;
            if (probe_time(pr) == RM_NO_TIME) { /* dmon without -o T: cut by GPU */
                if (!pr->keylen) return NULL;
                *key = *pr;
            }
            void *s0 = rm_xmemdup(pr->f->parser, sizeof *pr->f->parser);
            return s0;
        }
        at += len + 1;
    }
    return NULL;
}

/* Where the chunk that the grid starts at off really starts: the first row, after the first
 * line starting at or after off, whose time differs from that line's row; for rows without
 * time (key set), the first row from that line on of the GPU of key. 0 when the window holds
 * none, UINT64_MAX when nothing more can be read. */
static uint64_t find_cut_in(int fd, char *buf, size_t window, uint64_t off, struct probe *pr,
                            struct rm_csv_reader *r, const void *s0, const struct probe *key)
{
    ssize_t got = pread(fd, buf, window, (off_t)(off - 1));
    if (got <= 0) return UINT64_MAX;
    memcpy(pr->f->parser, s0, sizeof *pr->f->parser);
    const char *p = memchr(buf, '\n', (size_t)got);
    bool have = false;
    int64_t t0 = RM_NO_TIME;
    while (p) {
        const char *ls = p + 1, *nl = memchr(ls, '\n', (size_t)(buf + got - ls));
        if (!nl || memchr(ls, '"', (size_t)(nl - ls))) return 0;
        if (probe_line(pr, r, ls, (size_t)(nl - ls)) == 1) {
            int64_t t = probe_time(pr);
            if (key->keylen) {
                if (pr->keylen == key->keylen && !memcmp(pr->key, key->key, key->keylen))
                    return off - 1 + (uint64_t)(ls - buf);
            } else if (!have) {
                have = true;
                t0 = t;
            } else if (t != t0) {
                return off - 1 + (uint64_t)(ls - buf);
            }
        }
        p = nl;
    }
    return 0;
}

/* find_cut_in a window of 16 KiB first (a cut is usually within a sample group or two), the
 * whole PROBE_WINDOW only where that one holds none: the lines are read alike from the same
 * offset, so the answer is the same (a cut found early is the first either way), with a
 * sixteenth of the bytes copied for most cuts. */
static uint64_t find_cut(int fd, char *buf, uint64_t off, struct probe *pr, struct rm_csv_reader *r,
                         const void *s0, const struct probe *key)
{
    uint64_t at = find_cut_in(fd, buf, 16 * 1024, off, pr, r, s0, key);
    return at ? at : find_cut_in(fd, buf, PROBE_WINDOW, off, pr, r, s0, key);
}

/* The chunks of f (already prepared: interval, parser reset), or 0 when f is read whole.
 * *parts is malloc'd; its first chunk starts at 0, the last ends at the end of the file. */
size_t rm_plan_chunks(struct file_agg *f, uint64_t chunk, struct file_agg ***parts)
{
    *parts = NULL;
    if (!chunk || !rm_chunkable(f->kind) || f->bytes < 2 * chunk) return 0;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char *buf = malloc(PROBE_WINDOW);
    struct rm_csv_reader *r = NULL;
    struct probe pr = {.f = rm_xcalloc(1, sizeof *pr.f)};
    rm_file_agg_init(pr.f, f->kind, NULL);
    pr.f->gpu_fields = f->gpu_fields;
    pr.f->gpu_fields_src = f->gpu_fields_src;
    pr.f->parser = rm_xmemdup(f->parser, sizeof *pr.f->parser);
    bool by_line = rm_input_reader(f->kind)->line != NULL;
    if (!by_line) r = rm_csv_new(probe_row, &pr);
    size_t n = 0;
    struct probe key = {.keylen = 0};
    void *s0 = buf && (r || by_line) ? first_row_state(fd, buf, &pr, r, &key) : NULL;
    uint64_t *cut = NULL;
    size_t ncut = 0;
    for (uint64_t off = chunk; s0 && off < f->bytes; off += chunk) {
        uint64_t at_cut = find_cut(fd, buf, off, &pr, r, s0, &key);
        if (at_cut == UINT64_MAX) break;
        if (at_cut && (ncut == 0 || at_cut > cut[ncut - 1]) && at_cut < f->bytes) {
            cut = rm_xrealloc(cut, (ncut + 1) * sizeof *cut);
            cut[ncut++] = at_cut;
        }
    }
    if (ncut) {
        n = ncut + 1;
        *parts = rm_xcalloc(n, sizeof **parts);
        for (size_t k = 0; k < n; k++)
            (*parts)[k] = new_part(f, k ? s0 : (const void *)f->parser, k ? cut[k - 1] : 0,
                                   k < ncut ? cut[k] : UINT64_MAX, key.keylen ? &key : NULL);
    }
    free(cut);
    free(s0);
    rm_csv_free(r);
    rm_file_agg_free(pr.f);
    free(buf);
    close(fd);
    return n;
}

void rm_scan_part(struct file_agg *p, _Atomic uint64_t *progress)
{
    uint64_t longl = 0;
    int rc = rm_scan_range(p, p->part_off, p->part_end, progress, &longl, &p->part_quoted);
    /* Cut by GPU: the whole file starts a new sample group where the next chunk starts only
     * if that GPU already has a row in this chunk's last group. */
    if (p->cut_keylen) p->cut_in_group = rm_file_key_in_group(p, p->cut_key, p->cut_keylen);
    if (p->group_open) rm_file_flush_group(p);
    p->skipped[RM_SKIP_LONG_LINE] += longl;
    p->rc = rc ? 2 : 0;
}

struct fold_ctx {
    struct file_agg *f;
    size_t slot;
};

static void add_fold_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j,
                          const struct rm_energy_bar *bar)
{
    struct fold_ctx *c = ctx;
    if (phase < c->f->rl->nphases)
        rm_stats_add_span(rm_file_phase_gpu(c->f, phase, c->slot), kind, ns, j, bar);
}

/* Folds chunk b (the stretch of the file right after what f holds) into f. */
static void fold_part(struct file_agg *f, struct file_agg *b)
{
    f->rows += b->rows;
    for (int k = 0; k < RM_SKIP_COUNT; k++)
        f->skipped[k] += b->skipped[k];
    if (f->first_ns == RM_NO_TIME) f->first_ns = b->first_ns;
    if (b->last_ns != RM_NO_TIME && (f->last_ns == RM_NO_TIME || b->last_ns > f->last_ns))
        f->last_ns = b->last_ns;
    rm_stat_merge(&f->total_power, &b->total_power);
    size_t *map = rm_xcalloc(b->gpus.n + 1, sizeof *map);
    for (size_t i = 0; i < b->gpus.n; i++) {
        const struct gpu_slot *g = &b->gpus.s[i];
        size_t j = rm_gpu_table_find(&f->gpus, g->key, g->keylen);
        if (j == (size_t)-1) {
            j = rm_gpu_table_add(&f->gpus, g->key, g->keylen);
            struct gpu_slot *d = &f->gpus.s[j];
            struct rm_gpu_stats keep = d->st;
            *d = *g;
            d->st = keep;
        }
        map[i] = j;
        struct rm_gpu_stats *a = &f->gpus.s[j].st;
        /* The spacing across the boundary, inside the phases' windows, as add_gpu_sample
         * would have cut it. */
        if (f->rl && f->rl->nwin && a->last_ns != RM_NO_TIME && g->st.first_ns != RM_NO_TIME) {
            struct fold_ctx c = {f, j};
            rm_phase_spans(f->rl, &f->spans, a->last_ns, a->last_power, g->st.first_ns,
                           g->st.first_power, f->gap_ns, add_fold_span, &c);
        }
        rm_stats_merge(a, &g->st, f->gap_ns);
    }
    for (size_t p = 0; b->ph && p < b->nph; p++) {
        const struct phase_acc *a = rm_file_phase_get(b, p);
        for (size_t i = 0; a && a->used && i < a->ngpu && i < b->gpus.n; i++) {
            const struct rm_gpu_stats *st = &a->gpu[i];
            if (!st->samples && !st->covered_ns && !st->gaps) continue;
            rm_stats_fold(rm_file_phase_gpu(f, p, map[i]), st);
        }
        /* Folded: the chunk's part goes, and f's waits packed unless still in use. */
        rm_file_agg_drop_phase(b, p);
        rm_file_park_idle(f);
    }
    free(map);
}

/* After every chunk of f was scanned: f's figures folded from them, or f scanned again whole
 * when one of them could not stand for its stretch of the file. The parts are freed. */
void rm_finish_parts(struct file_agg *f, struct file_agg **parts, size_t n, int64_t interval_ns,
                     _Atomic uint64_t *progress)
{
    bool ok = true;
    const char *forced = getenv("RUNMON_SUMMARY_CHUNK_BYTES");
    for (size_t k = 0; k < n && ok; k++) {
        const struct file_agg *p = parts[k];
        /* Each chunk must have ended in the column map the next one started in (and, cut by
         * GPU, in a sample group the next chunk's first row would have closed). */
        ok = p->rc == 0 && !p->err[0] && !p->part_quoted && !p->skipped[RM_SKIP_LONG_LINE] &&
             (k + 1 == n ||
              (rm_input_reader(f->kind)->same_map(p->parser, parts[k + 1]->part_start) &&
               (!p->cut_keylen || p->cut_in_group)));
    }
    /* Only for whoever set the chunk size: what became of the file. */
    if (forced && *forced)
        fprintf(stderr, "runmon summary: %s: %zu chunks%s\n", f->path, n,
                ok ? "" : ", read again whole");
    if (ok) {
        for (size_t k = 0; k < n; k++)
            fold_part(f, parts[k]);
        memcpy(f->parser, parts[n - 1]->parser, sizeof *f->parser);
        rm_scan_finish(f, 0, 0);
    }
    for (size_t k = 0; k < n; k++)
        rm_file_agg_free(parts[k]);
    free(parts);
    if (!ok) { /* nothing was folded into f: only its parser to drop before reading it whole */
        free(f->parser);
        f->parser = NULL;
        rm_scan_file(f, interval_ns, progress);
    }
}
