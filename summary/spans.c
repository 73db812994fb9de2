/* A spacing cut to the phases' windows (see spans.h). */
#include "summary/spans.h"

#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "summary/stats.h"

static void collect_window(void *ctx, size_t phase, int64_t start, int64_t end)
{
    struct span_buf *b = ctx;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->v = rm_xrealloc(b->v, b->cap * sizeof *b->v);
    }
    b->v[b->n++] = (struct span_piece){phase, start, end, start, end};
}

static int cmp_piece(const void *x, const void *y)
{
    const struct span_piece *a = x, *b = y;
    if (a->phase != b->phase) return a->phase < b->phase ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* Power at t on the line from (t0, p0) to (t1, p1); one missing end: the other's value. */
static double power_at(int64_t t0, double p0, int64_t t1, double p1, int64_t t)
{
    if (isnan(p0)) return p1;
    if (isnan(p1)) return p0;
    return p0 + (p1 - p0) * ((double)(t - t0) / (double)(t1 - t0));
}

void rm_phase_spans(const struct rm_phase_index *rl, struct span_buf *buf, int64_t t0, double p0,
                    int64_t t1, double p1, int64_t gap_ns,
                    void (*add)(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns,
                                double joules, const struct rm_energy_bar *bar),
                    void *ctx)
{
    if (!rl || rl->nwin == 0 || t0 == RM_NO_TIME || t1 == RM_NO_TIME || t1 <= t0) return;
    double jall;
    int64_t dt;
    enum rm_span_kind kind = rm_energy_span(t0, p0, t1, p1, gap_ns, &jall, &dt);
    if (kind == RM_SPAN_BACKWARDS) return;
    if (buf->rl != rl || buf->nwin != rl->nwin || buf->t0 != t0 || buf->t1 != t1) {
        buf->n = 0;
        rm_runlog_windows_over(rl, t0, t1, collect_window, buf);
        for (size_t k = 0; k < buf->n; k++) { /* clipped at the samples */
            if (buf->v[k].a < t0) buf->v[k].a = t0;
            if (buf->v[k].b > t1) buf->v[k].b = t1;
        }
        if (buf->n > 1) qsort(buf->v, buf->n, sizeof *buf->v, cmp_piece);
        buf->rl = rl, buf->nwin = rl->nwin, buf->t0 = t0, buf->t1 = t1;
    }
    if (buf->n == 0) return;
    bool power = !isnan(p0) || !isnan(p1);
    for (size_t k = 0; k < buf->n;) {
        size_t phase = buf->v[k].phase;
        int64_t ns = 0;
        double j = 0;
        struct rm_energy_bar bar = {0};
        while (k < buf->n && buf->v[k].phase == phase) {
            /* The union of this phase's windows: overlapping ones merged (its window for the
             * bar: from the first one's start to the end of the one that ends last). Windows
             * that only touch stay apart: each has its own edges, as when their paths are
             * summed into one row after the files are read. */
            int64_t a = buf->v[k].a, b = buf->v[k].b, wa = buf->v[k].wa, wb = buf->v[k].wb;
            for (k++; k < buf->n && buf->v[k].phase == phase && buf->v[k].a < b; k++)
                if (buf->v[k].b > b) b = buf->v[k].b, wb = buf->v[k].wb;
            if (b <= a) continue;
            ns += b - a;
            if (kind == RM_SPAN_BRIDGED && power) {
                double jp = (power_at(t0, p0, t1, p1, a) + power_at(t0, p0, t1, p1, b)) / 2 *
                            ((double)(b - a) / 1e9);
                j += jp;
                rm_energy_piece_bar(t0, p0, t1, p1, a, b, a == wa, b == wb, &bar);
            }
        }
        if (ns > 0) add(ctx, phase, kind, ns, j, &bar);
    }
}
