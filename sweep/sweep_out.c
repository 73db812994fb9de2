#include "sweep/sweep_out.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/termsafe.h"
#include "model/figures.h"
#include "sink/index.h"
#include "sweep/sessions_rows.h"

#define MAX_COLS 64
#define MAX_FIGS 32  /* figures: 6 and the phase columns */
#define FIXED_COLS 8 /* SESSION, HOST, RERUN, STATUS, EXIT, GPU, COMMAND; groups: 3 */
#define CELL 2048
#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* ---- the figures: what is compared between runs ---- */

enum unit {
    U_SECONDS = RM_SWEEP_SECONDS,
    U_PCT = RM_SWEEP_PCT,
    U_MIB = RM_SWEEP_MIB,
    U_WH = RM_SWEEP_WH
};

/* A figure of a row: key (a row key, or a phase's path under phase_seconds), its title, its
 * unit, and which end is the best (-1 least, +1 most). */
struct figure {
    char key[512]; /* the JSON name: the row key, or "phase:PATH" */
    const char *row_key;
    const char *phase; /* a phase's path, or NULL */
    char title[96];
    enum unit unit;
    int best;
    /* Its error bar's row keys (energy), or NULL: runs whose bars overlap are not told apart. */
    const char *low_key, *high_key;
    int drop; /* its row's table.drop (model/figures.h) */
};

/* How a row's value of a figure is marked: the best, or tied for the best (not told apart
 * from it: tied_with_best). */
enum mark { M_NONE, M_BEST, M_TIED };

struct table {
    FILE *f;
    const struct rm_sweep_opts *o;
    const struct rm_sweep *s;
    struct figure fig[MAX_COLS];
    size_t n_fig;
    json_t *phases;         /* the phase columns' paths */
    const char *vram;       /* "workload" or "device": the headline VRAM column */
    size_t params_left_out; /* parameters the text table had no room for */
    int bars_left_out;      /* the text table showed the energy without its bar, for room */
    char dropped[512];      /* the titles of the columns the text table left out, for room */
    json_t *gkeys;          /* --group-by: the parameters grouped by (one or several) */
    json_t *judged;         /* sweep/sweep_judge.h's {"objectives", "cost", "target"}, or NULL */
};

static double fig_value(const struct figure *g, const json_t *row)
{
    const json_t *v = g->phase ? json_object_get(json_object_get(row, "phase_seconds"), g->phase)
                               : json_object_get(row, g->row_key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void add_fig(struct table *t, const char *row_key, const char *phase, const char *title,
                    enum unit u, int best)
{
    if (t->n_fig >= MAX_FIGS) return;
    struct figure *g = &t->fig[t->n_fig++];
    g->row_key = row_key;
    g->phase = phase;
    if (phase)
        snprintf(g->key, sizeof g->key, "phase:%s", phase);
    else
        snprintf(g->key, sizeof g->key, "%s", row_key ? row_key : "");
    snprintf(g->title, sizeof g->title, "%s", title);
    g->unit = u;
    g->best = best;
}

static int any_value(const struct rm_sweep *s, const char *k)
{
    size_t i;
    const json_t *e;
    json_array_foreach(s->rows, i, e) if (json_is_number(json_object_get(e, k))) return 1;
    return 0;
}

/* Whether some run's workload VRAM is assumed or unattributed (summary.json's
 * workload_vram_basis): then the column shows it ("-", "assumed"), never a 0. */
static int any_basis(const struct rm_sweep *s)
{
    size_t i;
    const json_t *e;
    json_array_foreach(s->rows, i, e) if (json_is_string(json_object_get(
                                              e, RM_RUN_KEY(WORKLOAD_VRAM_BASIS)))) return 1;
    return 0;
}

/* " assumed" after a run's WORKLOAD VRAM counted on assumption, else "". */
static const char *basis_suffix(const struct figure *g, const json_t *row)
{
    const char *b = json_string_value(json_object_get(row, RM_RUN_KEY(WORKLOAD_VRAM_BASIS)));
    return g->row_key && !strcmp(g->row_key, RM_SWEEP_KEY(WORKLOAD_VRAM)) && b &&
                   !strcmp(b, "assumed")
               ? " assumed"
               : "";
}

/* The phases every run has, in the first run's order, top-level ones only (--phase picks
 * others). */
static json_t *common_phases(const struct rm_sweep *s)
{
    json_t *out = json_array();
    const json_t *first = json_array_get(s->rows, 0);
    const char *path;
    json_t *v;
    json_object_foreach(json_object_get(first, "phase_seconds"), path, v)
    {
        if (strchr(path, '/')) continue;
        int all = 1;
        size_t i;
        const json_t *e;
        json_array_foreach(
            s->rows, i, e) if (!json_object_get(json_object_get(e, "phase_seconds"), path)) all = 0;
        if (all) json_array_append_new(out, json_string(path));
    }
    return out;
}

/* json_array_extend that takes its reference. */
static void json_array_extend_new(json_t *a, json_t *more)
{
    json_array_extend(a, more);
    json_decref(more);
}

static void choose_figures(struct table *t)
{
    const struct rm_sweep_opts *o = t->o;
    int workload = any_value(t->s, RM_SWEEP_KEY(WORKLOAD_VRAM)) || any_basis(t->s);
    t->vram = workload ? "workload" : "device";
    /* The columns of model/figures.h's rm_sweep_figures, in their order, each when it shows. */
    int f;
    for (int at = 1; (f = rm_sweep_fig_at(at)) >= 0; at++) {
        const struct rm_sweep_figure *r = &rm_sweep_figures[f];
        /* runs whose workload VRAM is all unattributed still get the column: "-", never none */
        bool basis_only = f == RM_SWEEP_WORKLOAD_VRAM && workload;
        if (r->table.show == RM_SWEEP_IF_ANY && !any_value(t->s, r->key) && !basis_only) continue;
        if (r->table.show == RM_SWEEP_IF_NO_WORKLOAD && workload && !o->device_vram) continue;
        add_fig(t, r->key, NULL, r->table.head, (enum unit)r->table.unit, r->table.best);
        t->fig[t->n_fig - 1].drop = r->table.drop;
        if (r->low < 0) continue;
        t->fig[t->n_fig - 1].low_key = rm_figures[r->low].key;
        t->fig[t->n_fig - 1].high_key = rm_figures[r->high].key;
    }
    json_t *want = json_array();
    if (o->n_phases)
        for (size_t k = 0; k < o->n_phases; k++)
            json_array_append_new(want, rm_jstr(o->phases[k]));
    else
        json_array_extend_new(want, common_phases(t->s));
    /* The phase columns that fit beside the other figures (MAX_FIGS in all). */
    t->phases = json_array();
    size_t k;
    json_t *p;
    json_array_foreach(want, k, p)
    {
        if (t->n_fig >= MAX_FIGS) break;
        char title[96];
        snprintf(title, sizeof title, "%s s", json_string_value(p));
        json_array_append(t->phases, p);
        add_fig(t, NULL, json_string_value(p), title, U_SECONDS, -1);
    }
    json_decref(want);
}

/* A figure as people read it. */
static const char *fig_text(char *b, size_t cap, enum unit u, double x)
{
    if (isnan(x)) return "-";
    switch (u) {
    case U_SECONDS: {
        long r = lround(x);
        if (x < 59.95)
            snprintf(b, cap, "%.1fs", x);
        else if (r < 3600)
            snprintf(b, cap, "%ldm%02lds", r / 60, r % 60);
        else
            snprintf(b, cap, "%ldh%02ldm%02lds", r / 3600, r / 60 % 60, r % 60);
        break;
    }
    case U_PCT:
        snprintf(b, cap, "%.1f", x);
        break;
    case U_MIB:
        if (x < 1024)
            snprintf(b, cap, "%.0f MiB", x);
        else
            snprintf(b, cap, "%.1f GiB", x / 1024);
        break;
    case U_WH:
        if (x < 1000)
            snprintf(b, cap, "%.3f Wh", x);
        else
            snprintf(b, cap, "%.2f kWh", x / 1000);
        break;
    }
    return b;
}

/* Row's error bar of figure g: [lo, hi] around its value, or the value itself when the
 * figure has no bar or the row lacks it; a bar whose top is unknown (summary.json's high null
 * beside a low: time no sample covered, on a GPU whose power limit was not recorded,
 * docs/ENERGY.md) reaches up without end. 0 when the row has no value. */
static int fig_bar(const struct figure *g, const json_t *row, double *lo, double *hi)
{
    double x = fig_value(g, row);
    if (isnan(x)) return 0;
    *lo = *hi = x;
    if (!g->low_key) return 1;
    const json_t *l = json_object_get(row, g->low_key), *h = json_object_get(row, g->high_key);
    if (json_is_number(l)) {
        *lo = fmin(x, json_number_value(l));
        *hi = json_is_number(h) ? fmax(x, json_number_value(h)) : INFINITY;
    }
    return 1;
}

/* The best value of figure g over the rows, or NAN when fewer than two runs have it or all
 * have the same. */
static double best_of(const struct figure *g, const json_t *rows)
{
    double best = NAN, lo = INFINITY, hi = -INFINITY;
    size_t i, n = 0;
    const json_t *e;
    json_array_foreach(rows, i, e)
    {
        double x = fig_value(g, e);
        if (isnan(x)) continue;
        n++;
        lo = fmin(lo, x), hi = fmax(hi, x);
    }
    if (n >= 2 && lo < hi) best = g->best < 0 ? lo : hi;
    return best;
}

/* A run's sampling interval (s), the noise of its times; 0 when unknown. */
static double row_interval(const json_t *row)
{
    const json_t *v = json_object_get(row, "interval_s");
    return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : 0;
}

/* What the best run(s) of a figure show: their value as printed, their bar's ends, the
 * largest of their sampling intervals. */
struct best_ref {
    char text[64];
    double x, lo, hi, interval;
};

/* Whether row's figure g cannot be told apart from the best's: it prints the same at the
 * shown precision, or its error bar overlaps the best's, or (a time) it lies within one
 * sampling interval of it (the larger of the two runs'), the times' own noise. */
static int tied_with_best(const struct figure *g, const json_t *row, const struct best_ref *b)
{
    double x = fig_value(g, row), lo, hi;
    char text[64];
    if (isnan(x)) return 0;
    if (!strcmp(fig_text(text, sizeof text, g->unit, x), b->text)) return 1;
    if (g->low_key && fig_bar(g, row, &lo, &hi) && lo <= b->hi && hi >= b->lo) return 1;
    double iv = fmax(row_interval(row), b->interval);
    return g->unit == U_SECONDS && iv > 0 && fabs(x - b->x) <= iv;
}

/* Each row's mark for figure g (marks[i] for row i): the best value (best_of) is M_BEST; when
 * another run cannot be told apart from it (tied_with_best), every such run is M_TIED
 * instead and none is M_BEST (docs/FORMATS.md, "The sweep table"). */
static void marks_of(const struct figure *g, const json_t *rows, enum mark *marks)
{
    size_t i, n_tied = 0;
    const json_t *e;
    double best = best_of(g, rows), lo, hi;
    struct best_ref b = {.x = best, .lo = INFINITY, .hi = -INFINITY};
    json_array_foreach(rows, i, e)
    {
        marks[i] = M_NONE;
        if (!isnan(best) && fig_value(g, e) == best) {
            marks[i] = M_BEST;
            fig_bar(g, e, &lo, &hi);
            b.lo = fmin(b.lo, lo), b.hi = fmax(b.hi, hi);
            b.interval = fmax(b.interval, row_interval(e));
        }
    }
    if (isnan(best)) return;
    fig_text(b.text, sizeof b.text, g->unit, best);
    json_array_foreach(rows, i, e) n_tied += marks[i] == M_BEST || tied_with_best(g, e, &b);
    if (n_tied < 2) return;
    json_array_foreach(rows, i, e) marks[i] =
        marks[i] == M_BEST || tied_with_best(g, e, &b) ? M_TIED : M_NONE;
}

/* A figure with its error bar, compactly: "0.310±0.020 Wh", the half-width the larger of its
 * two sides (the exact ends are in JSON and CSV). */
static const char *fig_bar_text(char *b, size_t cap, const struct figure *g, const json_t *row)
{
    double x = fig_value(g, row), lo, hi;
    if (!g->low_key || !fig_bar(g, row, &lo, &hi) ||
        !json_is_number(json_object_get(row, g->low_key)))
        return fig_text(b, cap, g->unit, x);
    double half = fmax(x - lo, hi - x);
    if (isinf(hi)) /* its top unknown: no half-width to give */
        snprintf(b, cap, x < 1000 ? "%.3f\xc2\xb1? Wh" : "%.2f\xc2\xb1? kWh",
                 x < 1000 ? x : x / 1000);
    else if (x < 1000)
        snprintf(b, cap, "%.3f\xc2\xb1%.3f Wh", x, half);
    else
        snprintf(b, cap, "%.2f\xc2\xb1%.2f kWh", x / 1000, half / 1000);
    return b;
}

/* A parameter's value as text: a string as it is, another value as its JSON text. */
static const char *param_text(char *b, size_t cap, const json_t *v)
{
    if (!v) return "-";
    if (json_is_string(v)) return json_string_value(v);
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    snprintf(b, cap, "%s", t ? t : "?");
    free(t);
    return b;
}

/* ---- text ---- */

struct tcol {
    char title[256];
    int right; /* a figure, right-aligned */
    int width, min;
    int stage;    /* when it is cut to fit: 1 with the values, 2 last (the session id) */
    int left_cut; /* cut at its start, its end kept (a session id's host and pid) */
    int drop;     /* > 0: left out when the line does not fit otherwise, the highest
                     first (DROP_EARLY ones before the session id is cut) */
    int dropped;
    char **cells;       /* one escaped cell per row */
    char **short_cells; /* or NULL: shorter cells (the figure without its bar) used when the
                           line does not fit otherwise */
};

/* The characters of escaped text s (a code point or an escape character each). */
static int chars(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static char *escaped(const char *s)
{
    char b[CELL];
    rm_term_escape(b, sizeof b, s);
    return strdup(b);
}

static void put_cell(FILE *f, const char *s, int width, int right, int left_cut)
{
    char b[CELL * 2];
    int n = chars(s);
    if (n > width && left_cut) {
        const char *p = s + strlen(s);
        for (int k = 0; k < width - 1 && p > s;) /* back over width - 1 characters */
            if ((((unsigned char)*--p) & 0xc0) != 0x80) k++;
        fputs(ELLIPSIS, f);
        fputs(p, f);
        return;
    }
    if (n > width) {
        rm_term_cell(b, sizeof b - 4, s, 0, width > 1 ? width - 1 : 0);
        strcat(b, ELLIPSIS);
        fputs(b, f);
        return;
    }
    if (right) fprintf(f, "%*s", width - n, "");
    fputs(s, f);
    if (!right) fprintf(f, "%*s", width - n, "");
}

static void command_text(char *out, size_t cap, const json_t *cmd)
{
    size_t used = 0, k;
    const json_t *a;
    out[0] = '\0';
    json_array_foreach(cmd, k, a)
    {
        if (k && used + 1 < cap) out[used++] = ' ', out[used] = '\0';
        if (used + 1 >= cap) break;
        size_t n = rm_term_escape(out + used, cap - used, json_string_value(a));
        used = n >= cap - used ? cap - 1 : used + n;
    }
    if (!out[0]) snprintf(out, cap, "-");
}

static const char *col_sep(size_t n, size_t k, int *first)
{
    if (*first) return *first = 0, "";
    return k == n - 1 ? "  " : " "; /* the command, after two spaces */
}

static int line_width(const struct tcol *c, size_t n)
{
    int total = 0, first = 1;
    for (size_t k = 0; k < n; k++)
        if (!c[k].dropped) total += c[k].width + (int)strlen(col_sep(n, k, &first));
    return total;
}

/* Shrinks the columns of one stage until the line fits in cols characters: the last one (the
 * command) first, then the widest of them; a figure is never cut (its min is its width). */
static void shrink(struct tcol *c, size_t n, int cols, int stage)
{
    int over = line_width(c, n) - cols;
    if (over > 0 && n && stage == 1 && !c[n - 1].dropped) {
        struct tcol *last = &c[n - 1];
        int room = last->width - last->min;
        last->width -= over < room ? over : room;
    }
    for (;;) {
        int total = line_width(c, n);
        if (total <= cols) return;
        size_t widest = n;
        for (size_t k = 0; k < n; k++)
            if (!c[k].dropped && c[k].stage == stage && c[k].width > c[k].min &&
                (widest == n || c[k].width > c[widest].width))
                widest = k;
        if (widest == n) break;
        int ex = total - cols, room = c[widest].width - c[widest].min;
        c[widest].width -= ex < room ? ex : (room > 4 ? room / 2 : room);
    }
}

/* Leaves out columns, the highest drop rank first (the rightmost of a rank first), while the
 * line is too wide; only ranks of at least `from`. */
static void drop_cols(struct tcol *c, size_t n, int cols, int from)
{
    while (line_width(c, n) > cols) {
        size_t pick = n;
        for (size_t k = 0; k < n; k++)
            if (!c[k].dropped && c[k].drop >= from && (pick == n || c[k].drop >= c[pick].drop))
                pick = k;
        if (pick == n) return;
        c[pick].dropped = 1;
    }
}

#define DROP_EARLY 10 /* ranks left out before the session id is cut */

/* Fits the line in cols characters, in this order: the command and the text columns cut to
 * their minimum; the command and the GPU model left out; (text_table: the figures' bars left
 * out); the session id cut at its start (its end is still a unique --session suffix); then
 * the phase columns (the last first), EXIT, STATUS and UTIL %; last, a group's figures. */
static void fit(struct tcol *c, size_t n, int cols)
{
    shrink(c, n, cols, 1);
    drop_cols(c, n, cols, DROP_EARLY);
    shrink(c, n, cols, 2);
    drop_cols(c, n, cols, 1);
    shrink(c, n, cols, 3);
}

static void measure(struct tcol *c, size_t n, size_t rows, const int *min)
{
    for (size_t k = 0; k < n; k++) {
        c[k].width = chars(c[k].title);
        for (size_t i = 0; i < rows; i++)
            if (chars(c[k].cells[i]) > c[k].width) c[k].width = chars(c[k].cells[i]);
        c[k].min = min[k] < 0 || min[k] > c[k].width ? c[k].width : min[k];
        c[k].dropped = 0;
    }
}

/* One line of the table to f, cut at cols characters when even the fitted columns are wider
 * (a terminal narrower than the session id and the figures). */
static void put_line(FILE *f, char *line, int cols)
{
    int n = 0;
    char *p = line;
    for (; *p && *p != '\n'; p++)
        if ((((unsigned char)*p) & 0xc0) != 0x80 && ++n > cols) break;
    if (*p && *p != '\n' && cols > 0) {
        /* back to the start of the character that was column cols - 1 + 1 */
        char *q = line;
        int k = 0;
        while (*q && k < cols - 1)
            if ((((unsigned char)*++q) & 0xc0) != 0x80) k++;
        fwrite(line, 1, (size_t)(q - line), f);
        fputs(ELLIPSIS "\n", f);
        return;
    }
    fputs(line, f);
}

static void text_line(struct table *t, const struct tcol *c, size_t n, long row, int cols)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) abort();
    int first = 1;
    for (size_t k = 0; k < n; k++) {
        if (c[k].dropped) continue;
        fputs(col_sep(n, k, &first), m);
        const char *v = row < 0 ? c[k].title : c[k].cells[row];
        /* The last column (the command) is not padded; it is cut to its width. */
        if (k == n - 1 && chars(v) <= c[k].width)
            fputs(v, m);
        else if (row < 0)
            put_cell(m, v, c[k].width, c[k].right, 0);
        else
            put_cell(m, v, c[k].width, c[k].right, c[k].left_cut);
    }
    fputc('\n', m);
    fclose(m);
    put_line(t->f, buf, t->o->wide ? 0 : cols);
    free(buf);
}

/* The titles of the columns left out, for the note under the table. */
static void note_dropped(struct table *t, const struct tcol *c, size_t n)
{
    size_t used = 0;
    t->dropped[0] = '\0';
    for (size_t k = 0; k < n; k++)
        if (c[k].dropped && used < sizeof t->dropped)
            used += (size_t)snprintf(t->dropped + used, sizeof t->dropped - used, "%s%s",
                                     used ? ", " : "", c[k].title);
}

static void text_table(struct table *t, struct tcol *c, size_t n, size_t rows)
{
    int min[MAX_COLS] = {0}, cols = t->o->columns > 0 ? t->o->columns : 100;
    for (size_t k = 0; k < n; k++)
        min[k] = c[k].min;
    measure(c, n, rows, min);
    if (!t->o->wide) shrink(c, n, cols, 1);
    if (!t->o->wide) drop_cols(c, n, cols, DROP_EARLY);
    /* Still too wide: the figures' bars go (their ties stay marked), then fit again. */
    int shorter = 0;
    for (size_t k = 0; k < n; k++)
        shorter |= c[k].short_cells != NULL;
    if (!t->o->wide && shorter && line_width(c, n) > cols) {
        for (size_t k = 0; k < n; k++)
            if (c[k].short_cells) {
                char **swap = c[k].cells;
                c[k].cells = c[k].short_cells;
                c[k].short_cells = swap;
            }
        t->bars_left_out = 1;
        measure(c, n, rows, min);
    }
    if (!t->o->wide) fit(c, n, cols);
    note_dropped(t, c, n);
    text_line(t, c, n, -1, cols);
    for (size_t i = 0; i < rows; i++)
        text_line(t, c, n, (long)i, cols);
}

/* The next column: the callers stay within MAX_COLS (FIXED_COLS, the figures, the
 * parameters that fit). */
static struct tcol *new_col(struct tcol *c, size_t *n, const char *title, int right, int min,
                            size_t rows)
{
    struct tcol *x = &c[(*n)++];
    rm_term_escape(x->title, sizeof x->title, title);
    x->right = right;
    x->min = min;
    x->stage = min >= 0;
    x->cells = calloc(rows ? rows : 1, sizeof *x->cells);
    return x;
}

static void free_cols(struct tcol *c, size_t n, size_t rows)
{
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < rows && c[k].cells; i++)
            free(c[k].cells[i]);
        for (size_t i = 0; i < rows && c[k].short_cells; i++)
            free(c[k].short_cells[i]);
        free(c[k].cells);
        free(c[k].short_cells);
    }
}

static int upper_title(char *out, size_t cap, const char *name)
{
    size_t i;
    for (i = 0; name[i] && i + 1 < cap; i++)
        out[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    out[i] = '\0';
    return 0;
}

static int any_gpu_name(const json_t *rows)
{
    size_t i;
    const json_t *e;
    json_array_foreach(rows, i, e) if (*rm_jget_str(e, "gpu_name")) return 1;
    return 0;
}

/* A judged value: 4 significant digits, "-" when the run has none. */
static const char *judged_num(char *b, size_t cap, const json_t *v)
{
    if (!json_is_number(v)) return "-";
    snprintf(b, cap, "%.4g", json_number_value(v));
    return b;
}

/* The objectives' columns (each value, ^ the best, * on the Pareto front against the cost, ~
 * on it within its error bar), the cost when no figure column shows it (GPU-hours), and the
 * target's (the time and energy to reach it): sweep/sweep_judge.h's row keys. */
static void judged_cols(struct table *t, struct tcol *c, size_t *n, size_t nr)
{
    if (!t->judged) return;
    const json_t *rows = t->s->rows, *e, *o;
    char b[CELL], v[64], w[64], title[256];
    size_t i, k;
    json_array_foreach(json_object_get(t->judged, "objectives"), k, o)
    {
        if (*n >= MAX_COLS - 2) break;
        upper_title(title, sizeof title, json_string_value(o));
        struct tcol *x = new_col(c, n, title, 1, -1, nr);
        json_array_foreach(rows, i, e)
        {
            const json_t *j = json_array_get(json_object_get(e, "objectives"), k);
            const char *front = rm_jget_str(j, "front");
            snprintf(b, sizeof b, "%s%s%s", judged_num(v, sizeof v, json_object_get(j, "value")),
                     json_is_true(json_object_get(j, "best")) ? "^" : "",
                     !strcmp(front, "on")           ? "*"
                     : !strcmp(front, "within_bar") ? "~"
                                                    : "");
            x->cells[i] = strdup(b);
        }
    }
    if (!strcmp(rm_jget_str(t->judged, "cost"), "gpu_hours") && *n < MAX_COLS - 2) {
        struct tcol *x = new_col(c, n, "GPU-H", 1, -1, nr);
        json_array_foreach(rows, i, e)
        {
            x->cells[i] = strdup(
                judged_num(v, sizeof v, json_object_get(json_object_get(e, "cost"), "value")));
        }
    }
    const json_t *target = json_object_get(t->judged, "target");
    if (!json_is_string(target) || *n >= MAX_COLS - 2) return;
    snprintf(b, sizeof b, "TO %s", json_string_value(target));
    upper_title(title, sizeof title, b);
    struct tcol *x = new_col(c, n, title, 1, -1, nr);
    json_array_foreach(rows, i, e)
    {
        const json_t *tg = json_object_get(e, "target");
        if (!json_is_true(json_object_get(tg, "reached")))
            snprintf(b, sizeof b, "not reached");
        else
            snprintf(b, sizeof b, "%s s %s Wh",
                     judged_num(v, sizeof v, json_object_get(tg, "seconds")),
                     judged_num(w, sizeof w, json_object_get(tg, RM_SWEEP_KEY(ENERGY))));
        x->cells[i] = strdup(b);
    }
}

static void text_runs(struct table *t)
{
    const json_t *rows = t->s->rows;
    size_t n = 0, nr = json_array_size(rows), i, k;
    struct tcol c[MAX_COLS];
    memset(c, 0, sizeof c);
    char b[CELL], title[256];
    const json_t *e, *p;
    int any_rerun = 0;
    json_array_foreach(rows, i, e) any_rerun |= json_integer_value(json_object_get(e, "rerun")) > 0;
    /* The session's id is cut last, at its start: its end (host, pid) tells the rows apart. */
    struct tcol *x = new_col(c, &n, "SESSION", 0, 8, nr);
    x->stage = 2;
    x->left_cut = 1;
    json_array_foreach(rows, i, e) x->cells[i] = escaped(rm_jget_str(e, "session_id"));
    if (t->s->n_hosts > 1) {
        x = new_col(c, &n, "HOST", 0, 6, nr);
        json_array_foreach(rows, i, e) x->cells[i] = escaped(rm_jget_str(e, "host"));
    }
    /* The parameters take the columns the fixed ones and the figures leave (JSON and CSV have
     * them all; a note says how many the text leaves out). */
    size_t room = MAX_COLS - FIXED_COLS - t->n_fig;
    json_array_foreach(t->s->param_names, k, p)
    {
        if (k >= room) {
            t->params_left_out = json_array_size(t->s->param_names) - k;
            break;
        }
        upper_title(title, sizeof title, json_string_value(p));
        int numeric = 1;
        json_array_foreach(rows, i, e)
        {
            const json_t *v = json_object_get(json_object_get(e, "params"), json_string_value(p));
            if (v && !json_is_number(v)) numeric = 0;
        }
        x = new_col(c, &n, title, numeric, 6, nr);
        json_array_foreach(rows, i, e)
        {
            const json_t *v = json_object_get(json_object_get(e, "params"), json_string_value(p));
            x->cells[i] = escaped(param_text(b, sizeof b, v));
        }
    }
    if (any_rerun) {
        x = new_col(c, &n, "RERUN", 1, 5, nr);
        x->drop = 3;
        json_array_foreach(rows, i, e)
        {
            json_int_t r = json_integer_value(json_object_get(e, "rerun"));
            if (r)
                snprintf(b, sizeof b, "#%lld", (long long)r);
            else
                b[0] = '\0';
            x->cells[i] = strdup(b);
        }
    }
    x = new_col(c, &n, "STATUS", 0, -1, nr);
    x->drop = 2;
    json_array_foreach(rows, i, e)
    {
        snprintf(b, sizeof b, "%s%s", rm_jget_str(e, "status"),
                 json_object_get(e, "unwritten") ? "!" : "");
        x->cells[i] = escaped(b);
    }
    x = new_col(c, &n, "EXIT", 1, -1, nr);
    x->drop = 3;
    json_array_foreach(rows, i, e)
    {
        const json_t *v = json_object_get(e, "exit_code");
        snprintf(b, sizeof b, json_is_integer(v) ? "%lld" : "-", (long long)json_integer_value(v));
        x->cells[i] = strdup(b);
    }
    for (size_t g = 0; g < t->n_fig; g++) {
        if (g == 1 && any_gpu_name(rows)) { /* the GPU model before its figures */
            x = new_col(c, &n, "GPU", 0, 10, nr);
            x->drop = DROP_EARLY + 1;
            json_array_foreach(rows, i, e)
            {
                /* "NVIDIA H200" as "H200": the vendor's name says nothing in this column. */
                const char *name = rm_jget_str(e, "gpu_name");
                if (!strncmp(name, "NVIDIA ", 7) && name[7]) name += 7;
                json_int_t cnt = json_integer_value(json_object_get(e, "gpu_count"));
                if (!*name)
                    snprintf(b, sizeof b, "-");
                else if (cnt > 1 && !strchr(name, ','))
                    snprintf(b, sizeof b, "%lldx %s", (long long)cnt, name);
                else
                    snprintf(b, sizeof b, "%s", name);
                x->cells[i] = escaped(b);
            }
        }
        const struct figure *f = &t->fig[g];
        x = new_col(c, &n, f->title, 1, f->phase ? 8 : -1, nr);
        x->drop = f->phase ? 4 : f->drop;
        enum mark *m = calloc(nr ? nr : 1, sizeof *m);
        if (!m) abort();
        marks_of(f, rows, m);
        if (f->low_key) x->short_cells = calloc(nr ? nr : 1, sizeof *x->short_cells);
        json_array_foreach(rows, i, e)
        {
            char v[64];
            const char *mark = m[i] == M_BEST ? "*" : m[i] == M_TIED ? "=" : "";
            snprintf(b, sizeof b, "%s%s%s", fig_bar_text(v, sizeof v, f, e), basis_suffix(f, e),
                     mark);
            x->cells[i] = strdup(b);
            if (!x->short_cells) continue;
            snprintf(b, sizeof b, "%s%s", fig_text(v, sizeof v, f->unit, fig_value(f, e)), mark);
            x->short_cells[i] = strdup(b);
        }
        free(m);
    }
    judged_cols(t, c, &n, nr);
    x = new_col(c, &n, "COMMAND", 0, 10, nr);
    x->drop = DROP_EARLY + 2;
    json_array_foreach(rows, i, e)
    {
        command_text(b, sizeof b, json_object_get(e, "command"));
        x->cells[i] = strdup(b);
    }
    text_table(t, c, n, nr);
    free_cols(c, n, nr);
}

/* ---- groups (--group-by) ---- */

struct agg {
    double n, sum, sumsq, lo, hi;
    double bar_lo, bar_hi; /* sums of the runs' error bar ends (a figure with a bar) */
};

/* A figure with a bar also gets "mean_low", "mean_high": the mean of the runs' lows and of
 * their highs, the bounds of the mean when each run's true value lies in its bar. */
static json_t *agg_json(const struct agg *a, int bar)
{
    json_t *j;
    if (!a->n) {
        j = json_pack("{s:n,s:n,s:n,s:n,s:i}", "mean", "min", "max", "std", "n", 0);
        if (bar) json_object_set_new(j, "mean_low", json_null());
        if (bar) json_object_set_new(j, "mean_high", json_null());
        return j;
    }
    double mean = a->sum / a->n;
    double var = a->n > 1 ? (a->sumsq - a->n * mean * mean) / (a->n - 1) : 0;
    j = json_pack("{s:f,s:f,s:f,s:f,s:i}", "mean", mean, "min", a->lo, "max", a->hi, "std",
                  var > 0 ? sqrt(var) : 0.0, "n", (int)a->n);
    if (bar) json_object_set_new(j, "mean_low", json_real(a->bar_lo / a->n));
    /* A run whose bar has no known top leaves the mean's without one too. */
    if (bar)
        json_object_set_new(j, "mean_high",
                            isfinite(a->bar_hi) ? json_real(a->bar_hi / a->n) : json_null());
    return j;
}

/* A row's values of the --group-by parameters, in their order (null where it has none). */
static json_t *group_values(const struct table *t, const json_t *row)
{
    json_t *vals = json_array();
    size_t k;
    const json_t *name;
    json_array_foreach(t->gkeys, k, name)
    {
        const json_t *v = json_object_get(json_object_get(row, "params"), json_string_value(name));
        json_array_append(vals, v ? (json_t *)v : json_null());
    }
    return vals;
}

/* [{param, value, params, runs, session_ids, figures {key: {mean, min, max, std, n}}}] in
 * order of the values' first runs: one group per combination of the parameters' values.
 * params names each parameter's value; param and value are the parameter and its value when
 * one is grouped by, the arrays of both when several are. */
static json_t *groups_of(struct table *t)
{
    int one = json_array_size(t->gkeys) == 1;
    json_t *groups = json_array(), *by = json_object();
    size_t i;
    const json_t *e;
    json_array_foreach(t->s->rows, i, e)
    {
        json_t *vals = group_values(t, e);
        char *key = json_dumps(vals, JSON_COMPACT);
        json_t *g = json_object_get(by, key ? key : "null");
        if (!g) {
            json_t *params = json_object();
            size_t k;
            const json_t *name;
            json_array_foreach(t->gkeys, k, name)
                json_object_set(params, json_string_value(name), json_array_get(vals, k));
            g = json_pack("{s:O,s:O,s:o,s:i,s:[]}", "param",
                          one ? json_array_get(t->gkeys, 0) : t->gkeys, "value",
                          one ? json_array_get(vals, 0) : vals, "params", params, "runs", 0,
                          "session_ids");
            json_object_set_new(g, "values", json_incref(vals)); /* the key, dropped below */
            json_object_set_new(by, key ? key : "null", g);
            json_array_append(groups, g);
        }
        free(key);
        json_decref(vals);
        json_object_set_new(g, "runs",
                            json_integer(json_integer_value(json_object_get(g, "runs")) + 1));
        json_array_append_new(json_object_get(g, "session_ids"),
                              json_string(rm_jget_str(e, "session_id")));
    }
    json_t *g;
    json_array_foreach(groups, i, g)
    {
        json_t *figs = json_object();
        for (size_t k = 0; k < t->n_fig; k++) {
            struct agg a = {0, 0, 0, INFINITY, -INFINITY, 0, 0};
            size_t j;
            const json_t *r;
            json_array_foreach(t->s->rows, j, r)
            {
                json_t *vals = group_values(t, r);
                int in = json_equal(vals, json_object_get(g, "values"));
                json_decref(vals);
                if (!in) continue;
                double x = fig_value(&t->fig[k], r), blo, bhi;
                if (!fig_bar(&t->fig[k], r, &blo, &bhi)) continue;
                a.n++, a.sum += x, a.sumsq += x * x;
                a.lo = fmin(a.lo, x), a.hi = fmax(a.hi, x);
                a.bar_lo += blo, a.bar_hi += bhi;
            }
            json_object_set_new(figs, t->fig[k].key, agg_json(&a, t->fig[k].low_key != NULL));
        }
        json_object_set_new(g, "figures", figs);
    }
    json_array_foreach(groups, i, g) json_object_del(g, "values");
    json_decref(by);
    return groups;
}

static void text_groups(struct table *t, const json_t *groups)
{
    size_t n = 0, nr = json_array_size(groups), i;
    struct tcol c[MAX_COLS];
    memset(c, 0, sizeof c);
    char b[CELL], title[256];
    const json_t *g;
    size_t kk;
    const json_t *name;
    struct tcol *x;
    json_array_foreach(t->gkeys, kk, name)
    {
        upper_title(title, sizeof title, json_string_value(name));
        x = new_col(c, &n, title, 0, 6, nr);
        json_array_foreach(groups, i, g) x->cells[i] = escaped(param_text(
            b, sizeof b, json_object_get(json_object_get(g, "params"), json_string_value(name))));
    }
    x = new_col(c, &n, "RUNS", 1, 4, nr);
    json_array_foreach(groups, i, g)
    {
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(json_object_get(g, "runs")));
        x->cells[i] = strdup(b);
    }
    for (size_t k = 0; k < t->n_fig; k++) {
        const struct figure *f = &t->fig[k];
        x = new_col(c, &n, f->title, 1, 6, nr);
        x->stage = 3; /* a group's figure is cut last */
        json_array_foreach(groups, i, g)
        {
            const json_t *a = json_object_get(json_object_get(g, "figures"), f->key);
            const json_t *m = json_object_get(a, "mean");
            char v1[64], v2[64];
            /* The mean with its bar (the mean of the runs' lows and highs), as a run's. */
            json_t *bar = f->low_key ? json_pack("{s:O,s:O,s:O}", f->row_key, m, f->low_key,
                                                 json_object_get(a, "mean_low"), f->high_key,
                                                 json_object_get(a, "mean_high"))
                                     : NULL;
            if (!json_is_number(m)) {
                snprintf(b, sizeof b, "-");
            } else if (bar) {
                fig_bar_text(v1, sizeof v1, f, bar);
                if (json_integer_value(json_object_get(a, "n")) > 1) {
                    fig_text(v2, sizeof v2, f->unit, json_number_value(json_object_get(a, "std")));
                    snprintf(b, sizeof b, "%s sd %s", v1, v2);
                } else {
                    snprintf(b, sizeof b, "%s", v1);
                }
            } else if (json_integer_value(json_object_get(a, "n")) > 1) {
                fig_text(v1, sizeof v1, f->unit, json_number_value(m));
                fig_text(v2, sizeof v2, f->unit, json_number_value(json_object_get(a, "std")));
                snprintf(b, sizeof b, "%s \xc2\xb1%s", v1, v2);
            } else {
                snprintf(b, sizeof b, "%s", fig_text(v1, sizeof v1, f->unit, json_number_value(m)));
            }
            json_decref(bar);
            x->cells[i] = strdup(b);
        }
    }
    /* The last column is the runs' ids, cut first when the terminal is narrow. */
    x = new_col(c, &n, "SESSIONS", 0, 10, nr);
    x->drop = DROP_EARLY + 2;
    json_array_foreach(groups, i, g)
    {
        size_t j, used = 0;
        const json_t *id;
        b[0] = '\0';
        json_array_foreach(json_object_get(g, "session_ids"), j, id)
        {
            int w =
                snprintf(b + used, sizeof b - used, "%s%s", j ? " " : "", json_string_value(id));
            if (w < 0 || (size_t)w >= sizeof b - used) break;
            used += (size_t)w;
        }
        x->cells[i] = escaped(b);
    }
    text_table(t, c, n, nr);
    free_cols(c, n, nr);
}

/* ---- the notes under the text table ---- */

/* The notes' text to out, each line longer than cols wrapped at its spaces (the continuation
 * indented by two). */
static void wrap_lines(FILE *out, const char *text, int cols)
{
    const char *line = text;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        int indent = 0;
        for (;;) {
            /* the most of line[0, len) that fits cols - indent characters, cut at a space */
            size_t cut = len, k, space = 0;
            int w = 0;
            for (k = 0; k < len; k++) {
                if ((((unsigned char)line[k]) & 0xc0) != 0x80 && ++w > cols - indent) break;
                if (line[k] == ' ') space = k;
            }
            if (k < len) cut = space ? space : k;
            fprintf(out, "%*s", indent, "");
            fwrite(line, 1, cut, out);
            fputc('\n', out);
            while (cut < len && line[cut] == ' ')
                cut++;
            line += cut, len -= cut;
            if (!len) break;
            indent = 2;
        }
        line += len;
        if (*line == '\n') line++;
    }
}

static void notes_body(struct table *t, FILE *f, int grouped);

static void text_notes(struct table *t, int grouped)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) abort();
    notes_body(t, m, grouped);
    fclose(m);
    int cols = t->o->columns > 0 ? t->o->columns : 100;
    /* Narrower than the notes were broken for: a note's continuation lines joined, then
     * wrapped again. */
    for (char *p = buf; cols < 80 && (p = strstr(p, "\n  "));)
        memmove(p, p + 2, strlen(p + 2) + 1), *p = ' ';
    if (t->o->wide || cols < 20)
        fputs(buf, t->f);
    else
        wrap_lines(t->f, buf, cols);
    free(buf);
}

static void notes_body(struct table *t, FILE *f, int grouped)
{
    const struct rm_sweep *s = t->s;
    if (!json_array_size(s->rows)) {
        fputs("no sessions", f);
        if (t->o->sweep_name) {
            fputs(" in sweep '", f);
            rm_fput_safe(f, t->o->sweep_name);
            fputc('\'', f);
        }
        fputc('\n', f);
        return;
    }
    if (t->dropped[0])
        fprintf(f, "left out to fit %d columns: %s (--wide, json and csv have them)\n",
                t->o->columns > 0 ? t->o->columns : 100, t->dropped);
    if (s->params_inferred)
        fputs("parameters inferred from the command lines (the arguments that differ)\n", f);
    if (t->params_left_out)
        fprintf(f, "%zu more parameters are columns of --format json and csv\n",
                t->params_left_out);
    if (!grouped) {
        fputs("*: the best of the column (least time, VRAM and energy; most utilization)\n", f);
        fputs("ENERGY: the GPUs' sum \xc2\xb1its error bar (\xc2\xb1?: its top unknown)\n"
              "=: tied for the best (the same as shown, its bar overlaps the best run's, or a\n"
              "  time within one sampling interval of it: the runs are not told apart)\n",
              f);
        if (t->bars_left_out)
            fputs("ENERGY's error bars left out to fit the width (--wide, json and csv have "
                  "them)\n",
                  f);
    } else {
        fputs("each figure: mean \xc2\xb1std over the value's runs (min and max in json/csv)\n", f);
        fputs("ENERGY: the GPUs' sum, mean \xc2\xb1the mean of the runs' error bars, sd: std\n", f);
    }
    if (t->judged && !grouped) {
        fprintf(f,
                "objectives (their metric's last value, or best with :best): ^ the best of the "
                "column;\n  * on the Pareto front of the objective against %s (no run better "
                "at no more cost),\n  ~ on it within its error bar (only runs whose %s lies "
                "within its bar do better)\n",
                rm_jget_str(t->judged, "cost"), rm_jget_str(t->judged, "cost"));
        if (json_is_string(json_object_get(t->judged, "target")))
            fputs("TO ...: the time from the start to the first metric line meeting the target, "
                  "and the\n  energy to then (the run's mean power over that time)\n",
                  f);
    }
    fputs("UTIL %: GPU utilization, mean over GPUs\n", f);
    if (!strcmp(t->vram, "workload"))
        fputs("WORKLOAD VRAM: the recorded command's own processes (nvidia-smi pmon), max over\n"
              "  GPUs: the summary's workload_peak_vram_mb\n",
              f);
    if (!strcmp(t->vram, "workload") && any_basis(s))
        fputs("  -: GPU memory held by processes runmon could not place (another PID namespace),\n"
              "  unattributed; assumed: counted as the workload's, the job's GPUs being its own\n",
              f);
    if (!strcmp(t->vram, "device") || t->o->device_vram)
        fputs("DEVICE VRAM: all use of the GPU (nvidia-smi memory.used), max over GPUs: the\n"
              "  summary's peak_vram_mb\n",
              f);
    if (s->marked)
        fputs("!: the end of the session could not write all its files (the JSON's "
              "\"unwritten\" names them)\n",
              f);
    size_t i;
    const json_t *n;
    json_array_foreach(s->notes, i, n)
    {
        fputs("note: ", f);
        rm_fput_safe(f, json_string_value(n));
        fputc('\n', f);
    }
}

/* ---- CSV ---- */

static void csv_json_value(struct table *t, const json_t *v)
{
    if (json_is_integer(v)) {
        fprintf(t->f, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fprintf(t->f, "%.15g", json_real_value(v));
    } else if (json_is_string(v)) {
        rm_csv_put(t->f, json_string_value(v), t->o->csv_escape);
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", t->f);
    } else if (v && !json_is_null(v)) {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        rm_csv_put(t->f, s, t->o->csv_escape);
        free(s);
    }
}

static void csv_name(struct table *t, const char *prefix, const char *name, int first)
{
    char b[CELL];
    snprintf(b, sizeof b, "%s%s", prefix, name);
    if (!first) fputc(',', t->f);
    rm_csv_put(t->f, b, t->o->csv_escape);
}

static const char *const csv_head[] = {"session_id", "status", "host", "sweep"};
static const char *const csv_tail[] = {"rerun",    "exit_code", "signal",     "started_at",
                                       "ended_at", "gpu_name",  "gpu_count",  "files",
                                       "bytes",    "command",   "session_dir"};

/* The judged columns' names: objective:SPEC, :best, :front for each objective; cost, its
 * ends; the target's reached, seconds and energy_wh. */
static void csv_judged_head(struct table *t)
{
    if (!t->judged) return;
    size_t k;
    const json_t *o;
    char b[600];
    json_array_foreach(json_object_get(t->judged, "objectives"), k, o)
    {
        csv_name(t, "objective:", json_string_value(o), 0);
        snprintf(b, sizeof b, "%s:best", json_string_value(o));
        csv_name(t, "objective:", b, 0);
        snprintf(b, sizeof b, "%s:front", json_string_value(o));
        csv_name(t, "objective:", b, 0);
    }
    csv_name(t, "cost:", rm_jget_str(t->judged, "cost"), 0);
    csv_name(t, "", "cost_low", 0);
    csv_name(t, "", "cost_high", 0);
    if (!json_is_string(json_object_get(t->judged, "target"))) return;
    csv_name(t, "", "target_reached", 0);
    csv_name(t, "", "target_seconds", 0);
    csv_name(t, "", "target_energy_wh", 0);
}

static void csv_judged_row(struct table *t, const json_t *e)
{
    if (!t->judged) return;
    size_t k;
    const json_t *o;
    json_array_foreach(json_object_get(e, "objectives"), k, o)
    {
        static const char *const keys[] = {"value", "best", "front"};
        for (size_t i = 0; i < 3; i++) {
            fputc(',', t->f);
            csv_json_value(t, json_object_get(o, keys[i]));
        }
    }
    const json_t *c = json_object_get(e, "cost");
    static const char *const ck[] = {"value", "low", "high"};
    for (size_t i = 0; i < 3; i++) {
        fputc(',', t->f);
        csv_json_value(t, json_object_get(c, ck[i]));
    }
    if (!json_is_string(json_object_get(t->judged, "target"))) return;
    const json_t *tg = json_object_get(e, "target");
    const char *const tk[] = {"reached", "seconds", RM_SWEEP_KEY(ENERGY)};
    for (size_t i = 0; i < 3; i++) {
        fputc(',', t->f);
        csv_json_value(t, json_object_get(tg, tk[i]));
    }
}

static void csv_runs(struct table *t)
{
    size_t i, k;
    const json_t *e, *p;
    for (k = 0; k < sizeof csv_head / sizeof *csv_head; k++)
        csv_name(t, "", csv_head[k], !k);
    json_array_foreach(t->s->param_names, k, p) csv_name(t, "param:", json_string_value(p), 0);
    csv_name(t, "", "params_inferred", 0);
    for (k = 0; k < sizeof csv_tail / sizeof *csv_tail; k++)
        csv_name(t, "", csv_tail[k], 0);
    for (k = 0; k < t->n_fig; k++) {
        csv_name(t, "", t->fig[k].key, 0);
        if (t->fig[k].low_key) csv_name(t, "", t->fig[k].low_key, 0);
        if (t->fig[k].low_key) csv_name(t, "", t->fig[k].high_key, 0);
    }
    csv_judged_head(t);
    fputc('\n', t->f);
    json_array_foreach(t->s->rows, i, e)
    {
        for (k = 0; k < sizeof csv_head / sizeof *csv_head; k++) {
            if (k) fputc(',', t->f);
            csv_json_value(t, json_object_get(e, csv_head[k]));
        }
        json_array_foreach(t->s->param_names, k, p)
        {
            fputc(',', t->f);
            csv_json_value(t, json_object_get(json_object_get(e, "params"), json_string_value(p)));
        }
        fputs(t->s->params_inferred ? ",true" : ",false", t->f);
        for (k = 0; k < sizeof csv_tail / sizeof *csv_tail; k++) {
            fputc(',', t->f);
            csv_json_value(t, json_object_get(e, csv_tail[k]));
        }
        for (k = 0; k < t->n_fig; k++) {
            double x = fig_value(&t->fig[k], e);
            fputc(',', t->f);
            if (!isnan(x)) fprintf(t->f, "%.15g", x);
            if (!t->fig[k].low_key) continue;
            fputc(',', t->f);
            csv_json_value(t, json_object_get(e, t->fig[k].low_key));
            fputc(',', t->f);
            csv_json_value(t, json_object_get(e, t->fig[k].high_key));
        }
        csv_judged_row(t, e);
        fputc('\n', t->f);
    }
}

static void csv_groups(struct table *t, const json_t *groups)
{
    static const char *const stat[] = {"mean", "min", "max", "std", "mean_low", "mean_high"};
    size_t i, k;
    const json_t *g;
    const json_t *name;
    json_array_foreach(t->gkeys, k, name) csv_name(t, "param:", json_string_value(name), !k);
    csv_name(t, "", "runs", 0);
    for (k = 0; k < t->n_fig; k++)
        for (size_t s = 0; s < (t->fig[k].low_key ? 6u : 4u); s++) {
            char b[600];
            snprintf(b, sizeof b, "%s_%s", t->fig[k].key, stat[s]);
            csv_name(t, "", b, 0);
        }
    fputc('\n', t->f);
    json_array_foreach(groups, i, g)
    {
        json_array_foreach(t->gkeys, k, name)
        {
            if (k) fputc(',', t->f);
            csv_json_value(t,
                           json_object_get(json_object_get(g, "params"), json_string_value(name)));
        }
        fprintf(t->f, ",%lld", (long long)json_integer_value(json_object_get(g, "runs")));
        for (k = 0; k < t->n_fig; k++) {
            const json_t *a = json_object_get(json_object_get(g, "figures"), t->fig[k].key);
            for (size_t s = 0; s < (t->fig[k].low_key ? 6u : 4u); s++) {
                fputc(',', t->f);
                csv_json_value(t, json_object_get(a, stat[s]));
            }
        }
        fputc('\n', t->f);
    }
}

/* ---- JSON ---- */

static void json_doc(struct table *t, const json_t *groups)
{
    const struct rm_sweep *s = t->s;
    json_t *rows = json_deep_copy(s->rows), *e;
    size_t i;
    size_t nr = json_array_size(rows);
    enum mark *m = calloc((nr ? nr : 1) * (t->n_fig ? t->n_fig : 1), sizeof *m);
    if (!m) abort();
    for (size_t k = 0; k < t->n_fig; k++)
        marks_of(&t->fig[k], s->rows, m + k * nr);
    json_array_foreach(rows, i, e)
    {
        json_t *b = json_array(), *tied = json_array();
        for (size_t k = 0; k < t->n_fig; k++) {
            if (m[k * nr + i] == M_BEST) json_array_append_new(b, rm_jstr(t->fig[k].key));
            if (m[k * nr + i] == M_TIED) json_array_append_new(tied, rm_jstr(t->fig[k].key));
        }
        json_object_set_new(e, "best", b);
        json_object_set_new(e, "best_tied", tied);
    }
    free(m);
    json_t *sinks = json_array(), *figs = json_array();
    for (size_t k = 0; k < t->o->n_sinks; k++)
        json_array_append_new(sinks, rm_jstr(t->o->sinks[k]));
    for (size_t k = 0; k < t->n_fig; k++)
        json_array_append_new(figs, rm_jstr(t->fig[k].key));
    json_t *tot = NULL;
    if (rm_totals_load(t->o->sinks[0], &tot) != 0) tot = NULL;
    json_t *d =
        json_pack("{s:s,s:i,s:o,s:o,s:o,s:O,s:b,s:i,s:o,s:O,s:s,s:o}", "format", "runmon-sessions",
                  "schema_version", 1, "sink_dir", rm_jstr(t->o->sinks[0]), "sinks", sinks, "sweep",
                  t->o->sweep_name ? rm_jstr(t->o->sweep_name) : json_null(), "param_names",
                  s->param_names, "params_inferred", s->params_inferred, "hosts", s->n_hosts,
                  "figures", figs, "phases", t->phases, "vram", t->vram, "sessions", rows);
    if (groups) json_object_set(d, "groups", (json_t *)groups);
    if (t->judged) json_object_update(d, t->judged); /* objectives, cost, target */
    json_object_set(d, "notes", s->notes);
    json_t *c = json_object_get(tot, "counters");
    json_object_set_new(d, "counters", c ? json_incref(c) : json_object());
    char *text = json_dumps(d, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    if (text) fprintf(t->f, "%s\n", text);
    free(text);
    json_decref(d);
    json_decref(tot);
}

static int known_param(const struct rm_sweep *s, const char *name)
{
    size_t k;
    const json_t *p;
    json_array_foreach(s->param_names, k, p) if (!strcmp(json_string_value(p), name)) return 1;
    return 0;
}

/* --group-by's parameters in t->gkeys: the one named, or several separated by commas (a
 * parameter whose name has a comma is taken whole). 0, or -1 with err naming what no run has. */
static int group_keys(struct table *t, char *err, size_t errsz)
{
    const char *by = t->o->group_by;
    t->gkeys = json_array();
    if (known_param(t->s, by) || !json_array_size(t->s->rows)) {
        json_array_append_new(t->gkeys, rm_jstr(by));
        return 0;
    }
    for (const char *p = by;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *name = strndup(p, len);
        if (!name) abort();
        int dup = 0;
        size_t k;
        const json_t *q;
        json_array_foreach(t->gkeys, k, q) dup |= !strcmp(json_string_value(q), name);
        if (!known_param(t->s, name) || dup) {
            char b[256];
            rm_term_escape(b, sizeof b, name);
            if (dup)
                snprintf(err, errsz, "--group-by %s: named twice", b);
            else
                snprintf(err, errsz, "--group-by %s: no run has that parameter (%s)", b,
                         json_array_size(t->s->param_names) ? "see the table's columns"
                                                            : "the runs have no parameters");
            free(name);
            return -1;
        }
        json_array_append_new(t->gkeys, rm_jstr(name));
        free(name);
        if (!comma) return 0;
        p = comma + 1;
    }
}

int rm_sweep_print(FILE *f, const struct rm_sweep_opts *o, const struct rm_sweep *s, char *err,
                   size_t errsz)
{
    struct table t = {.f = f, .o = o, .s = s};
    if (o->group_by && group_keys(&t, err, errsz) < 0) {
        json_decref(t.gkeys);
        return -1;
    }
    if (rm_judge_rows(s->rows, &o->judge, &t.judged, err, errsz) < 0) {
        json_decref(t.gkeys);
        return -1;
    }
    choose_figures(&t);
    json_t *groups = o->group_by ? groups_of(&t) : NULL;
    switch (o->format) {
    case RM_SESSIONS_TEXT:
        if (json_array_size(s->rows)) {
            if (groups)
                text_groups(&t, groups);
            else
                text_runs(&t);
        }
        text_notes(&t, groups != NULL);
        break;
    case RM_SESSIONS_CSV:
        if (groups)
            csv_groups(&t, groups);
        else
            csv_runs(&t);
        break;
    case RM_SESSIONS_JSON:
        json_doc(&t, groups);
        break;
    }
    json_decref(groups);
    json_decref(t.phases);
    json_decref(t.gkeys);
    json_decref(t.judged);
    return 0;
}

int rm_sweep_table_print(FILE *f, const struct rm_sweep_opts *o, char *err, size_t errsz)
{
    struct rm_sweep s;
    if (rm_sweep_load(o->sinks, o->n_sinks, o->sweep_name, &s, err, errsz) < 0) return -1;
    if (o->sort_by) rm_session_rows_sort(s.rows, o->sort_by);
    int rc = rm_sweep_print(f, o, &s, err, errsz);
    rm_sweep_free(&s);
    return rc;
}
