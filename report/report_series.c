/* Min/max-per-bucket downsampling with gaps kept (see report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int rm_series_init(struct rm_series *s, int64_t t0, int64_t t1, size_t nbuckets, int64_t gap_ns)
{
    memset(s, 0, sizeof *s);
    if (nbuckets == 0) nbuckets = 1;
    if (t1 < t0) t1 = t0;
    s->t0 = t0;
    s->t1 = t1;
    s->nb = nbuckets;
    s->b = calloc(nbuckets, sizeof *s->b);
    s->gap_ns = gap_ns > 0 ? gap_ns : 0;
    s->last_t = INT64_MIN;
    s->vmin = INFINITY;
    s->vmax = -INFINITY;
    return s->b ? 0 : -1;
}

void rm_series_free(struct rm_series *s)
{
    free(s->b);
    free(s->gaps);
    memset(s, 0, sizeof *s);
}

static size_t bucket_of(const struct rm_series *s, int64_t t)
{
    if (t <= s->t0 || s->t1 <= s->t0) return 0;
    if (t >= s->t1) return s->nb - 1;
    double f = (double)(t - s->t0) / (double)(s->t1 - s->t0 + 1);
    size_t i = (size_t)(f * (double)s->nb);
    return i < s->nb ? i : s->nb - 1;
}

/* Keeps the list bounded: when full, neighbouring gaps are merged pairwise. A merged gap
 * only breaks lines more often (never bridges a real gap). */
static void push_gap(struct rm_series *s, int64_t a, int64_t b)
{
    if (s->ngaps && s->gaps[s->ngaps - 1].b >= a && s->gaps[s->ngaps - 1].a <= a) {
        if (b > s->gaps[s->ngaps - 1].b) s->gaps[s->ngaps - 1].b = b;
        return;
    }
    if (s->ngaps == s->capgaps) {
        if (s->capgaps >= RM_SERIES_MAX_GAPS) {
            size_t k = 0;
            for (size_t i = 0; i < s->ngaps; i += 2) {
                struct rm_ds_gap g = s->gaps[i];
                if (i + 1 < s->ngaps) {
                    if (s->gaps[i + 1].a < g.a) g.a = s->gaps[i + 1].a;
                    if (s->gaps[i + 1].b > g.b) g.b = s->gaps[i + 1].b;
                }
                s->gaps[k++] = g;
            }
            s->ngaps = k;
        } else {
            size_t cap = s->capgaps ? s->capgaps * 2 : 16;
            struct rm_ds_gap *g = realloc(s->gaps, cap * sizeof *g);
            if (!g) return; /* a gap not recorded only joins a line; nothing worse */
            s->gaps = g;
            s->capgaps = cap;
        }
    }
    s->gaps[s->ngaps++] = (struct rm_ds_gap){a, b};
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Sets gap_ns from the spacings seen so far and applies it to them. */
static void estimate(struct rm_series *s)
{
    int64_t d[RM_SERIES_EST];
    size_t n = 0;
    for (size_t i = 0; i < s->nest; i++)
        if (s->est[i].b > s->est[i].a) d[n++] = s->est[i].b - s->est[i].a;
    if (n == 0) {
        s->gap_ns = INT64_MAX; /* nothing to go by: never a gap */
    } else {
        qsort(d, n, sizeof *d, cmp_i64);
        int64_t med = d[n / 2];
        s->gap_ns = med > INT64_MAX / RM_REPORT_GAP_FACTOR ? INT64_MAX : med * RM_REPORT_GAP_FACTOR;
    }
    for (size_t i = 0; i < s->nest; i++)
        if (s->est[i].b - s->est[i].a > s->gap_ns) push_gap(s, s->est[i].a, s->est[i].b);
    s->nest = 0;
}

void rm_series_add(struct rm_series *s, int64_t t, double v)
{
    if (!isfinite(v) || !s->b) return;
    if (s->last_t != INT64_MIN && t > s->last_t) {
        if (s->gap_ns == 0) {
            s->est[s->nest++] = (struct rm_ds_gap){s->last_t, t};
            if (s->nest == RM_SERIES_EST) estimate(s);
        } else if (t - s->last_t > s->gap_ns) {
            push_gap(s, s->last_t, t);
        }
    }
    if (s->last_t == INT64_MIN || t > s->last_t) s->last_t = t;
    s->n++;
    if (v < s->vmin) s->vmin = v;
    if (v > s->vmax) s->vmax = v;
    struct rm_ds_bucket *b = &s->b[bucket_of(s, t)];
    if (b->n == 0) {
        b->tmin = b->tmax = t;
        b->vmin = b->vmax = v;
    } else {
        if (v < b->vmin) b->vmin = v, b->tmin = t;
        if (v > b->vmax) b->vmax = v, b->tmax = t;
    }
    b->n++;
}

static int cmp_gap(const void *x, const void *y)
{
    const struct rm_ds_gap *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

size_t rm_series_points(struct rm_series *s, struct rm_ds_point **out)
{
    *out = NULL;
    if (!s->b || s->n == 0) return 0;
    if (s->gap_ns == 0) estimate(s);
    if (s->ngaps > 1) qsort(s->gaps, s->ngaps, sizeof *s->gaps, cmp_gap);
    struct rm_ds_point *p = malloc(2 * s->nb * sizeof *p);
    if (!p) return 0;
    size_t n = 0, g = 0;
    for (size_t i = 0; i < s->nb; i++) {
        const struct rm_ds_bucket *b = &s->b[i];
        if (b->n == 0) continue;
        int64_t ta = b->tmin, tb = b->tmax;
        double va = b->vmin, vb = b->vmax;
        if (ta > tb) {
            int64_t tt = ta;
            ta = tb, tb = tt;
            double vv = va;
            va = vb, vb = vv;
        }
        p[n++] = (struct rm_ds_point){ta, va, false};
        if (tb != ta || vb != va) p[n++] = (struct rm_ds_point){tb, vb, false};
    }
    /* A point starts a new line when a gap overlaps the span from the previous point: since
     * no sample lies inside a gap, that is exactly when the gap lies between them. Gaps are
     * sorted by start and points by time, so one pass over both suffices. */
    for (size_t i = 1; i < n; i++) {
        int64_t lo = p[i - 1].t, hi = p[i].t;
        while (g < s->ngaps && s->gaps[g].b <= lo)
            g++;
        for (size_t k = g; k < s->ngaps && s->gaps[k].a < hi; k++)
            if (s->gaps[k].b > lo) {
                p[i].brk = true;
                break;
            }
    }
    *out = p;
    return n;
}
