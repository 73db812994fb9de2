/* Clock throttle reasons from gpu.csv: nvidia-smi's clocks_event_reasons.* columns (before
 * driver 535: clocks_throttle_reasons.*), each "Active"/"Not Active", and the bit mask
 * clocks_event_reasons.active ("0x0000000000000004"). They are not in the default field list;
 * a session that asked for them (--gpu-fields) gets them drawn as spans on the clock chart. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/throttle.h"
#include "model/values.h"
#include "report/report_internal.h"

const char *rm_report_thr_name(int k)
{
    return rm_thr_name(k);
}

void rm_report_thr_reset(struct report *r)
{
    for (int k = 0; k < RM_THR_REASONS; k++)
        r->thr_col[k] = -1;
    r->thr_mask_col = -1;
}

void rm_report_thr_header(struct report *r, const struct rm_csv_row *row)
{
    bool any = false;
    for (size_t i = 0; i < row->n && !any; i++)
        any = rm_thr_column(row->f[i], rm_header_name_len(row->f[i], row->len[i])) != -1;
    if (!any) return;
    rm_report_thr_reset(r);
    for (size_t i = 0; i < row->n; i++) {
        int k = rm_thr_column(row->f[i], rm_header_name_len(row->f[i], row->len[i]));
        if (k == -1) continue;
        if (k == RM_THR_MASK_COLUMN)
            r->thr_mask_col = (long)i;
        else
            r->thr_col[k] = (long)i;
        r->thr_recorded = true;
    }
}

static void push_span(struct thr_track *tr, int64_t a, int64_t b, int64_t px)
{
    if (tr->n && a - tr->s[tr->n - 1].b <= px) { /* closer than a pixel: one span */
        struct thr_span *l = &tr->s[tr->n - 1];
        if (b > l->b) l->b = b;
        l->active_ns += b - a;
        l->runs++;
        return;
    }
    tr->s = rm_xgrow(tr->s, &tr->cap, tr->n + 1, sizeof *tr->s);
    tr->s[tr->n++] = (struct thr_span){a, b, b - a, 1};
}

static int64_t pixel_ns(const struct report *r)
{
    return (int64_t)((double)(r->t1 - r->t0) / PW);
}

/* The reasons a row reports active, in *mask; false when it reports none either way
 * (every throttle field "[N/A]", "[Not Supported]" or empty: unknown, not "none active"). */
static bool row_mask(const struct report *r, const struct rm_csv_row *row, unsigned *mask)
{
    bool known = false;
    *mask = 0;
    long c = r->thr_mask_col;
    if (c >= 0 && (size_t)c < row->n && rm_thr_mask(row->f[c], row->len[c], mask)) known = true;
    for (int k = 0; k < RM_THR_REASONS; k++) {
        c = r->thr_col[k];
        if (c < 0 || (size_t)c >= row->n) continue;
        int on = rm_thr_flag(row->f[c], row->len[c]);
        if (on == 1) *mask |= 1u << k;
        if (on >= 0) known = true;
    }
    return known;
}

void rm_report_thr_row(struct report *r, struct gpu_track *t, int64_t t_ns,
                       const struct rm_csv_row *row)
{
    unsigned mask;
    if (!r->thr_recorded || !row_mask(r, row, &mask)) return;
    int64_t px = pixel_ns(r);
    for (int k = 0; k < RM_THR_REASONS; k++) {
        struct thr_track *tr = &t->thr[k];
        bool near = tr->open && (r->gap_ns == 0 || t_ns - tr->last <= r->gap_ns);
        if (mask >> k & 1) {
            if (near) {
                if (t_ns > tr->last) tr->last = t_ns;
                continue;
            }
            if (tr->open) push_span(tr, tr->a, tr->last, px);
            tr->open = true;
            tr->a = tr->last = t_ns;
        } else if (tr->open) {
            /* Active until the sample that saw it end, unless that one came after a gap. */
            push_span(tr, tr->a, near && t_ns > tr->last ? t_ns : tr->last, px);
            tr->open = false;
        }
    }
}

void rm_report_thr_finish(struct report *r)
{
    int64_t px = pixel_ns(r);
    for (size_t i = 0; r->gpus && i < r->ngpus; i++)
        for (int k = 0; k < RM_THR_REASONS; k++) {
            struct thr_track *tr = &r->gpus[i].thr[k];
            if (tr->open) push_span(tr, tr->a, tr->last, px);
            tr->open = false;
        }
}

void rm_report_thr_free(struct gpu_track *t)
{
    for (int k = 0; k < RM_THR_REASONS; k++)
        free(t->thr[k].s);
}
