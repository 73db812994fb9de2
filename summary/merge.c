/* Merging: the files of one source into one table of GPUs (phases too), and the GPUs of the
 * query-gpu and dmon sources paired into the summary's GPUs. */
#include "summary/merge.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "summary/pack.h"

/* ---- merging ---------------------------------------------------------------------- */

void rm_source_free(struct source *src)
{
    for (size_t p = 0; src->ph && p < src->nph; p++)
        free(src->ph[p]);
    free(src->ph);
    free(src->phn);
    free(src->cur);
    free(src->t.s);
}

/* Room in src->cur for n slots. */
static void cur_room(struct source *src, size_t n)
{
    if (src->ncur < n) {
        src->cur = rm_xrealloc(src->cur, n * sizeof *src->cur);
        src->ncur = n;
    }
}

const struct rm_gpu_stats *rm_source_phase(struct source *src, size_t p)
{
    if (!src->ph || p >= src->nph || !src->phn[p]) return NULL;
    if (src->curp != p || !src->cur) {
        cur_room(src, src->phn[p]);
        rm_unpack_gpu_stats(src->ph[p], src->cur, src->phn[p]);
        src->curp = p;
    }
    return src->cur;
}

void rm_source_drop_phase(struct source *src, size_t p)
{
    if (!src->ph || p >= src->nph) return;
    free(src->ph[p]);
    src->ph[p] = NULL;
    src->phn[p] = 0;
    if (src->curp == p) src->curp = SIZE_MAX;
}

/* Phase p's statistics, at least slot j's, unpacked into src->cur to change them. */
static struct rm_gpu_stats *open_phase(struct source *src, size_t nph, size_t p, size_t j)
{
    if (!src->ph) {
        src->nph = nph;
        src->ph = rm_xcalloc(nph, sizeof *src->ph);
        src->phn = rm_xcalloc(nph, sizeof *src->phn);
        src->curp = SIZE_MAX;
    }
    size_t had = src->phn[p], n = had;
    if (n <= j) n = src->t.n > j ? src->t.n : j + 1;
    cur_room(src, n);
    if (src->curp != p) rm_unpack_gpu_stats(src->ph[p], src->cur, had);
    for (size_t k = had; k < n; k++)
        rm_stats_init(&src->cur[k]);
    src->phn[p] = n;
    src->curp = p;
    return src->cur;
}

/* Packs phase p's changed statistics (src->cur) back. */
static void close_phase(struct source *src, size_t p)
{
    free(src->ph[p]);
    src->ph[p] = rm_pack_gpu_stats(src->cur, src->phn[p]);
}

struct boundary_ctx {
    struct source *src;
    size_t nph, slot;
};

static void add_boundary_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j,
                              const struct rm_energy_bar *bar)
{
    struct boundary_ctx *c = ctx;
    if (phase >= c->nph) return;
    rm_stats_add_span(&open_phase(c->src, c->nph, phase, c->slot)[c->slot], kind, ns, j, bar);
    close_phase(c->src, phase);
}

/* Adds f's GPUs (matched by key) and phases to the source. */
void rm_source_merge(struct source *src, struct file_agg *f, size_t nph,
                     const struct rm_phase_index *rl)
{
    src->files++;
    int64_t gap = f->gap_ns > src->gap_ns ? f->gap_ns : src->gap_ns;
    size_t *map = rm_xcalloc(f->gpus.n, sizeof *map);
    struct span_buf buf = {0};
    for (size_t i = 0; i < f->gpus.n; i++) {
        const struct gpu_slot *g = &f->gpus.s[i];
        size_t j = rm_gpu_table_find(&src->t, g->key, g->keylen);
        if (j == (size_t)-1) {
            j = rm_gpu_table_add(&src->t, g->key, g->keylen);
            struct gpu_slot *d = &src->t.s[j];
            struct rm_gpu_stats keep = d->st;
            *d = *g;
            d->st = keep;
        }
        /* The spacing from the previous file's last sample of this GPU to this file's first,
         * inside the phases' windows (the phases' own stats are folded without a bridge). */
        const struct rm_gpu_stats *a = &src->t.s[j].st;
        if (nph && a->last_ns != RM_NO_TIME && g->st.first_ns != RM_NO_TIME) {
            struct boundary_ctx c = {src, nph, j};
            rm_phase_spans(rl, &buf, a->last_ns, a->last_power, g->st.first_ns, g->st.first_power,
                           gap, add_boundary_span, &c);
        }
        rm_stats_merge(&src->t.s[j].st, &g->st, gap);
        map[i] = j;
    }
    free(buf.v);
    src->gap_ns = gap;
    rm_stat_merge(&src->total_power, &f->total_power);
    if (f->ph && nph) {
        for (size_t p = 0; p < nph && p < f->nph; p++) {
            const struct phase_acc *a = rm_file_phase_get(f, p);
            bool changed = false;
            for (size_t i = 0; a && a->used && i < a->ngpu; i++) {
                const struct rm_gpu_stats *st = &a->gpu[i];
                if (!st->samples && !st->covered_ns && !st->gaps) continue;
                rm_stats_fold(&open_phase(src, nph, p, map[i])[map[i]], st);
                changed = true;
            }
            if (changed) close_phase(src, p);
            rm_file_agg_drop_phase(f, p); /* merged: its memory goes to the next phase's */
        }
    }
    free(map);
}

static int session_index_of(json_t *session, const char *uuid, const char *pci)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(session, "gpus"), i, g)
    {
        const char *u = json_string_value(json_object_get(g, "uuid"));
        const char *p = json_string_value(json_object_get(g, "pci_bus_id"));
        json_t *ix = json_object_get(g, "index");
        if (json_is_integer(ix) &&
            ((u && uuid[0] && !strcmp(u, uuid)) || (p && pci[0] && !strcmp(p, pci))))
            return (int)json_integer_value(ix);
    }
    return -1;
}

size_t rm_pair_gpus(json_t *session, const struct source *q, const struct source *d,
                    struct final_gpu **out)
{
    size_t n = 0;
    struct final_gpu *f = rm_xcalloc(q->t.n + d->t.n + 1, sizeof *f);
    for (size_t i = 0; i < q->t.n; i++) {
        const struct gpu_slot *g = &q->t.s[i];
        int ix = g->index >= 0 ? g->index : session_index_of(session, g->uuid, g->pci);
        f[n++] = (struct final_gpu){ix, g, NULL, i, 0};
    }
    for (size_t i = 0; i < d->t.n; i++) {
        const struct gpu_slot *g = &d->t.s[i];
        size_t k = 0;
        while (k < n && !(g->index >= 0 && f[k].index == g->index && !f[k].d))
            k++;
        if (k == n) f[n++] = (struct final_gpu){g->index, NULL, NULL, 0, 0};
        f[k].d = g;
        f[k].di = i;
    }
    /* Stable order by index, unknown indexes last. */
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            unsigned x = (unsigned)f[b - 1].index, y = (unsigned)f[b].index;
            if (x <= y) break;
            struct final_gpu t = f[b];
            f[b] = f[b - 1];
            f[b - 1] = t;
        }
    *out = f;
    return n;
}

static const char *ident(const struct final_gpu *g, int which)
{
    const struct gpu_slot *s = g->q ? g->q : g->d;
    const char *v = which == 0 ? s->uuid : which == 1 ? s->name : s->pci;
    if (!v[0] && g->q && g->d) v = which == 0 ? g->d->uuid : which == 1 ? g->d->name : g->d->pci;
    return v;
}

/* Fills uuid/name from session.json when the data lacked them. */
static void ident_from_session(json_t *session, int index, const char **uuid, const char **name,
                               const char **pci)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(session, "gpus"), i, g)
    {
        json_t *ix = json_object_get(g, "index");
        if (!json_is_integer(ix) || json_integer_value(ix) != index) continue;
        if (!**uuid && json_is_string(json_object_get(g, "uuid")))
            *uuid = json_string_value(json_object_get(g, "uuid"));
        if (!**name && json_is_string(json_object_get(g, "name")))
            *name = json_string_value(json_object_get(g, "name"));
        if (!**pci && json_is_string(json_object_get(g, "pci_bus_id")))
            *pci = json_string_value(json_object_get(g, "pci_bus_id"));
    }
}

void rm_final_gpu_ident(json_t *session, const struct final_gpu *g, const char **uuid,
                        const char **name, const char **pci)
{
    *uuid = ident(g, 0);
    *name = ident(g, 1);
    *pci = ident(g, 2);
    ident_from_session(session, g->index, uuid, name, pci);
}
