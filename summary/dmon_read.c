#include "summary/dmon_read.h"

#include <string.h>

#include "base/rm_time.h"
#include "model/gpu_metrics.h"
#include "model/values.h"
#include "summary/fastvalue.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

void rm_dmon_map_init(struct rm_dmon_map *m)
{
    memset(m, 0, sizeof *m);
    m->gpu_col = m->ts_col = m->date_col = m->time_col = -1;
}

static bool is(const struct rm_strref *r, const char *s)
{
    size_t n = strlen(s);
    return r->len == n && !memcmp(r->s, s, n);
}

void rm_dmon_map_header(struct rm_dmon_map *m, const struct rm_strref *names, size_t n)
{
    rm_dmon_map_init(m);
    m->ncols = n > RM_DMON_MAX_FIELDS ? RM_DMON_MAX_FIELDS : n;
    m->mapped = true;
    for (size_t i = 0; i < m->ncols; i++) {
        const struct rm_strref *r = &names[i];
        int metric = -1;
        if (is(r, "gpu"))
            m->gpu_col = (int)i;
        else if (is(r, "ts"))
            m->ts_col = (int)i;
        else if (is(r, "Date"))
            m->date_col = (int)i;
        else if (is(r, "Time"))
            m->time_col = (int)i;
        else
            metric = rm_gpu_metric_by_dmon_column(r->s, r->len);
        m->metric[i] = (signed char)metric;
    }
}

/* dmon -o D prints 20261121, -o T 10:15:02: local time, whole seconds. */
static int date_time(struct rm_dmon_map *m, const struct rm_strref *d, const struct rm_strref *t,
                     int64_t *ns)
{
    char buf[20];
    if (rm_dmon_date_time_text(d->s, d->len, t->s, t->len, '-', buf) < 0) return -1;
    return rm_parse_time_field(buf, 19, true, &m->tz, ns);
}

/* Aligned to a cache line (so is rm_dmon_text_line), as rm_gpucsv_row: its speed then does
 * not move with what is linked before it (unrelated changes had moved dmon text's CPU by 5 %). */
__attribute__((aligned(64))) int rm_dmon_map_row(struct rm_dmon_map *m, const struct rm_strref *f,
                                                 size_t n, struct rm_gpu_sample *out)
{
    if (!m->mapped) return -(1 + RM_SKIP_NOT_DATA);
    if (n != m->ncols) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    /* Not the whole sample: v[m] is read only where bit m of valid is set. */
    out->valid = 0;
    /* One store each: a chained assignment became a 16-byte load of two 8-byte stores, a
     * store-forwarding stall per row (as in rm_gpucsv_row). */
    out->index = (struct rm_strref){NULL, 0};
    out->uuid = (struct rm_strref){NULL, 0};
    out->name = (struct rm_strref){NULL, 0};
    out->pci = (struct rm_strref){NULL, 0};
    out->t_ns = RM_NO_TIME;
    for (size_t i = 0; i < n; i++) {
        if (m->metric[i] < 0) continue;
        double v;
        int rc = rm_fast_value(f[i].s, f[i].len, &v) ? RM_VALUE_OK
                                                     : rm_value_parse(f[i].s, f[i].len, &v);
        if (rc == RM_VALUE_BAD) return -(1 + RM_SKIP_GARBAGE);
        if (rc == RM_VALUE_OK) {
            out->v[m->metric[i]] = v;
            out->valid |= 1u << m->metric[i];
        }
    }
    if (m->gpu_col >= 0) out->index = (struct rm_strref){f[m->gpu_col].s, f[m->gpu_col].len};
    if (m->ts_col >= 0) {
        if (rm_parse_time_field(f[m->ts_col].s, f[m->ts_col].len, false, &m->tz, &out->t_ns))
            return -(1 + RM_SKIP_BAD_TIME);
    } else if (m->date_col >= 0 && m->time_col >= 0) {
        if (date_time(m, &f[m->date_col], &f[m->time_col], &out->t_ns))
            return -(1 + RM_SKIP_BAD_TIME);
    }
    return 1;
}

/* Bit k set when line[base + k] is a blank (as rm_dmon_classify counts them) or past len. */
static inline uint64_t blank_mask(const char *s, size_t base, size_t len)
{
    uint64_t m = 0;
#ifdef __SSE2__
    char pad[64];
    if (base + 64 > len) { /* the line's tail, blank-padded to a whole block */
        memset(pad, ' ', sizeof pad);
        memcpy(pad, s + base, len - base);
        s = pad;
        base = 0;
    }
    const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), cr = _mm_set1_epi8('\r'),
                  nl = _mm_set1_epi8('\n');
    for (size_t i = 0; i < 64; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + base + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, tab)),
                                   _mm_or_si128(_mm_cmpeq_epi8(x, cr), _mm_cmpeq_epi8(x, nl)));
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(hit) << i;
    }
#else
    for (size_t i = 0; i < 64; i++) {
        char c = base + i < len ? s[base + i] : ' ';
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') m |= 1ull << i;
    }
#endif
    return m;
}

/* The common line, data: its blank-separated tokens straight into toks, found 64 bytes at a
 * time from the blank mask. Returns the token count when rm_dmon_classify would call the line
 * data (first token all digits, at least two, not too many), else 0: the caller classifies. */
static size_t data_tokens(const char *line, size_t len, struct rm_strref *toks)
{
    uint32_t st[RM_DMON_MAX_FIELDS + 64], en[RM_DMON_MAX_FIELDS + 64];
    size_t ns = 0, ne = 0;
    uint64_t in = 0; /* whether the byte before the block is in a token */
    for (size_t base = 0; base < len; base += 64) {
        uint64_t nb = ~blank_mask(line, base, len);
        uint64_t before = (nb << 1) | in; /* bit k: byte k - 1 is in a token */
        uint64_t starts = nb & ~before, ends = ~nb & before;
        if (ns > RM_DMON_MAX_FIELDS) return 0; /* too many: classify says so */
        while (starts) {
            st[ns++] = (uint32_t)(base + (size_t)__builtin_ctzll(starts));
            starts &= starts - 1;
        }
        while (ends) {
            en[ne++] = (uint32_t)(base + (size_t)__builtin_ctzll(ends));
            ends &= ends - 1;
        }
        in = nb >> 63;
    }
    if (in) en[ne++] = (uint32_t)len;
    if (ns < 2 || ns > RM_DMON_MAX_FIELDS) return 0;
    for (size_t k = 0; k < ns; k++)
        toks[k] = (struct rm_strref){line + st[k], en[k] - st[k]};
    for (size_t k = 0; k < toks[0].len; k++)
        if ((unsigned)(toks[0].s[k] - '0') >= 10) return 0;
    return ns;
}

__attribute__((aligned(64))) int rm_dmon_text_line(struct rm_dmon_map *m, const char *line,
                                                   size_t len, bool torn, struct rm_gpu_sample *out)
{
    struct rm_strref fast[RM_DMON_MAX_FIELDS];
    size_t nfast = data_tokens(line, len, fast);
    if (nfast) {
        if (torn) return -(1 + RM_SKIP_TORN);
        return rm_dmon_map_row(m, fast, nfast, out);
    }
    struct rm_dmon_line *l = &m->line;
    int kind = rm_dmon_classify(line, len, l);
    struct rm_strref toks[RM_DMON_MAX_FIELDS];
    for (size_t i = 0; i < l->n; i++)
        toks[i] = (struct rm_strref){l->tok[i].s, l->tok[i].len};
    switch (kind) {
    case RM_DMON_HEADER:
        rm_dmon_map_header(m, toks, l->n);
        return 0;
    case RM_DMON_UNITS:
        return 0;
    case RM_DMON_DATA:
        if (torn) return -(1 + RM_SKIP_TORN);
        return rm_dmon_map_row(m, toks, l->n, out);
    default: {
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        return i == len ? 0 : -(1 + RM_SKIP_NOT_DATA);
    }
    }
}

int rm_dmon_csv_row(struct rm_dmon_map *m, const struct rm_csv_row *row, struct rm_gpu_sample *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    size_t n = row->n > RM_DMON_MAX_FIELDS ? RM_DMON_MAX_FIELDS : row->n;
    struct rm_strref f[RM_DMON_MAX_FIELDS];
    bool header = false;
    for (size_t i = 0; i < n; i++) {
        f[i] = (struct rm_strref){row->f[i], row->len[i]};
        header |= is(&f[i], "gpu");
    }
    if (header) {
        rm_dmon_map_header(m, f, n);
        return 0;
    }
    if (row->n > RM_DMON_MAX_FIELDS) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    return rm_dmon_map_row(m, f, n, out);
}

bool rm_dmon_map_same(const struct rm_dmon_map *x, const struct rm_dmon_map *y)
{
    return x->mapped == y->mapped && x->ncols == y->ncols &&
           !memcmp(x->metric, y->metric, sizeof x->metric) && x->gpu_col == y->gpu_col &&
           x->ts_col == y->ts_col && x->date_col == y->date_col && x->time_col == y->time_col;
}
