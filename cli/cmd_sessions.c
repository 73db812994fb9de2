/* `runmon sessions DIR [--format text|json|csv] [--summary] [--sort FIELD] [--rebuild]`.
 * Opening the sink runs recovery (dead recorders' sessions become "interrupted"), and
 * rebuilds a lost index. The plain listing streams the index (constant memory); --sort and
 * --summary hold every row. --summary makes a sweep table: each session's figures from its
 * summary.json. The text output escapes what the sessions recorded (a command line, a host:
 * base/termsafe.h), and so does CSV written to a terminal; JSON, and CSV to a file or a pipe,
 * keep it exact. */
#include "cli/cmd_sessions.h"

#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/jsonpick.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "sink/index.h"
#include "sink/names.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: runmon sessions DIR [--format text|json|csv] [--summary] [--sort FIELD]\n"
            "                           [--rebuild]\n\n"
            "List the recording sessions of a sink directory (runmon record -o DIR): id,\n"
            "status, host, start, duration, command and bytes kept on disk.\n\n"
            "options:\n"
            "  --format text|json|csv  output format (default: text on a terminal, else json);\n"
            "                      json, and csv to a file or pipe, keep what sessions recorded\n"
            "                      exact; text, and csv on a terminal, escape control characters\n"
            "  --summary           a sweep table: one row per session with the figures of its\n"
            "                      summary.json: status, duration, exit code, GPU utilization\n"
            "                      mean, peak VRAM (the workload's own when known, marked w),\n"
            "                      GPU energy, command; '-' where a session has no summary.json\n"
            "                      (running, interrupted). Human units in text, full values in\n"
            "                      json and csv\n"
            "  --sort FIELD        start (oldest first, the default), duration, util, vram,\n"
            "                      energy (largest first, '-' last) or status (by name)\n"
            "  --rebuild           rebuild the sink's index (index.jsonl, sink.json) from the\n"
            "                      session folders first, adopting stray segment files\n"
            "  -h, --help          this text\n\n"
            "exit status: 0 success, 2 a usage error or no sink there.\n");
}

static const char *const sort_fields[] = {"start", "duration", "util", "vram", "energy", "status"};

/* The figures of DIR/ID/summary.json added to the session's object e: gpu_util_mean_pct,
 * peak_vram_mb (summary.json's workload_peak_vram_mb when not null, else its peak_vram_mb),
 * peak_vram_source ("workload", "gpu" or null), energy_wh (totals.energy_wh), has_summary;
 * null where the session has no summary.json (running, interrupted) or no such figure. */
static void add_figures(const char *dir, json_t *e)
{
    char path[4096];
    json_t *s = NULL;
    const char *id = rm_jget_str(e, "session_id");
    /* Only these members: a summary.json of thousands of phase rows is scanned, not loaded. */
    static const char *const keys[] = {"gpu_util_mean_pct", "workload_peak_vram_mb", "peak_vram_mb",
                                       "totals"};
    if (*id && !strchr(id, '/') &&
        (size_t)snprintf(path, sizeof path, "%s/%s/summary.json", dir, id) < sizeof path)
        s = rm_json_pick_file(path, keys, sizeof keys / sizeof keys[0]);
    json_t *u = json_object_get(s, "gpu_util_mean_pct");
    json_t *w = json_object_get(s, "workload_peak_vram_mb"),
           *v = json_object_get(s, "peak_vram_mb");
    json_t *en = json_object_get(json_object_get(s, "totals"), "energy_wh");
    const char *src = NULL;
    if (json_is_number(w))
        v = w, src = "workload";
    else if (json_is_number(v))
        src = "gpu";
    else
        v = NULL;
    json_object_set_new(e, "has_summary", json_boolean(s != NULL));
    json_object_set_new(e, "gpu_util_mean_pct", json_is_number(u) ? json_copy(u) : json_null());
    json_object_set_new(e, "peak_vram_mb", v ? json_copy(v) : json_null());
    json_object_set_new(e, "peak_vram_source", src ? json_string(src) : json_null());
    json_object_set_new(e, "energy_wh", json_is_number(en) ? json_copy(en) : json_null());
    json_decref(s);
}

struct row {
    json_t *e;
    size_t i;
};
static const char *sort_by;

static double num(const json_t *e, const char *k)
{
    const json_t *v = json_object_get(e, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* --sort: start and status ascending, the figures descending with missing ones last; ties
 * keep the index's order. */
static int cmp_rows(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = 0;
    if (!strcmp(sort_by, "start")) {
        c = strcmp(rm_jget_str(x->e, "started_at"), rm_jget_str(y->e, "started_at"));
    } else if (!strcmp(sort_by, "status")) {
        c = strcmp(rm_jget_str(x->e, "status"), rm_jget_str(y->e, "status"));
    } else {
        const char *k = !strcmp(sort_by, "duration") ? "duration_s"
                        : !strcmp(sort_by, "util")   ? "gpu_util_mean_pct"
                        : !strcmp(sort_by, "vram")   ? "peak_vram_mb"
                                                     : "energy_wh";
        double p = num(x->e, k), q = num(y->e, k);
        if (isnan(p) != isnan(q))
            c = isnan(p) ? 1 : -1;
        else if (!isnan(p) && p != q)
            c = p < q ? 1 : -1;
    }
    if (!c) c = x->i < y->i ? -1 : x->i > y->i;
    return c;
}

static void sort_sessions(json_t *arr)
{
    size_t n = json_array_size(arr), i;
    struct row *r = calloc(n ? n : 1, sizeof *r);
    if (!r) return;
    for (i = 0; i < n; i++)
        r[i].e = json_incref(json_array_get(arr, i)), r[i].i = i;
    qsort(r, n, sizeof *r, cmp_rows);
    json_array_clear(arr);
    for (i = 0; i < n; i++)
        json_array_append_new(arr, r[i].e);
    free(r);
}

/* The status cell: a session whose end could not write all its files is marked '*' (the
 * JSON listing's "unwritten" names them; a note under the text listing says so). */
static const char *status_text(char *buf, size_t cap, const char *status, int unwritten)
{
    snprintf(buf, cap, "%s%s", status, unwritten ? "*" : "");
    return buf;
}

static void print_mark_note(int marked)
{
    if (marked)
        printf("*: the end of the session could not write all its files (the JSON listing's "
               "\"unwritten\" names them)\n");
}

/* The command's words, each escaped, joined by spaces. */
static const char *command_text(char *cmd, size_t cap, const json_t *e)
{
    size_t used = 0, k;
    json_t *a;
    cmd[0] = '\0';
    json_array_foreach(json_object_get(e, "command"), k, a)
    {
        if (k) {
            if (used + 2 > cap) break;
            cmd[used++] = ' ';
            cmd[used] = '\0';
        }
        size_t n = rm_term_escape(cmd + used, cap - used, json_string_value(a));
        if (n >= cap - used) break;
        used += n;
    }
    return cmd[0] ? cmd : "-";
}

/* CSV on a terminal is read by a person there: escaped as the text output is. */
static int csv_tty;

static void csv_cell(const char *s)
{
    rm_csv_put(stdout, s, csv_tty);
}

/* One CSV value: a number in full, a string exact, an array (the command) as its JSON text,
 * null empty. */
static void csv_value(const json_t *v)
{
    if (json_is_integer(v)) {
        printf("%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        printf("%.15g", json_real_value(v));
    } else if (json_is_string(v)) {
        csv_cell(json_string_value(v));
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", stdout);
    } else if (json_is_array(v)) {
        char *t = json_dumps(v, JSON_COMPACT);
        if (t) csv_cell(t);
        free(t);
    }
}

static const char *const csv_cols[] = {
    "session_id",   "status",           "host",      "started_at", "ended_at",
    "duration_s",   "exit_code",        "files",     "bytes",      "gpu_util_mean_pct",
    "peak_vram_mb", "peak_vram_source", "energy_wh", "command",    "signal"};
#define NCSV (sizeof csv_cols / sizeof csv_cols[0])

static void print_csv_header(int figures)
{
    for (size_t c = 0; c < NCSV; c++) {
        if (!figures && c >= 9 && c < 13) continue;
        printf("%s%s", c ? "," : "", csv_cols[c]);
    }
    putchar('\n');
}

static void print_csv_row(const json_t *e, int figures)
{
    for (size_t c = 0; c < NCSV; c++) {
        if (!figures && c >= 9 && c < 13) continue;
        if (c) putchar(',');
        csv_value(json_object_get(e, csv_cols[c]));
    }
    putchar('\n');
}

/* Seconds as 12.3s, 3m05s or 2h03m05s. */
static void human_time(char *b, size_t cap, const json_t *v)
{
    if (!json_is_number(v)) {
        snprintf(b, cap, "-");
        return;
    }
    double d = json_number_value(v);
    long t = lround(d);
    if (d < 59.95)
        snprintf(b, cap, "%.1fs", d);
    else if (t < 3600)
        snprintf(b, cap, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(b, cap, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
}

/* The sweep table (--summary, text). */
static void print_sweep(const json_t *out)
{
    size_t i;
    const json_t *e;
    int idw = 7, any_w = 0;
    char buf[2048];
    json_array_foreach(out, i, e)
    {
        size_t n = rm_term_escape(buf, sizeof buf, rm_jget_str(e, "session_id"));
        if ((int)n > idw) idw = n > 40 ? 40 : (int)n;
    }
    printf("%-*s %-11s %9s %4s %6s %11s %10s  %s\n", idw, "SESSION", "STATUS", "DURATION", "EXIT",
           "UTIL %", "PEAK VRAM", "GPU ENERGY", "COMMAND");
    json_array_foreach(out, i, e)
    {
        char id[512], status[128], st[64], dur[32], ex[32] = "-", util[32] = "-", vram[48] = "-",
                                                    en[48] = "-";
        human_time(dur, sizeof dur, json_object_get(e, "duration_s"));
        const json_t *v = json_object_get(e, "exit_code");
        if (json_is_integer(v)) snprintf(ex, sizeof ex, "%lld", (long long)json_integer_value(v));
        double x = num(e, "gpu_util_mean_pct");
        if (!isnan(x)) snprintf(util, sizeof util, "%.1f", x);
        if (!isnan(x = num(e, "peak_vram_mb"))) {
            int w = !strcmp(rm_jget_str(e, "peak_vram_source"), "workload");
            any_w |= w;
            if (x < 1024)
                snprintf(vram, sizeof vram, "%.0f MiB%s", x, w ? " w" : "");
            else
                snprintf(vram, sizeof vram, "%.1f GiB%s", x / 1024, w ? " w" : "");
        }
        if (!isnan(x = num(e, "energy_wh"))) {
            if (x < 1000)
                snprintf(en, sizeof en, "%.3f Wh", x);
            else
                snprintf(en, sizeof en, "%.2f kWh", x / 1000);
        }
        printf("%s %s %9s %4s %6s %11s %10s  %s\n",
               rm_term_cell(id, sizeof id, rm_jget_str(e, "session_id"), idw, -1),
               rm_term_cell(status, sizeof status,
                            status_text(st, sizeof st, rm_jget_str(e, "status"),
                                        json_object_get(e, "unwritten") != NULL),
                            11, -1),
               dur, ex, util, vram, en, command_text(buf, sizeof buf, e));
    }
    printf("UTIL %%: GPU utilization, mean over GPUs; PEAK VRAM: max over GPUs; GPU ENERGY: sum\n");
    if (any_w) printf("w: the recorded command's own processes (nvidia-smi pmon), else all use\n");
}

static void print_text_header(void)
{
    printf("%-40s %-11s %-16s %-24s %10s %12s  %s\n", "SESSION", "STATUS", "HOST", "STARTED",
           "DURATION", "BYTES", "COMMAND");
}

static void print_text_row(const json_t *e)
{
    /* The words escaped one by one: a newline or an escape sequence in an argument must not
     * break the row or reach the terminal. */
    char cmd[2048];
    json_t *d = json_object_get(e, "duration_s");
    char dur[32] = "-";
    if (json_is_number(d)) snprintf(dur, sizeof dur, "%.1fs", json_number_value(d));
    char id[512], status[128], host[512], started[256], st[64];
    printf("%s %s %s %s %10s %12lld  %s\n",
           rm_term_cell(id, sizeof id, rm_jget_str(e, "session_id"), 40, -1),
           rm_term_cell(status, sizeof status,
                        status_text(st, sizeof st, rm_jget_str(e, "status"),
                                    json_object_get(e, "unwritten") != NULL),
                        11, -1),
           rm_term_cell(host, sizeof host, rm_jget_str(e, "host"), 16, -1),
           rm_term_cell(started, sizeof started, rm_jget_str(e, "started_at"), 24, -1), dur,
           (long long)json_integer_value(json_object_get(e, "bytes")),
           command_text(cmd, sizeof cmd, e));
}

/* One listing, streamed row by row (or collected when it must be sorted). */
struct listing {
    const char *dir, *format;
    int dfd; /* the sink directory, for the per-session folder check */
    const json_t *counters;
    json_t *collect;
    size_t rows;
    int marked; /* a row's status carries the mark of files its end could not write */
};

/* The JSON document, written as json_dumps(JSON_INDENT(2)) would write the whole of it. */
static void print_indented(const json_t *v, const char *pad)
{
    char *t = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
    if (!t) return;
    for (char *p = t; *p; p++) {
        putchar(*p);
        if (*p == '\n') fputs(pad, stdout);
    }
    free(t);
}

static void listing_begin(struct listing *L)
{
    if (!strcmp(L->format, "csv")) {
        print_csv_header(0);
    } else if (!strcmp(L->format, "json")) {
        json_t *d = json_string(L->dir);
        printf("{\n  \"format\": \"runmon-sessions\",\n  \"schema_version\": 1,\n  \"sink_dir\": ");
        print_indented(d, "  ");
        printf(",\n  \"sessions\": [");
        json_decref(d);
    } else {
        print_text_header();
    }
}

static void print_row(struct listing *L, const json_t *e)
{
    if (!strcmp(L->format, "csv")) {
        print_csv_row(e, 0);
    } else if (!strcmp(L->format, "json")) {
        fputs(L->rows ? ",\n    " : "\n    ", stdout);
        print_indented(e, "    ");
    } else {
        print_text_row(e);
    }
    L->rows++;
}

static void listing_end(struct listing *L)
{
    if (strcmp(L->format, "json")) return;
    fputs(L->rows ? "\n  ],\n  \"counters\": " : "],\n  \"counters\": ", stdout);
    print_indented(L->counters, "  ");
    fputs("\n}\n", stdout);
}

/* Seconds from start to end (to now while running), or -1. */
static double rec_duration_s(const struct rm_index_rec *r)
{
    int64_t a, b;
    if (!r->started_at[0] || rm_parse_ts(r->started_at, strlen(r->started_at), &a) != 0) return -1;
    if (!r->ended_at[0])
        b = rm_now_realtime_ns();
    else if (rm_parse_ts(r->ended_at, strlen(r->ended_at), &b) != 0)
        return -1;
    return (double)(b - a) / 1e9;
}

/* A text row straight from the index record (the plain listing: no JSON tree per row). */
static void print_text_rec(const struct rm_index_rec *r, double d, long long bytes)
{
    char cmd[2048], word[2048], dur[32] = "-", id[512], status[128], host[512], started[256],
                                st[64];
    if (d >= 0) snprintf(dur, sizeof dur, "%.1fs", d);
    size_t used = 0, pos = 0;
    cmd[0] = '\0';
    for (int k = 0; rm_index_rec_word(r, &pos, word, sizeof word); k++) {
        if (k) {
            if (used + 2 > sizeof cmd) break;
            cmd[used++] = ' ';
            cmd[used] = '\0';
        }
        size_t n = rm_term_escape(cmd + used, sizeof cmd - used, word);
        if (n >= sizeof cmd - used) break;
        used += n;
    }
    printf("%s %s %s %s %10s %12lld  %s\n", rm_term_cell(id, sizeof id, r->session_id, 40, -1),
           rm_term_cell(status, sizeof status,
                        status_text(st, sizeof st, r->status, r->raw[RM_REC_UNWRITTEN].p != NULL),
                        11, -1),
           rm_term_cell(host, sizeof host, r->host, 16, -1),
           rm_term_cell(started, sizeof started, r->started_at, 24, -1), dur, bytes,
           cmd[0] ? cmd : "-");
}

/* A CSV row straight from the index record. */
static void print_csv_rec(const struct rm_index_rec *r, double d, long long files, long long bytes)
{
    csv_cell(r->session_id);
    putchar(',');
    csv_cell(r->status);
    putchar(',');
    csv_cell(r->host);
    putchar(',');
    csv_cell(r->started_at);
    putchar(',');
    if (r->has_ended) csv_cell(r->ended_at);
    putchar(',');
    if (d >= 0) printf("%.15g", d);
    putchar(',');
    if (r->has_exit) printf("%lld", r->exit_code);
    printf(",%lld,%lld,", files, bytes);
    if (r->command) {
        char *t = strndup(r->command, r->command_len);
        if (t) csv_cell(t);
        free(t);
    }
    putchar(',');
    if (r->signal > 0) printf("%lld", r->signal);
    putchar('\n');
}

/* A real as json_dumps writes it with JSON_REAL_PRECISION(15): %.15g, a ".0" when it would
 * read back as an integer, no "+" or leading zeros in the exponent. */
static void json_real_text(double d)
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
    fputs(out, stdout);
}

static void raw_or_null(const struct rm_index_rec *r, int k)
{
    if (r->raw[k].p)
        fwrite(r->raw[k].p, 1, r->raw[k].n, stdout);
    else
        fputs("null", stdout);
}

/* A JSON row straight from the index record, laid out as json_dumps(JSON_INDENT(2)) lays out
 * the whole document; values are the line's own JSON text. */
static void print_json_rec(struct listing *L, const struct rm_index_rec *r, double d,
                           long long files, long long bytes)
{
    fputs(L->rows ? ",\n    {\n      \"session_id\": " : "\n    {\n      \"session_id\": ", stdout);
    raw_or_null(r, RM_REC_ID);
    fputs(",\n      \"status\": ", stdout);
    raw_or_null(r, RM_REC_STATUS);
    fputs(",\n      \"host\": ", stdout);
    raw_or_null(r, RM_REC_HOST);
    fputs(",\n      \"started_at\": ", stdout);
    raw_or_null(r, RM_REC_STARTED);
    fputs(",\n      \"ended_at\": ", stdout);
    raw_or_null(r, RM_REC_ENDED);
    fputs(",\n      \"duration_s\": ", stdout);
    if (d >= 0)
        json_real_text(d);
    else
        fputs("null", stdout);
    fputs(",\n      \"command\": ", stdout);
    if (!r->command) {
        fputs("null", stdout);
    } else {
        size_t pos = 0, n, k = 0;
        const char *v;
        while (rm_index_rec_element(r, &pos, &v, &n)) {
            fputs(k++ ? ",\n        " : "[\n        ", stdout);
            fwrite(v, 1, n, stdout);
        }
        fputs(k ? "\n      ]" : "[]", stdout);
    }
    fputs(",\n      \"exit_code\": ", stdout);
    raw_or_null(r, RM_REC_EXIT);
    fputs(",\n      \"signal\": ", stdout);
    raw_or_null(r, RM_REC_SIGNAL);
    printf(",\n      \"files\": %lld,\n      \"bytes\": %lld", files, bytes);
    if (r->raw[RM_REC_UNWRITTEN].p) { /* laid out as json_dumps(JSON_INDENT(2)) would */
        json_t *u = json_loadb(r->raw[RM_REC_UNWRITTEN].p, r->raw[RM_REC_UNWRITTEN].n, 0, NULL);
        fputs(",\n      \"unwritten\": ", stdout);
        print_indented(u, "      ");
        json_decref(u);
    }
    fputs("\n    }", stdout);
    L->rows++;
}

static int list_rec(struct listing *L, const struct rm_index_rec *r);

/* One session of the index. A session whose line says running but whose recorder is dead
 * is listed as recovery ends it (and mended, when the sink can be written: rm_sink_settle),
 * never as running. */
static int list_one(void *ctx, const struct rm_index_rec *r)
{
    struct listing *L = ctx;
    json_t *now = rm_sink_settle(L->dir, r);
    if (!now) return list_rec(L, r);
    char *text = json_dumps(now, JSON_COMPACT);
    json_decref(now);
    struct rm_index_rec settled;
    int rc = text && rm_index_rec_parse(text, strlen(text), &settled) ? list_rec(L, &settled)
                                                                      : list_rec(L, r);
    free(text);
    return rc;
}

/* One session's row (a running session's files and bytes from its state.json, which its
 * recorder keeps current; the index has them as of its last line). */
static int list_rec(struct listing *L, const struct rm_index_rec *r)
{
    const char *id = r->session_id;
    char why[4096 + 512];
    if (!rm_sink_session_ok_at(L->dfd, L->dir, id, why, sizeof why)) {
        fputs("runmon: ", stderr);
        rm_fput_safe(stderr, why);
        fputs(", ignored\n", stderr);
        return 0;
    }
    long long files = r->files, bytes = r->bytes;
    json_t *doc = NULL;
    if (!strcmp(r->status, "running") && rm_state_load(L->dir, id, &doc) == 0) {
        json_t *now = rm_index_line(doc, "now");
        files = json_integer_value(json_object_get(now, "files"));
        bytes = json_integer_value(json_object_get(now, "bytes"));
        json_decref(now);
    }
    json_decref(doc);
    double d = rec_duration_s(r);
    if (r->raw[RM_REC_UNWRITTEN].p) L->marked = 1;
    if (!L->collect && !strcmp(L->format, "text")) {
        print_text_rec(r, d, bytes);
        L->rows++;
        return 0;
    }
    if (!L->collect && !strcmp(L->format, "csv")) {
        print_csv_rec(r, d, files, bytes);
        L->rows++;
        return 0;
    }
    if (!L->collect) {
        print_json_rec(L, r, d, files, bytes);
        return 0;
    }
    json_t *e = json_loadb(r->line, r->len, 0, NULL);
    if (!json_is_object(e)) {
        json_decref(e);
        return 0;
    }
    json_t *ea = json_object_get(e, "ended_at"), *cmd = json_object_get(e, "command"),
           *ex = json_object_get(e, "exit_code"), *st = json_object_get(e, "status"),
           *host = json_object_get(e, "host"), *sa = json_object_get(e, "started_at"),
           *sig = json_object_get(e, "signal");
    json_t *row =
        json_pack("{s:s,s:O,s:O,s:O,s:O,s:o,s:O,s:O,s:O,s:I,s:I}", "session_id", id, "status",
                  st ? st : json_null(), "host", host ? host : json_null(), "started_at",
                  sa ? sa : json_null(), "ended_at", ea ? ea : json_null(), "duration_s",
                  d >= 0 ? json_real(d) : json_null(), "command", cmd ? cmd : json_null(),
                  "exit_code", ex ? ex : json_null(), "signal", sig ? sig : json_null(), "files",
                  (json_int_t)files, "bytes", (json_int_t)bytes);
    json_t *unw = json_object_get(e, "unwritten");
    if (row && json_array_size(unw)) json_object_set(row, "unwritten", unw);
    json_decref(e);
    if (!row) return 0;
    if (L->collect)
        json_array_append_new(L->collect, row);
    else {
        print_row(L, row);
        json_decref(row);
    }
    return 0;
}

int rm_cmd_sessions(int argc, char **argv)
{
    enum { OPT_FORMAT = 256, OPT_REBUILD, OPT_SUMMARY, OPT_SORT };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"sort", required_argument, NULL, OPT_SORT},
        {"rebuild", no_argument, NULL, OPT_REBUILD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL;
    int rebuild = 0, summary = 0, c;
    sort_by = NULL;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_FORMAT:
            format = optarg;
            if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv")) {
                fprintf(stderr, "runmon sessions: --format must be text, json or csv\n");
                return 2;
            }
            break;
        case OPT_SUMMARY:
            summary = 1;
            break;
        case OPT_SORT: {
            size_t k, n = sizeof sort_fields / sizeof sort_fields[0];
            for (k = 0; k < n && strcmp(optarg, sort_fields[k]); k++)
                ;
            if (k == n) {
                fputs("runmon sessions: unknown --sort field '", stderr);
                rm_fput_safe(stderr, optarg);
                fputs("'; one of: start, duration, util, vram, energy, status\n", stderr);
                return 2;
            }
            sort_by = sort_fields[k];
            break;
        }
        case OPT_REBUILD:
            rebuild = 1;
            break;
        default:
            fprintf(stderr, "runmon sessions: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind != 1) {
        usage(stderr);
        return 2;
    }
    const char *dir = argv[optind];
    if (!format) format = isatty(1) ? "text" : "json";
    csv_tty = isatty(STDOUT_FILENO);
    char err[1024];
    int orc = rm_sink_open_index(dir, rebuild, NULL, err, sizeof err);
    if (orc < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    if (orc == 1) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, dir);
        fputs(": not a runmon sink (no index.jsonl, no sessions)\n", stderr);
        return 2;
    }
    /* The figures when shown, or when the sort needs them. */
    int figures = summary || (sort_by && (!strcmp(sort_by, "util") || !strcmp(sort_by, "vram") ||
                                          !strcmp(sort_by, "energy")));
    struct listing L = {.dir = dir, .format = format};
    L.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    json_t *tot = NULL;
    if (rm_totals_load(dir, &tot) != 0) tot = rm_totals_new();
    L.counters = json_object_get(tot, "counters");
    /* Sorting and the sweep table need every row; the plain listing streams the index. */
    L.collect = figures || sort_by || summary ? json_array() : NULL;
    if (!L.collect) listing_begin(&L);
    int irc = rm_index_each(dir, list_one, &L, err, sizeof err);
    if (L.dfd >= 0) close(L.dfd);
    if (irc < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        json_decref(L.collect);
        json_decref(tot);
        return 2;
    }
    if (!L.collect) {
        listing_end(&L);
        if (!strcmp(format, "text")) print_mark_note(L.marked);
        json_decref(tot);
        return 0;
    }
    json_t *out = L.collect;
    size_t i;
    json_t *e;
    if (figures) json_array_foreach(out, i, e) add_figures(dir, e);
    if (sort_by) sort_sessions(out);
    if (!strcmp(format, "csv")) {
        print_csv_header(figures);
        json_array_foreach(out, i, e) print_csv_row(e, figures);
    } else if (!strcmp(format, "json")) {
        L.collect = NULL;
        listing_begin(&L);
        json_array_foreach(out, i, e) print_row(&L, e);
        listing_end(&L);
    } else if (summary) {
        print_sweep(out);
        print_mark_note(L.marked);
    } else {
        print_text_header();
        json_array_foreach(out, i, e) print_text_row(e);
        print_mark_note(L.marked);
    }
    json_decref(out);
    json_decref(tot);
    return 0;
}
