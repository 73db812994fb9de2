#include "sweep/sessions_out.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/termsafe.h"
#include "sink/index.h"
#include "sweep/sessions_rows.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_rows.h"

#define MAX_COLS 32

/* One listing being written. */
struct out {
    FILE *f;
    const struct rm_sessions_opts *o;
    int figures;  /* the rows carry summary.json's figures */
    json_t *held; /* the rows held for sorting or the sweep table; NULL: streamed */
    const json_t *counters;
    size_t rows;
    int marked;          /* a row's status carries the mark of files its end could not write */
    int width[MAX_COLS]; /* the text table's column widths (-1: left out to fit) */
    int measuring;       /* the first pass of the streamed text listing: widths only */
};

/* ---- cells: one session's values, from an index record or a held row ---- */

#define MIN_CAP(cap, n) ((cap) < (n) ? (cap) : (n))

static const char *row_str(const struct rm_session_row *r, const char *key, const char *rec_value)
{
    return r->obj ? rm_jget_str(r->obj, key) : rec_value;
}

static const char *cell_id(char *buf, size_t cap, const struct rm_session_row *r)
{
    (void)buf, (void)cap;
    return row_str(r, "session_id", r->rec ? r->rec->session_id : "");
}

/* A session whose end could not write all its files is marked '*' (the JSON listing's
 * "unwritten" names them; a note under the text listing says so). */
static const char *cell_status(char *buf, size_t cap, const struct rm_session_row *r)
{
    int unwritten = r->obj ? json_object_get(r->obj, "unwritten") != NULL
                           : r->rec->raw[RM_REC_UNWRITTEN].p != NULL;
    snprintf(buf, MIN_CAP(cap, 64), "%s%s", row_str(r, "status", r->rec ? r->rec->status : ""),
             unwritten ? "*" : "");
    return buf;
}

static const char *cell_host(char *buf, size_t cap, const struct rm_session_row *r)
{
    (void)buf, (void)cap;
    return row_str(r, "host", r->rec ? r->rec->host : "");
}

static const char *cell_started(char *buf, size_t cap, const struct rm_session_row *r)
{
    (void)buf, (void)cap;
    return row_str(r, "started_at", r->rec ? r->rec->started_at : "");
}

static const char *cell_duration(char *buf, size_t cap, const struct rm_session_row *r)
{
    const json_t *d = json_object_get(r->obj, "duration_s");
    if (r->obj ? !json_is_number(d) : r->duration_s < 0) return "-";
    snprintf(buf, MIN_CAP(cap, 32), "%.1fs", r->obj ? json_number_value(d) : r->duration_s);
    return buf;
}

static const char *cell_bytes(char *buf, size_t cap, const struct rm_session_row *r)
{
    snprintf(buf, cap, "%lld",
             r->obj ? (long long)json_integer_value(json_object_get(r->obj, "bytes")) : r->bytes);
    return buf;
}

/* What kept a session's command from running ("command not found"), or NULL. */
static const char *command_error(const struct rm_session_row *r)
{
    const char *never = r->obj ? rm_jget_str(r->obj, "command_error") : r->command_error;
    return never && *never ? never : NULL;
}

/* The command's words, each escaped (a newline or an escape sequence in an argument must not
 * break the row or reach the terminal), joined by spaces; "-" when there is none. */
static const char *cell_command(char *cmd, size_t cap, const struct rm_session_row *r)
{
    size_t used = 0, pos = 0, k = 0;
    char word[2048];
    json_t *a = NULL;
    cmd[0] = '\0';
    for (;; k++) {
        const char *text;
        if (r->obj) {
            if (!(a = json_array_get(json_object_get(r->obj, "command"), k))) break;
            text = json_string_value(a);
        } else {
            if (!rm_index_rec_word(r->rec, &pos, word, sizeof word)) break;
            text = word;
        }
        if (k) {
            if (used + 2 > cap) break;
            cmd[used++] = ' ';
            cmd[used] = '\0';
        }
        size_t n = rm_term_escape(cmd + used, cap - used, text);
        if (n >= cap - used) break;
        used += n;
    }
    /* A command that never ran: a session and a summary all the same, but no run. */
    const char *never = command_error(r);
    if (never && used < cap) snprintf(cmd + used, cap - used, "%s(%s)", used ? " " : "", never);
    return cmd[0] ? cmd : "-";
}

/* ---- text tables ---- */

enum align {
    LEFT,  /* recorded text: escaped (base/termsafe.h), padded to the width */
    RIGHT, /* runmon's own figures, right-aligned */
    LAST,  /* the last column, as its cell wrote it (escaped there), after two spaces */
};

struct text_col {
    const char *title;
    enum align align;
    int width;  /* the widest it gets: its widest escaped cell, at most this */
    int min;    /* the narrowest fit_listing cuts it to (LAST: the command's least room) */
    size_t cap; /* LEFT: the bytes of the escaped, padded cell (a longer one is cut) */
    const char *(*cell)(char *buf, size_t cap, const struct rm_session_row *r);
};

#define NCOLS(t) (sizeof(t) / sizeof((t)[0]))

/* The plain listing. A LEFT column's width is its widest cell (at most `width`), fitted with
 * the command to the terminal's columns (fit_listing). */
// clang-format off
static const struct text_col listing_cols[] = {
    {"SESSION",  LEFT,  64, 16, 512, cell_id},
    {"STATUS",   LEFT,  12, 12, 128, cell_status},
    {"HOST",     LEFT,  32, 8,  512, cell_host},
    {"STARTED",  LEFT,  29, 19, 256, cell_started},
    {"DURATION", RIGHT, 10, 8,  0,   cell_duration},
    {"BYTES",    RIGHT, 12, 5,  0,   cell_bytes},
    {"COMMAND",  LAST,  0,  12, 0,   cell_command},
};
// clang-format on
enum { L_SESSION, L_STATUS, L_HOST, L_STARTED, L_DURATION, L_BYTES, L_COMMAND };

#define CELL_BUFSZ 2048
_Static_assert(NCOLS(listing_cols) <= MAX_COLS, "MAX_COLS");

/* The characters of escaped text (a code point or an escape character each). */
static int text_chars(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Widens w->width to this row's cells (the first pass over the listing). */
static void measure_row(struct out *w, const struct rm_session_row *r)
{
    char raw[CELL_BUFSZ], esc[CELL_BUFSZ];
    for (size_t c = 0; c < L_COMMAND; c++) {
        rm_term_escape(esc, sizeof esc, listing_cols[c].cell(raw, sizeof raw, r));
        int n = text_chars(esc);
        if (n > listing_cols[c].width) n = listing_cols[c].width;
        if (n > w->width[c]) w->width[c] = n;
    }
    /* A command that never ran keeps room for its note: the other columns give way first. */
    const char *never = command_error(r);
    int need = never ? listing_cols[L_COMMAND].min + (int)strlen(never) + 3 : 0;
    if (need > w->width[L_COMMAND]) w->width[L_COMMAND] = need;
}

static int listing_width(const int *width)
{
    int total = 0;
    for (size_t c = 0; c < L_COMMAND; c++)
        total += width[c] < 0 ? 0 : width[c] + (total ? 1 : 0);
    return total + 2 + width[L_COMMAND];
}

/* The widths that fit `cols`: the command gets what the others leave, at least its minimum;
 * when they leave less, the host and the start time are cut (to the second), then left out
 * (the session id holds both), then the session id is cut at its start (its end is a unique
 * --session suffix). A width of -1: the column is left out. */
static void fit_listing(int *width, int cols)
{
    static const int order[] = {L_HOST, L_STARTED};
    if (width[L_COMMAND] < listing_cols[L_COMMAND].min) /* else: room for a note (measure_row) */
        width[L_COMMAND] = listing_cols[L_COMMAND].min;
    for (size_t k = 0; k < 2 && listing_width(width) > cols; k++) {
        int c = order[k], over = listing_width(width) - cols;
        int room = width[c] - listing_cols[c].min;
        if (room > 0) width[c] -= over < room ? over : room;
        /* The start time whole, or to the second (not cut inside its fraction). */
        if (c == L_STARTED && width[c] < listing_cols[c].width) width[c] = listing_cols[c].min;
    }
    for (size_t k = 0; k < 2 && listing_width(width) > cols; k++)
        width[order[1 - k]] = -1;
    if (listing_width(width) > cols) {
        int over = listing_width(width) - cols;
        int room = width[L_SESSION] - listing_cols[L_SESSION].min;
        if (room > 0) width[L_SESSION] -= over < room ? over : room;
    }
    if (listing_width(width) < cols) width[L_COMMAND] += cols - listing_width(width);
}

/* The columns' widths: each column's title, widened to the rows' cells (measured first). */
static void text_widths_init(int *width)
{
    for (size_t c = 0; c < NCOLS(listing_cols); c++)
        width[c] = (int)strlen(listing_cols[c].title);
}

static const char *sep(const struct text_col *col, size_t c)
{
    return !c ? "" : col->align == LAST ? "  " : " ";
}

static void text_header(FILE *f, const struct text_col *cols, size_t n, const int *width)
{
    int first = 1;
    for (size_t c = 0; c < n; c++) {
        if (width[c] < 0) continue;
        fprintf(f, cols[c].align == LEFT ? "%s%-*s" : "%s%*s", first ? "" : sep(&cols[c], c),
                cols[c].align == LAST ? 0 : width[c], cols[c].title);
        first = 0;
    }
    fputc('\n', f);
}

/* A cell cut at its start to width characters, its end kept (an id's host and pid). */
static const char *left_cut(char *out, size_t cap, const char *esc, int width)
{
    int n = text_chars(esc);
    if (n <= width) return rm_term_cell(out, cap, esc, width, -1);
    const char *p = esc + strlen(esc);
    for (int k = 0; k < width - 1 && p > esc;)
        if ((((unsigned char)*--p) & 0xc0) != 0x80) k++;
    snprintf(out, cap, "\xe2\x80\xa6%s", p);
    return out;
}

static void text_row(FILE *f, const struct text_col *cols, size_t n, const int *width,
                     const struct rm_session_row *r)
{
    char raw[CELL_BUFSZ], cell[CELL_BUFSZ], esc[CELL_BUFSZ];
    int first = 1;
    for (size_t c = 0; c < n; c++) {
        if (width[c] < 0) continue;
        const char *v = cols[c].cell(raw, sizeof raw, r);
        fputs(first ? "" : sep(&cols[c], c), f);
        first = 0;
        if (c == L_SESSION) {
            rm_term_escape(esc, sizeof esc, v);
            fputs(left_cut(cell, sizeof cell, esc, width[c]), f);
        } else if (cols[c].align == LEFT) {
            fputs(rm_term_cell(cell, MIN_CAP(cols[c].cap, sizeof cell), v, width[c], width[c]), f);
        } else if (cols[c].align == LAST && text_chars(v) > width[c]) {
            /* The command, already escaped: cut with an ellipsis, a note that it never ran
             * kept whole after it. */
            const char *never = command_error(r);
            int note = never ? (int)strlen(never) + 3 : 0, keep = width[c] - 1 - note;
            if (keep < 1) keep = width[c] - 1, note = 0;
            rm_term_cell(cell, sizeof cell - 4, v, 0, keep > 0 ? keep : 0);
            fputs(cell, f);
            fputs("\xe2\x80\xa6", f);
            if (note) fprintf(f, " (%s)", never);
        } else {
            fprintf(f, "%*s", cols[c].align == LAST ? 0 : width[c], v);
        }
    }
    fputc('\n', f);
}

static void mark_note(FILE *f, int marked)
{
    if (marked)
        fprintf(f, "*: the end of the session could not write all its files (the JSON listing's "
                   "\"unwritten\" names them)\n");
}

/* ---- CSV: a column is its JSON key ---- */

struct csv_col {
    const char *key; /* the header, and the held row's key */
    int figure;      /* only with summary.json's figures */
    /* A streamed row's cell (from its index record); a held row's is its value by key. */
    void (*rec)(struct out *w, const struct rm_session_row *r);
};

/* One CSV text field through the one writer (base/termsafe.h: escaped on a terminal). */
static void csv_text(struct out *w, const char *s)
{
    rm_csv_put(w->f, s, w->o->csv_escape);
}

/* A held row's value: a number in full, a string exact, an array (the command) as its JSON
 * text, null empty. */
static void csv_value(struct out *w, const json_t *v)
{
    if (json_is_integer(v)) {
        fprintf(w->f, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fprintf(w->f, "%.15g", json_real_value(v));
    } else if (json_is_string(v)) {
        csv_text(w, json_string_value(v));
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", w->f);
    } else if (json_is_array(v)) {
        char *t = json_dumps(v, JSON_COMPACT);
        if (t) csv_text(w, t);
        free(t);
    }
}

static void rec_id(struct out *w, const struct rm_session_row *r)
{
    csv_text(w, r->rec->session_id);
}
static void rec_status(struct out *w, const struct rm_session_row *r)
{
    csv_text(w, r->rec->status);
}
static void rec_host(struct out *w, const struct rm_session_row *r)
{
    csv_text(w, r->rec->host);
}
static void rec_started(struct out *w, const struct rm_session_row *r)
{
    csv_text(w, r->rec->started_at);
}
static void rec_ended(struct out *w, const struct rm_session_row *r)
{
    if (r->rec->has_ended) csv_text(w, r->rec->ended_at);
}
static void rec_duration(struct out *w, const struct rm_session_row *r)
{
    if (r->duration_s >= 0) fprintf(w->f, "%.15g", r->duration_s);
}
static void rec_exit(struct out *w, const struct rm_session_row *r)
{
    if (r->rec->has_exit) fprintf(w->f, "%lld", r->rec->exit_code);
}
static void rec_files(struct out *w, const struct rm_session_row *r)
{
    fprintf(w->f, "%lld", r->files);
}
static void rec_bytes(struct out *w, const struct rm_session_row *r)
{
    fprintf(w->f, "%lld", r->bytes);
}
/* The command array's JSON text as the index line has it. */
static void rec_command(struct out *w, const struct rm_session_row *r)
{
    if (!r->rec->command) return;
    char *t = strndup(r->rec->command, r->rec->command_len);
    if (t) csv_text(w, t);
    free(t);
}
static void rec_signal(struct out *w, const struct rm_session_row *r)
{
    if (r->rec->signal > 0) fprintf(w->f, "%lld", r->rec->signal);
}

// clang-format off
static const struct csv_col csv_cols[] = {
    {"session_id",        0, rec_id},
    {"status",            0, rec_status},
    {"host",              0, rec_host},
    {"started_at",        0, rec_started},
    {"ended_at",          0, rec_ended},
    {"duration_s",        0, rec_duration},
    {"exit_code",         0, rec_exit},
    {"files",             0, rec_files},
    {"bytes",             0, rec_bytes},
    {"gpu_util_mean_pct", 1, NULL},
    {"peak_vram_mb",      1, NULL},
    {"peak_vram_source",  1, NULL},
    {"energy_wh",         1, NULL},
    {"command",           0, rec_command},
    {"signal",            0, rec_signal},
};
// clang-format on

static void csv_header(struct out *w)
{
    for (size_t c = 0; c < NCOLS(csv_cols); c++)
        if (w->figures || !csv_cols[c].figure) fprintf(w->f, "%s%s", c ? "," : "", csv_cols[c].key);
    fputc('\n', w->f);
}

static void csv_row(struct out *w, const struct rm_session_row *r)
{
    for (size_t c = 0; c < NCOLS(csv_cols); c++) {
        if (!w->figures && csv_cols[c].figure) continue;
        if (c) fputc(',', w->f);
        if (r->obj)
            csv_value(w, json_object_get(r->obj, csv_cols[c].key));
        else if (csv_cols[c].rec)
            csv_cols[c].rec(w, r);
    }
    fputc('\n', w->f);
}

/* ---- JSON: laid out as json_dumps(JSON_INDENT(2)) would lay out the whole document ---- */

static void print_indented(FILE *f, const json_t *v, const char *pad)
{
    char *t = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
    if (!t) return;
    for (char *p = t; *p; p++) {
        fputc(*p, f);
        if (*p == '\n') fputs(pad, f);
    }
    free(t);
}

static void json_begin(struct out *w)
{
    json_t *d = json_string(w->o->dir);
    fprintf(w->f,
            "{\n  \"format\": \"runmon-sessions\",\n  \"schema_version\": 1,\n  \"sink_dir\": ");
    print_indented(w->f, d, "  ");
    fprintf(w->f, ",\n  \"sessions\": [");
    json_decref(d);
}

static void json_end(struct out *w)
{
    fputs(w->rows ? "\n  ],\n  \"counters\": " : "],\n  \"counters\": ", w->f);
    print_indented(w->f, w->counters, "  ");
    fputs("\n}\n", w->f);
}

/* A real as json_dumps writes it with JSON_REAL_PRECISION(15): %.15g, a ".0" when it would
 * read back as an integer, no "+" or leading zeros in the exponent. */
static void json_real_text(FILE *f, double d)
{
    char b[64], out[64];
    snprintf(b, sizeof b, "%.15g", d);
    size_t j = 0;
    for (size_t i = 0; b[i] && j < sizeof out - 3; i++) {
        out[j++] = b[i];
        if (b[i] == 'e') {
            if (b[i + 1] == '+')
                i++;
            else if (b[i + 1] == '-')
                out[j++] = b[++i];
            while (b[i + 1] == '0' && b[i + 2])
                i++;
        }
    }
    out[j] = '\0';
    if (!strchr(out, '.') && !strchr(out, 'e')) strcat(out, ".0");
    fputs(out, f);
}

static void raw_or_null(FILE *f, const struct rm_index_rec *r, int k)
{
    if (r->raw[k].p)
        fwrite(r->raw[k].p, 1, r->raw[k].n, f);
    else
        fputs("null", f);
}

/* A streamed row: the values are the index line's own JSON text (no JSON tree per row). */
static void json_rec(struct out *w, const struct rm_session_row *row)
{
    FILE *f = w->f;
    const struct rm_index_rec *r = row->rec;
    fputs(w->rows ? ",\n    {\n      \"session_id\": " : "\n    {\n      \"session_id\": ", f);
    raw_or_null(f, r, RM_REC_ID);
    fputs(",\n      \"status\": ", f);
    raw_or_null(f, r, RM_REC_STATUS);
    fputs(",\n      \"host\": ", f);
    raw_or_null(f, r, RM_REC_HOST);
    fputs(",\n      \"started_at\": ", f);
    raw_or_null(f, r, RM_REC_STARTED);
    fputs(",\n      \"ended_at\": ", f);
    raw_or_null(f, r, RM_REC_ENDED);
    fputs(",\n      \"duration_s\": ", f);
    if (row->duration_s >= 0)
        json_real_text(f, row->duration_s);
    else
        fputs("null", f);
    fputs(",\n      \"command\": ", f);
    if (!r->command) {
        fputs("null", f);
    } else {
        size_t pos = 0, n, k = 0;
        const char *v;
        while (rm_index_rec_element(r, &pos, &v, &n)) {
            fputs(k++ ? ",\n        " : "[\n        ", f);
            fwrite(v, 1, n, f);
        }
        fputs(k ? "\n      ]" : "[]", f);
    }
    fputs(",\n      \"exit_code\": ", f);
    raw_or_null(f, r, RM_REC_EXIT);
    fputs(",\n      \"signal\": ", f);
    raw_or_null(f, r, RM_REC_SIGNAL);
    fprintf(f, ",\n      \"files\": %lld,\n      \"bytes\": %lld", row->files, row->bytes);
    if (r->raw[RM_REC_UNWRITTEN].p) {
        json_t *u = json_loadb(r->raw[RM_REC_UNWRITTEN].p, r->raw[RM_REC_UNWRITTEN].n, 0, NULL);
        fputs(",\n      \"unwritten\": ", f);
        print_indented(f, u, "      ");
        json_decref(u);
    }
    if (row->command_error) {
        json_t *c = json_string(row->command_error);
        fputs(",\n      \"command_error\": ", f);
        print_indented(f, c, "      ");
        json_decref(c);
    }
    fputs("\n    }", f);
}

static void json_row(struct out *w, const struct rm_session_row *r)
{
    if (r->rec) {
        json_rec(w, r);
    } else {
        fputs(w->rows ? ",\n    " : "\n    ", w->f);
        print_indented(w->f, r->obj, "    ");
    }
}

/* ---- the listing ---- */

static void put_row(struct out *w, const struct rm_session_row *r)
{
    switch (w->o->format) {
    case RM_SESSIONS_CSV:
        csv_row(w, r);
        break;
    case RM_SESSIONS_JSON:
        json_row(w, r);
        break;
    case RM_SESSIONS_TEXT:
        text_row(w->f, listing_cols, NCOLS(listing_cols), w->width, r);
        break;
    }
    w->rows++;
}

static void begin(struct out *w)
{
    switch (w->o->format) {
    case RM_SESSIONS_CSV:
        csv_header(w);
        break;
    case RM_SESSIONS_JSON:
        json_begin(w);
        break;
    case RM_SESSIONS_TEXT:
        fit_listing(w->width, w->o->columns > 0 ? w->o->columns : 100);
        text_header(w->f, listing_cols, NCOLS(listing_cols), w->width);
        break;
    }
}

static void end(struct out *w)
{
    if (w->o->format == RM_SESSIONS_JSON)
        json_end(w);
    else if (w->o->format == RM_SESSIONS_TEXT)
        mark_note(w->f, w->marked);
}

/* --sweep NAME on the plain listing: the sessions recorded with that sweep name (the index
 * line's; a name only the run log gives is seen by the sweep table). */
static int in_sweep(const struct rm_session_row *row, const char *name)
{
    json_t *line = json_loadb(row->rec->line, row->rec->len, 0, NULL);
    const json_t *sw = json_object_get(line, "sweep");
    int in = json_is_string(sw) && !strcmp(json_string_value(sw), name);
    json_decref(line);
    return in;
}

static void on_row(void *ctx, const struct rm_session_row *row)
{
    struct out *w = ctx;
    if (w->o->sweep_name && !in_sweep(row, w->o->sweep_name)) return;
    if (w->measuring) {
        measure_row(w, row);
        return;
    }
    if (!w->held) {
        put_row(w, row);
        return;
    }
    json_t *o = rm_session_row_json(row);
    if (o) json_array_append_new(w->held, o);
}

static int print_sweep(FILE *f, const struct rm_sessions_opts *o, char *err, size_t errsz)
{
    struct rm_sweep s;
    const char *const one[] = {o->dir};
    if (rm_sweep_load(o->n_sinks ? o->sinks : one, o->n_sinks ? o->n_sinks : 1, o->sweep_name, &s,
                      err, errsz) < 0)
        return -1;
    if (o->sort_by) rm_session_rows_sort(s.rows, o->sort_by);
    int rc = rm_sweep_print(f, o, &s, err, errsz);
    rm_sweep_free(&s);
    return rc;
}

int rm_sessions_print(FILE *f, const struct rm_sessions_opts *o, char *err, size_t errsz)
{
    if (o->sweep) return print_sweep(f, o, err, errsz);
    struct out w = {.f = f, .o = o};
    /* The figures when the sort needs them. */
    w.figures = rm_session_sort_needs_figures(o->sort_by);
    json_t *tot = NULL;
    if (rm_totals_load(o->dir, &tot) != 0) tot = rm_totals_new();
    w.counters = json_object_get(tot, "counters");
    /* Sorting and the sweep table need every row; the plain listing streams the index. */
    w.held = w.figures || o->sort_by ? json_array() : NULL;
    text_widths_init(w.width);
    int rc = 0;
    if (!w.held && o->format == RM_SESSIONS_TEXT) {
        /* Two passes over the index (constant memory): the widths, then the rows. */
        w.measuring = 1;
        rc = rm_session_rows_each(o->dir, on_row, &w, &w.marked, err, errsz);
        w.measuring = 0;
        w.marked = 0;
    }
    if (!w.held) begin(&w);
    if (rc == 0) rc = rm_session_rows_each(o->dir, on_row, &w, &w.marked, err, errsz);
    if (rc == 0 && !w.held) end(&w);
    if (rc == 0 && w.held) {
        size_t i;
        const json_t *e;
        if (w.figures) rm_session_rows_add_figures(o->dir, w.held);
        if (o->sort_by) rm_session_rows_sort(w.held, o->sort_by);
        json_array_foreach(w.held, i, e)
        {
            struct rm_session_row r = {.obj = e};
            measure_row(&w, &r);
        }
        begin(&w);
        json_array_foreach(w.held, i, e)
        {
            struct rm_session_row r = {.obj = e};
            put_row(&w, &r);
        }
        end(&w);
    }
    json_decref(w.held);
    json_decref(tot);
    return rc;
}
