/* The summary as text for a terminal, CSV rows, or JSON. All three read the JSON object, so
 * a summary.json written earlier prints the same way. The text form escapes every string that
 * came from outside (a host, a GPU or process name, a phase path, nvidia-smi's words, a file
 * name: base/termsafe.h), and so does CSV written to a terminal; JSON, and CSV to a file or a
 * pipe, keep them exact. */
#include "report/output.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/csvwrite.h"
#include "base/termsafe.h"
#include "model/figures.h"
#include "model/objective.h"
#include "model/objects.h"
#include "model/session.h"
#include "summary/objects.h"

static const json_t *at(const json_t *o, const char *path)
{
    /* "a.b.c": nested object lookup. */
    char key[64];
    const json_t *v = o;
    while (v && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        v = json_object_get(v, key);
        path += n + (dot != NULL);
    }
    return v;
}

/* Number v with the given decimals, or "-" when missing. */
static const char *fmt_v(const json_t *v, int dec)
{
    /* A ring of buffers so one printf can take many formatted numbers. */
    static _Thread_local char ring[24][32];
    static _Thread_local unsigned next;
    if (!json_is_number(v)) return "-";
    char *buf = ring[next++ % 24];
    snprintf(buf, sizeof ring[0], "%.*f", dec, json_number_value(v));
    return buf;
}

/* The number at path of o with the given decimals, or "-" when missing. */
static const char *fmt(const json_t *o, const char *path, int dec)
{
    return fmt_v(at(o, path), dec);
}

/* The run's energy and its bar (docs/ENERGY.md) as the Totals line shows it: "0.174 Wh (0.174
 * to 0.180; 0.03 s unsampled)"; "?" for a top that is unknown (time no sample covered, no power
 * limit recorded); "-" without an interval. */
static const char *energy_text(char *b, size_t cap, const json_t *t)
{
    const json_t *e = json_object_get(t, RM_FIG_KEY(ENERGY)),
                 *lo = json_object_get(t, RM_FIG_KEY(ENERGY_LOW)),
                 *hi = json_object_get(t, RM_FIG_KEY(ENERGY_HIGH)),
                 *un = json_object_get(t, RM_FIG_KEY(ENERGY_UNCOVERED));
    char partly[64] = "";
    if (json_is_number(un) && json_number_value(un) >= 0.005)
        snprintf(partly, sizeof partly, "; %.2f s unsampled", json_number_value(un));
    if (!json_is_number(lo)) {
        snprintf(b, cap, "%s Wh", fmt(t, RM_FIG_KEY(ENERGY), 3));
        return b;
    }
    snprintf(b, cap, "%s Wh (%s to %s%s)", json_is_number(e) ? fmt(t, RM_FIG_KEY(ENERGY), 3) : "-",
             fmt(t, RM_FIG_KEY(ENERGY_LOW), 3),
             json_is_number(hi) ? fmt(t, RM_FIG_KEY(ENERGY_HIGH), 3) : "?", partly);
    return b;
}

/* ---- the objects of model/objects.h (cpu, proc, io, stall): the lines under Totals and a
 * table by phase of each object the table shows, from its rows; nothing for a summary without
 * an object (the host's, always written, show "-") --------------------------------------- */

/* Row f's value in in (what holds its object) at its text decimals; false when its row shows
 * only values above 0 and this one is not. */
static bool obj_value(const json_t *in, int f, const char **v)
{
    const struct rm_obj_figure *r = &rm_obj_figures[f];
    const json_t *x = rm_obj_at(in, f);
    if (r->text.if_positive && !(json_is_number(x) && json_number_value(x) > 0)) return false;
    *v = fmt_v(x, r->text.dec);
    return true;
}

static void print_obj_totals(FILE *out, const json_t *summary, int k)
{
    const struct rm_object *ob = &rm_objects[k];
    const json_t *in = rm_obj_holder(summary, k);
    if (!ob->text.lead || (!ob->host && !json_is_object(json_object_get(in, ob->key)))) return;
    for (int line = 1, first = 1;; line++) {
        if (rm_obj_text_at(k, line, 1) < 0) break;
        bool any = false;
        for (int pos = 1, f; (f = rm_obj_text_at(k, line, pos)) >= 0; pos++) {
            const struct rm_obj_figure *r = &rm_obj_figures[f];
            const char *v;
            if (!obj_value(in, f, &v)) continue;
            if (!any) /* the first line's lead, the others' as many spaces */
                fprintf(out, "%*s", first ? 0 : (int)strlen(ob->text.lead),
                        first ? ob->text.lead : "");
            any = true, first = 0;
            fprintf(out, "%s%s%s", r->text.pre, v, r->text.post);
        }
        if (any) fputc('\n', out);
    }
}

/* The lines of the objects in "totals" (the host's), or of those at the document's top. */
static void print_objs_totals(FILE *out, const json_t *summary, bool in_totals)
{
    for (int k = 0; k < RM_OBJ_COUNT; k++)
        if (rm_objects[k].in_totals == in_totals) print_obj_totals(out, summary, k);
}

/* Whether object k has a table by phase and this phase row has the object. */
static bool obj_phase_has(int k, const json_t *phase)
{
    return rm_objects[k].text.phase_title && rm_obj_phases_at(k, 1) >= 0 &&
           json_is_object(json_object_get(phase, rm_objects[k].key));
}

static void print_obj_phase_title(FILE *out, int k)
{
    fprintf(out, "%s  %-30s", rm_objects[k].text.phase_title, "PATH");
    for (int c = 1, f; (f = rm_obj_phases_at(k, c)) >= 0; c++)
        fprintf(out, " %*s", rm_obj_figures[f].phases.width, rm_obj_figures[f].phases.head);
    fputc('\n', out);
}

static void print_obj_phase_line(FILE *out, int k, const json_t *p)
{
    const json_t *o = json_object_get(p, rm_objects[k].key);
    if (!json_is_object(o)) return;
    const json_t *path = json_object_get(p, "path");
    char cbuf[1024];
    fprintf(out, "  %s",
            rm_term_cell(cbuf, sizeof cbuf, json_is_string(path) ? json_string_value(path) : "-",
                         30, 30));
    for (int c = 1, f; (f = rm_obj_phases_at(k, c)) >= 0; c++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        fprintf(out, " %*s", r->phases.width, fmt(o, r->key, r->phases.dec));
    }
    fputc('\n', out);
}

static void print_objs_phases(FILE *out, const json_t *phases)
{
    for (int k = 0; k < RM_OBJ_COUNT; k++) {
        size_t i;
        const json_t *p;
        bool any = false;
        json_array_foreach(phases, i, p) any |= obj_phase_has(k, p);
        if (!any) continue;
        print_obj_phase_title(out, k);
        json_array_foreach(phases, i, p) print_obj_phase_line(out, k, p);
    }
}

static const char *str(const json_t *o, const char *path)
{
    const json_t *v = at(o, path);
    return json_is_string(v) ? json_string_value(v) : "-";
}

/* str() escaped for a terminal, cut to maxcols characters (< 0: no cut) and padded to width;
 * a ring of buffers as fmt() has, so one printf can take several. */
static const char *cell(const json_t *o, const char *path, int width, int maxcols)
{
    static _Thread_local char ring[8][1024];
    static _Thread_local unsigned next;
    return rm_term_cell(ring[next++ % 8], sizeof ring[0], str(o, path), width, maxcols);
}

int rm_summary_print_json(FILE *out, const json_t *summary)
{
    if (json_dumpf(summary, out, JSON_INDENT(2) | JSON_REAL_PRECISION(15))) return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

/* ---- JSON with the phase rows streamed ------------------------------------------------ */

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY)

struct indented {
    FILE *out;
    const char *pad; /* written after each newline: the value's depth in the document */
};

/* json_dump_callback's sink: a newline in the dump is always the layout's (strings escape
 * theirs), so padding after each one nests the value as json_dumpf of the whole would. */
static int put_indented(const char *buf, size_t size, void *data)
{
    const struct indented *in = data;
    for (size_t i = 0; i < size; i++) {
        if (putc(buf[i], in->out) == EOF) return -1;
        if (buf[i] == '\n' && fputs(in->pad, in->out) == EOF) return -1;
    }
    return 0;
}

static void dump_at(struct rm_json_stream *st, const json_t *v, const char *pad)
{
    struct indented in = {st->out, pad};
    if (json_dump_callback(v, put_indented, &in, DUMP_FLAGS)) st->failed = true;
}

/* The top-level keys of doc not yet written, up to and opening "phases" (all when to_end). */
static void write_keys(struct rm_json_stream *st, const json_t *doc, bool to_end)
{
    size_t i = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)doc, key, v)
    {
        if (i++ < st->keys) continue;
        fputs(st->keys ? ",\n  " : "{\n  ", st->out);
        json_t *k = json_string(key);
        dump_at(st, k, "");
        json_decref(k);
        fputs(": ", st->out);
        st->keys++;
        if (!strcmp(key, "phases")) {
            fputc('[', st->out);
            st->in_phases = true;
            if (!to_end) return;
            fputs(st->rows ? "\n  ]" : "]", st->out);
            continue;
        }
        dump_at(st, v, "  ");
    }
}

void rm_summary_stream_row(void *ctx, const json_t *doc, json_t *row)
{
    struct rm_json_stream *st = ctx;
    if (!st->in_phases) write_keys(st, doc, false);
    fputs(st->rows++ ? ",\n    " : "\n    ", st->out);
    dump_at(st, row, "    ");
    json_decref(row);
}

int rm_summary_stream_end(struct rm_json_stream *st, const json_t *summary)
{
    if (st->in_phases) {
        /* "phases" is open: close it, then the keys after it. */
        fputs(st->rows ? "\n  ]" : "]", st->out);
        st->rows = 0;
    }
    write_keys(st, summary, true);
    fputs(st->keys ? "\n}\n" : "{}\n", st->out);
    return st->failed || ferror(st->out) ? -1 : 0;
}

#define F(p, d) fmt(g, p, d)

/* A text cell of GPU g: the figures of text column col (model/figures.h) joined by "/", and
 * the column's mark for a MIG instance. */
static const char *text_cell(char *b, size_t cap, const json_t *g, int col, bool mig)
{
    size_t used = 0;
    b[0] = '\0';
    for (int pos = 1, f; used < cap && (f = rm_fig_text_at(col, pos)) >= 0; pos++)
        used += (size_t)snprintf(b + used, cap - used, "%s%s", pos > 1 ? "/" : "",
                                 F(rm_figures[f].key, rm_figures[f].text.dec));
    if (used < cap && mig && rm_fig_text_cols[col].mig_mark) snprintf(b + used, cap - used, "*");
    return b;
}

/* The table's two header lines after GPU and NAME: the columns' heads, then their subs. */
static void print_gpu_heads(FILE *out, const char *indent, bool sub)
{
    fprintf(out, "%s%-3s %-18s", indent, sub ? "" : "GPU", sub ? "" : "NAME");
    for (int col = RM_FIG_COL_NONE + 1; col < RM_FIG_COL_COUNT; col++)
        fprintf(out, " %*s", rm_fig_text_cols[col].width,
                sub ? rm_fig_text_cols[col].sub : rm_fig_text_cols[col].head);
    fputc('\n', out);
}

/* The GPU table: at most 100 columns (names past 18 characters are cut; a leading "NVIDIA "
 * is left out, as every GPU nvidia-smi reports is one), every column with its unit. Its
 * columns are model/figures.c's text columns. */
static void print_gpu_table(FILE *out, const json_t *gpus, const char *indent)
{
    print_gpu_heads(out, indent, false);
    print_gpu_heads(out, indent, true);
    size_t i;
    const json_t *g;
    bool any_mig = false;
    json_array_foreach(gpus, i, g)
    {
        const json_t *ix = json_object_get(g, "index");
        char ixs[16];
        snprintf(ixs, sizeof ixs, "%s", json_is_integer(ix) ? "" : "?");
        if (json_is_integer(ix))
            snprintf(ixs, sizeof ixs, "%lld", (long long)json_integer_value(ix));
        const char *name = str(g, "name");
        if (!strncmp(name, "NVIDIA ", 7) && name[7]) name += 7;
        char namec[1024], cellb[128];
        bool mig = json_is_true(json_object_get(g, "mig_instance"));
        any_mig |= mig;
        fprintf(out, "%s%-3s %s", indent, ixs, rm_term_cell(namec, sizeof namec, name, 18, 18));
        for (int col = RM_FIG_COL_NONE + 1; col < RM_FIG_COL_COUNT; col++)
            fprintf(out, " %*s", rm_fig_text_cols[col].width,
                    text_cell(cellb, sizeof cellb, g, col, mig));
        fputc('\n', out);
    }
    if (any_mig)
        fprintf(out, "%s* MIG instance: the whole GPU's power and energy, counted once in sums\n",
                indent);
    fprintf(out,
            "%sMEMCTL: memory-controller busy time (nvidia-smi utilization.memory, dmon mem),"
            " not VRAM use\n",
            indent);
}

static void print_process_title(FILE *out, const char *title)
{
    fprintf(out, "\n%s\n", title);
    fprintf(out, "  %-4s %8s %-16s %8s %9s %9s\n", "GPU", "PID", "NAME", "WORKLOAD", "PEAK MiB",
            "SM% mean");
}

static void print_process_rows(FILE *out, const json_t *procs)
{
    size_t k;
    const json_t *p;
    json_array_foreach(procs, k, p)
    {
        const json_t *w = json_object_get(p, "in_workload");
        fprintf(out, "  %-4s %8s %s %8s %9s %9s\n", fmt(p, "gpu", 0), fmt(p, "pid", 0),
                cell(p, "name", 16, 16),
                json_is_true(w)    ? "yes"
                : json_is_false(w) ? "no"
                                   : "unknown",
                fmt(p, "peak_mb", 0), fmt(p, "sm_pct_mean", 1));
    }
}

/* The processes of GPUs without GPU samples (a lone pmon, compute-apps or apps.csv file). */
static void print_unplaced_processes(FILE *out, const json_t *s)
{
    const json_t *procs = json_object_get(s, "processes");
    if (!json_is_array(procs)) return;
    print_process_title(out, "Processes (nvidia-smi's per-process output; no GPU samples)");
    print_process_rows(out, procs);
    if (!json_array_size(procs)) fprintf(out, "  none: the GPUs ran no process\n");
}

/* The workload's own processes (apps.csv), when the session had the per-process collector. */
/* A GPU's workload VRAM, with its basis where some memory has no process runmon can place:
 * unattributed ("-", never 0) or assumed the workload's (summary/build.c). */
static void print_workload_vram(FILE *out, const json_t *g)
{
    const char *basis = json_string_value(json_object_get(g, "workload_vram_basis"));
    fprintf(out, "  GPU %s: workload VRAM peak ", fmt(g, "index", 0));
    /* no process listed at all (nvidia-smi inside a container): the device's memory.used */
    const json_t *u = json_object_get(json_object_get(g, "unknown_vram_mb"), "peak");
    bool unlisted = basis && !(json_is_number(u) && json_number_value(u) > 0);
    if (basis && !strcmp(basis, "unattributed"))
        fprintf(out, "- (%s MiB on GPU %s unattributed: %s)",
                fmt(g, unlisted ? "vram_mb.peak" : "unknown_vram_mb.peak", 0), fmt(g, "index", 0),
                unlisted ? "nvidia-smi listed no process"
                         : "processes not in runmon's PID namespace");
    else
        fprintf(out, "%s MiB, mean %s MiB", fmt(g, "workload_vram_mb.peak", 0),
                fmt(g, "workload_vram_mb.mean", 1));
    if (basis && !strcmp(basis, "assumed"))
        fprintf(out,
                " (assumed the workload's: %s, on the job's own GPU with no other process seen)",
                unlisted ? "the GPU's memory used while nvidia-smi listed no process"
                         : "processes not in runmon's PID namespace");
    fprintf(out, "; other processes peak %s MiB\n", fmt(g, "other_vram_mb.peak", 0));
}

static void print_processes(FILE *out, const json_t *gpus)
{
    size_t i;
    const json_t *g;
    int any = 0;
    json_array_foreach(gpus, i, g) any |= json_is_array(json_object_get(g, "processes"));
    if (!any) return;
    print_process_title(
        out, "Processes (nvidia-smi pmon; workload: the recorded command's process tree)");
    json_array_foreach(gpus, i, g)
    {
        print_process_rows(out, json_object_get(g, "processes"));
        if (json_is_object(json_object_get(g, RM_GPU_WORKLOAD_VRAM))) print_workload_vram(out, g);
    }
}

/* ---- text: the part before the phases, each phase row, the part after ------------------ */

/* Whether a phase row has memory figures (then the "Memory by phase" table is printed). */
static bool phase_has_memory(const json_t *p)
{
    size_t k;
    const json_t *x;
    bool any = json_is_object(json_object_get(p, RM_RUN_KEY(FRAMEWORK_PEAK)));
    json_array_foreach(json_object_get(p, "gpus"), k, x) any |=
        json_is_object(json_object_get(x, RM_GPU_WORKLOAD_VRAM));
    return any;
}

static void print_memory_title(FILE *out)
{
    fprintf(out,
            "\nMemory by phase (MiB; workload: max over GPUs of nvidia-smi's per-process sum)\n");
    fprintf(out, "  %-40s %14s %14s %15s\n", "PATH", "WORKLOAD PEAK", "WORKLOAD MEAN",
            "FRAMEWORK PEAK");
}

/* Per phase: the workload's VRAM as nvidia-smi saw it, and the framework's own peak. */
static void print_memory_line(FILE *out, const json_t *p)
{
    size_t k;
    const json_t *x;
    double peak = NAN, mean = NAN;
    json_array_foreach(json_object_get(p, "gpus"), k, x)
    {
        const json_t *v = at(x, "workload_vram_mb.peak"), *m = at(x, "workload_vram_mb.mean");
        if (json_is_number(v) && (isnan(peak) || json_number_value(v) > peak))
            peak = json_number_value(v);
        if (json_is_number(m) && (isnan(mean) || json_number_value(m) > mean))
            mean = json_number_value(m);
    }
    char ps[32] = "-", ms[32] = "-";
    if (!isnan(peak)) snprintf(ps, sizeof ps, "%.0f", peak);
    if (!isnan(mean)) snprintf(ms, sizeof ms, "%.1f", mean);
    fprintf(out, "  %s %14s %14s %15s\n", cell(p, "path", 40, 40), ps, ms,
            fmt(p, "framework_peak_mb.max", 0));
}

/* text after first, cut at blanks into lines of at most 100 columns, the next ones after
 * indent (a word longer than a line is not cut). */
static void print_wrapped(FILE *out, const char *first, const char *indent, const char *text)
{
    const char *pad = first;
    while (*text) {
        size_t room = 100 - strlen(pad), n = strlen(text);
        if (n > room) {
            n = room;
            while (n && text[n] != ' ')
                n--;
            if (!n) n = strcspn(text, " ");
        }
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), text);
        fputs(pad, out);
        rm_fput_safe(out, line);
        fputc('\n', out);
        text += n;
        while (*text == ' ')
            text++;
        pad = indent;
    }
}

/* A metric's value in the metrics block: 6 significant digits, "-" when absent. */
static const char *metric_num(char *b, size_t cap, const json_t *m, const char *key)
{
    const json_t *v = json_object_get(m, key);
    if (!json_is_number(v)) return "-";
    snprintf(b, cap, "%.6g", json_number_value(v));
    return b;
}

#define RM_TEXT_METRICS_MAX 20

/* The run's metrics (summary.json "metrics"), a line each, the first RM_TEXT_METRICS_MAX;
 * and the objectives the run log named. Nothing for a run that logged none. */
static void print_metrics(FILE *out, const json_t *s)
{
    const json_t *ms = json_object_get(s, "metrics");
    if (!json_object_size(ms)) return;
    fprintf(out, "\nMetrics (the run log's metric lines; steps first-last)\n  %-24s", "NAME");
    for (int c = 1, f; (f = rm_metric_field_text_at(c, 1)) >= 0; c++)
        fprintf(out, " %*s", rm_metric_fields[f].text.width, rm_metric_fields[f].text.head);
    fputc('\n', out);
    const char *k;
    const json_t *m;
    size_t shown = 0;
    json_object_foreach((json_t *)ms, k, m)
    {
        if (shown++ == RM_TEXT_METRICS_MAX) break;
        char name[256], cell[96], v[32];
        fprintf(out, "  %s", rm_term_cell(name, sizeof name, k, 24, 24));
        for (int c = 1, f; (f = rm_metric_field_text_at(c, 1)) >= 0; c++) {
            size_t n = 0;
            for (int p = 1, g; n < sizeof cell && (g = rm_metric_field_text_at(c, p)) >= 0; p++)
                n += (size_t)snprintf(cell + n, sizeof cell - n, "%s%s", p > 1 ? "-" : "",
                                      metric_num(v, sizeof v, m, rm_metric_fields[g].key));
            fprintf(out, " %*s", rm_metric_fields[f].text.width, cell);
        }
        fputc('\n', out);
    }
    if (json_object_size(ms) > RM_TEXT_METRICS_MAX)
        fprintf(out, "  ... and %zu more (summary.json has them all)\n",
                json_object_size(ms) - RM_TEXT_METRICS_MAX);
    const json_t *objs = json_object_get(s, "objectives");
    if (!json_array_size(objs)) return;
    fputs("  objectives:", out);
    size_t i;
    const json_t *o;
    json_array_foreach(objs, i, o)
    {
        fputc(' ', out);
        rm_fput_safe(out, str(o, "metric"));
        fprintf(out, ":%s%s", cell(o, "goal", 0, -1),
                json_is_string(json_object_get(o, "pick")) && !strcmp(str(o, "pick"), "best")
                    ? ":best"
                    : "");
    }
    fputc('\n', out);
}

/* The summary's first line (path: the document's "path", or the caller's when it has none
 * yet), the session, the GPUs and the totals. */
static void print_head(FILE *out, const json_t *s, const char *path)
{
    const json_t *g = s;
    const json_t *ses = json_object_get(s, "session");
    fputs("runmon summary", out);
    if (json_is_string(json_object_get(s, "path")))
        path = json_string_value(json_object_get(s, "path"));
    if (path) {
        fputs(": ", out);
        rm_fput_safe(out, path);
    }
    fputc('\n', out);
    if (json_is_object(ses)) {
        g = ses;
        /* "interrupted (SIGTERM)" when a signal stopped the run */
        const json_t *sig = json_object_get(ses, "signal");
        char st[128], stc[512];
        rm_session_status_text(st, sizeof st, str(ses, "status"),
                               json_is_integer(sig) ? json_integer_value(sig) : 0);
        fprintf(out, "session %s  status %s  host %s  duration %s s  exit %s\n",
                cell(ses, "id", 0, -1), rm_term_cell(stc, sizeof stc, st, 0, -1),
                cell(ses, "host", 0, -1), F("duration_s", 1), F("exit_code", 0));
        g = s;
    }
    const json_t *gpus = json_object_get(s, "gpus");
    int has_gpus = json_array_size(gpus) > 0;
    if (has_gpus) {
        fprintf(out, "\nGPUs\n");
        print_gpu_table(out, gpus, "  ");
        print_processes(out, gpus);
    } else {
        fprintf(out, "\nGPUs: none recorded (no GPU collector data)\n");
    }
    print_unplaced_processes(out, s);
    const json_t *t = json_object_get(s, "totals");
    g = t;
    fprintf(out, "\nTotals\n");
    char et[160];
    if (has_gpus)
        fprintf(out, "  GPU power (sum over GPUs) mean %s W  max %s W\n  GPU energy %s\n",
                F("power_w.mean", 1), F("power_w.max", 1), energy_text(et, sizeof et, t));
    print_objs_totals(out, s, true); /* the CPU % line */
    /* the host's memory and the process tree's figures on one line: read by key */
    fprintf(
        out,
        "  host memory peak %s MiB   process tree: RSS peak %s MiB  CPU mean %s %%  max %s %%\n",
        fmt_v(rm_obj_at(t, RM_OF_CPU_HOST_MEM_PEAK), 0),
        fmt_v(rm_obj_at(t, RM_OF_PROC_RSS_PEAK), 1), fmt_v(rm_obj_at(t, RM_OF_PROC_CPU_MEAN), 1),
        fmt_v(rm_obj_at(t, RM_OF_PROC_CPU_MAX), 1));
    print_objs_totals(out, s, false);
    print_metrics(out, s);
}

static void print_phase_title(FILE *out)
{
    fprintf(out,
            "\nPhases (UTIL: mean over the phase's GPUs; POWER, ENERGY: sum over them;"
            " ~ short phase)\n"
            "  %-30s %5s %9s %11s %6s %8s %9s %9s\n",
            "PATH", "COUNT", "TIME s", "ok/err/open", "UTIL %", "POWER W", "ENERGY Wh",
            "CPU usr %");
}

static void print_phase_line(FILE *out, const json_t *p)
{
    const json_t *g = p;
    char st[48];
    snprintf(st, sizeof st, "%s/%s/%s", F("status.ok", 0), F("status.error", 0),
             F("status.unterminated", 0));
    /* Over the phase's GPUs: mean utilization, summed power and energy. */
    const json_t *pg = json_object_get(p, "gpus");
    double util = 0, pw = 0;
    int nu = 0, np = 0;
    size_t k;
    const json_t *x;
    json_array_foreach(pg, k, x)
    {
        const json_t *v;
        if (json_is_number(v = at(x, "util_pct.mean"))) util += json_number_value(v), nu++;
        if (json_is_number(v = at(x, "power_w.mean"))) pw += json_number_value(v), np++;
    }
    char us[32] = "-", ps[32] = "-", es[32] = "-";
    if (nu) snprintf(us, sizeof us, "%.1f", util / nu);
    if (np) snprintf(ps, sizeof ps, "%.1f", pw);
    /* The phase's own sum (MIG instances of one GPU counted once); ~ a short phase,
     * whose energy is mostly the sensor's smear. */
    const json_t *ev = json_object_get(p, RM_FIG_KEY(ENERGY));
    if (json_is_number(ev))
        snprintf(es, sizeof es, "%.3f%s", json_number_value(ev),
                 json_is_true(json_object_get(p, "short_phase")) ? "~" : "");
    fprintf(out, "  %s %5s %9s %11s %6s %8s %9s %9s\n", cell(p, "path", 30, 30), F("count", 0),
            F("total_seconds", 3), st, us, ps, es, fmt_v(rm_obj_at(p, RM_OF_CPU_USR_MEAN), 1));
    /* What held the phase back: a line per finding (summary/held.h), none when no rule
     * fired. */
    const json_t *f;
    json_array_foreach(json_object_get(p, "held_back_by"), k, f)
        print_wrapped(out, "    held back by ", "      ", str(f, "text"));
}

/* Collectors, alerts and data quality: the keys after "phases". */
static void print_tail(FILE *out, const json_t *s)
{
    const json_t *g;
    const json_t *col = json_object_get(s, "collectors");
    if (json_object_size(col)) {
        fprintf(out, "\nCollectors\n");
        const char *k;
        const json_t *c;
        json_object_foreach((json_t *)col, k, c)
        {
            g = c;
            char name[64];
            fprintf(out, "  %s %s failures %s", rm_term_cell(name, sizeof name, k, 5, -1),
                    cell(c, "health", 11, -1), F("failure_event_count", 0));
            if (json_is_string(json_object_get(c, "last_error"))) {
                fputs("  last error: ", out);
                rm_fput_safe(out, str(c, "last_error"));
            }
            fputc('\n', out);
        }
    }
    g = json_object_get(s, "alerts");
    fprintf(out, "\nAlerts: %s warning, %s critical\n", F("warning", 0), F("critical", 0));
    const json_t *dq = json_object_get(s, "data_quality");
    g = dq;
    fprintf(out, "\nData quality: %s rows read; skipped:", F("rows_read", 0));
    const char *k;
    const json_t *v;
    int any = 0;
    json_object_foreach((json_t *)json_object_get(dq, "rows_skipped"), k, v)
    {
        if (json_integer_value(v)) {
            fputc(' ', out);
            rm_fput_safe(out, k);
            fprintf(out, " %lld", (long long)json_integer_value(v));
            any = 1;
        }
    }
    fprintf(out, "%s\n  gaps %s (%s s)  coverage %s of %s s", any ? "" : " none",
            F("gaps.count", 0), F("gaps.seconds", 1), F("coverage", 3), F("session_seconds", 1));
    if (json_array_size(json_object_get(s, "gpus")) > 1 &&
        json_is_integer(json_object_get(dq, "coverage_gpu")))
        fprintf(out, " (the worst of %zu GPUs: GPU %s)",
                json_array_size(json_object_get(s, "gpus")), F("coverage_gpu", 0));
    fputc('\n', out);
    g = json_object_get(dq, "runlog");
    if (json_integer_value(json_object_get(g, "lines")))
        fprintf(out, "  run log: %s lines, %s torn, %s garbage\n", F("lines", 0), F("torn_line", 0),
                F("garbage", 0));
    size_t i;
    json_array_foreach(json_object_get(dq, "notes"), i, v)
    {
        fputs("  note: ", out);
        rm_fput_safe(out, json_string_value(v));
        fputc('\n', out);
    }
}

static void print_one_at(FILE *out, const json_t *s, const char *path)
{
    print_head(out, s, path);
    const json_t *phases = json_object_get(s, "phases");
    size_t i;
    const json_t *p;
    bool memory = false;
    if (json_array_size(phases)) print_phase_title(out);
    json_array_foreach(phases, i, p)
    {
        print_phase_line(out, p);
        memory |= phase_has_memory(p);
    }
    if (memory) {
        print_memory_title(out);
        json_array_foreach(phases, i, p) print_memory_line(out, p);
    }
    print_objs_phases(out, phases);
    print_tail(out, s);
}

static void print_one(FILE *out, const json_t *s)
{
    print_one_at(out, s, NULL);
}

/* A "runmon-summary-set" (several PATHs): each summary in turn, then one row per host and a
 * totals row, the figures of the set's "hosts" and "totals". */
static void print_set(FILE *out, const json_t *set)
{
    size_t i;
    const json_t *one, *g;
    json_array_foreach(json_object_get(set, "summaries"), i, one)
    {
        print_one(out, one);
        fputc('\n', out);
    }
    fprintf(out, "All paths: per host, and totals\n  %-24s %4s %13s %14s  %s\n", "HOST", "GPUS",
            "GPU ENERGY Wh", "PEAK VRAM MiB", "PATH");
    json_array_foreach(json_object_get(set, "hosts"), i, g)
    {
        fprintf(out, "  %s %4s %13s %14s  ", cell(g, "host", 24, 24), F("gpu_count", 0),
                F(RM_FIG_KEY(ENERGY), 3), F(RM_RUN_KEY(PEAK_VRAM), 0));
        rm_fput_safe(out, str(g, "path"));
        fputc('\n', out);
    }
    g = json_object_get(set, "totals");
    fprintf(out, "  %-24s %4s %13s %14s  (energy: sum; peak VRAM: max over hosts)\n", "TOTAL",
            F("gpu_count", 0), F(RM_FIG_KEY(ENERGY), 3), F(RM_RUN_KEY(PEAK_VRAM), 0));
}

/* A "runmon-summary-sessions" (several sessions): each in turn, no totals across them. */
static void print_sessions(FILE *out, const json_t *set)
{
    size_t i;
    const json_t *one, *list = json_object_get(set, "sessions");
    json_array_foreach(list, i, one)
    {
        print_one(out, one);
        fputc('\n', out);
    }
    fprintf(out, "%zu sessions, each summarized on its own (no totals across sessions)\n",
            json_array_size(list));
}

void rm_summary_print_text(FILE *out, const json_t *s)
{
    const char *format = json_string_value(json_object_get(s, "format"));
    if (format && !strcmp(format, "runmon-summary-set"))
        print_set(out, s);
    else if (format && !strcmp(format, "runmon-summary-sessions"))
        print_sessions(out, s);
    else
        print_one(out, s);
}

/* How the CSV's text fields are written: exact to a file or a pipe, escaped on a terminal,
 * guarded for a spreadsheet with --csv-safe (base/termsafe.h: rm_csv_put). */
static int csv_how(FILE *out, bool safe)
{
    return (isatty(fileno(out)) ? RM_CSV_TERM : 0) | (safe ? RM_CSV_SAFE : 0);
}

/* A string field, written as tty (csv_how) says. */
static void csv_str(FILE *out, const char *s, int tty)
{
    rm_csv_put(out, s, tty);
}

static void csv_v(FILE *out, const json_t *v)
{
    fputc(',', out);
    if (json_is_integer(v))
        fprintf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(out, "%.15g", json_real_value(v));
}

static void csv_num(FILE *out, const json_t *o, const char *path)
{
    csv_v(out, at(o, path));
}

static void csv_gpu(FILE *out, const char *kind, const char *phase, const json_t *g,
                    const json_t *p, int tty)
{
    fputs(kind, out);
    fputc(',', out);
    csv_str(out, phase, tty);
    fputc(',', out);
    const json_t *ix = json_object_get(g, "index");
    if (json_is_integer(ix)) fprintf(out, "%lld", (long long)json_integer_value(ix));
    fputc(',', out);
    const json_t *u = json_object_get(g, "uuid");
    csv_str(out, json_is_string(u) ? json_string_value(u) : NULL, tty);
    fputc(',', out);
    const json_t *n = json_object_get(g, "name");
    csv_str(out, json_is_string(n) ? json_string_value(n) : NULL, tty);
    for (int f = 0; f < RM_FIG_COUNT; f++) /* model/figures.c's CSV columns */
        if (rm_figures[f].shown & RM_FIG_IN_CSV) csv_num(out, g, rm_figures[f].key);
    csv_num(out, p, "count");
    csv_num(out, p, "total_seconds");
    csv_v(out, rm_obj_at(p, RM_OF_CPU_USR_MEAN)); /* the phase's, the totals' for theirs */
    csv_v(out, rm_obj_at(p, RM_OF_CPU_IDLE_MEAN));
    fputc('\n', out);
}

/* The header, the GPUs' rows and the totals' row: what comes before the phases' rows. */
static void csv_head(FILE *out, const json_t *s, int tty)
{
    fputs("kind,phase,gpu,uuid,name", out);
    for (int f = 0; f < RM_FIG_COUNT; f++) {
        if (!(rm_figures[f].shown & RM_FIG_IN_CSV)) continue;
        fputc(',', out);
        for (const char *c = rm_figures[f].key; *c; c++)
            fputc(*c == '.' ? '_' : *c, out);
    }
    fputs(",count,total_seconds,cpu_usr_mean_pct,cpu_idle_mean_pct\n", out);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(s, "gpus"), i, g) csv_gpu(out, "gpu", NULL, g, NULL, tty);
    json_t *tot = json_pack(
        "{s:O,s:O}", "power_w", json_object_get(json_object_get(s, "totals"), "power_w"),
        RM_FIG_KEY(ENERGY), json_object_get(json_object_get(s, "totals"), RM_FIG_KEY(ENERGY)));
    if (tot) {
        csv_gpu(out, "total", NULL, tot, json_object_get(s, "totals"), tty);
        json_decref(tot);
    }
}

/* A phase's rows: one per GPU, or one without a GPU. */
static void csv_phase(FILE *out, const json_t *p, int tty)
{
    size_t k;
    const json_t *g;
    const char *path = json_string_value(json_object_get(p, "path"));
    const json_t *pg = json_object_get(p, "gpus");
    if (json_array_size(pg) == 0) {
        json_t *empty = json_object();
        csv_gpu(out, "phase", path, empty, p, tty);
        json_decref(empty);
    }
    json_array_foreach(pg, k, g) csv_gpu(out, "phase", path, g, p, tty);
}

void rm_summary_print_csv(FILE *out, const json_t *s, bool safe)
{
    int tty = csv_how(out, safe); /* read by a person there: escaped as the text is */
    csv_head(out, s, tty);
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(s, "phases"), i, p) csv_phase(out, p, tty);
}

/* ---- text and CSV with the phase rows streamed ---------------------------------------- */

void rm_summary_text_row(void *ctx, const json_t *doc, json_t *row)
{
    struct rm_text_stream *st = ctx;
    if (!st->started) {
        st->started = true;
        st->tty = st->csv ? csv_how(st->out, st->csv_safe) : isatty(fileno(st->out));
        if (st->csv)
            csv_head(st->out, doc, st->tty);
        else
            print_head(st->out, doc, st->path);
    }
    if (st->csv) {
        csv_phase(st->out, row, st->tty);
    } else {
        if (!st->rows) print_phase_title(st->out);
        /* The memory table comes after every phase and is printed only when some row has
         * figures for it: its lines wait in memory (about 100 bytes a row), not the rows. */
        if (!st->memory_lines && !st->failed &&
            !(st->memory_lines = open_memstream(&st->memory_buf, &st->memory_len)))
            st->failed = true;
        if (st->memory_lines) print_memory_line(st->memory_lines, row);
        st->memory |= phase_has_memory(row);
        /* The objects' tables by phase ("I/O by phase") likewise (rows with the object). */
        for (int k = 0; k < RM_OBJ_COUNT; k++) {
            if (obj_phase_has(k, row) && !st->obj_lines[k] && !st->failed &&
                !(st->obj_lines[k] = open_memstream(&st->obj_buf[k], &st->obj_len[k])))
                st->failed = true;
            if (st->obj_lines[k]) print_obj_phase_line(st->obj_lines[k], k, row);
        }
        print_phase_line(st->out, row);
    }
    st->rows++;
    json_decref(row);
}

int rm_summary_text_end(struct rm_text_stream *st, const json_t *summary)
{
    if (!summary) {
        /* no summary: what was held goes */
    } else if (!st->started) {
        /* No row came: the whole document, as the one-piece writers print it. */
        if (st->csv)
            rm_summary_print_csv(st->out, summary, st->csv_safe);
        else
            print_one_at(st->out, summary, st->path);
    } else if (!st->csv) {
        if (st->memory_lines && fclose(st->memory_lines)) st->failed = true;
        st->memory_lines = NULL;
        if (st->memory && st->memory_buf) {
            print_memory_title(st->out);
            fwrite(st->memory_buf, 1, st->memory_len, st->out);
        }
        for (int k = 0; k < RM_OBJ_COUNT; k++) {
            if (st->obj_lines[k] && fclose(st->obj_lines[k])) st->failed = true;
            st->obj_lines[k] = NULL;
            if (st->obj_buf[k] && st->obj_len[k]) {
                print_obj_phase_title(st->out, k);
                fwrite(st->obj_buf[k], 1, st->obj_len[k], st->out);
            }
        }
        print_tail(st->out, summary);
    }
    if (st->memory_lines) fclose(st->memory_lines);
    free(st->memory_buf);
    st->memory_lines = NULL;
    st->memory_buf = NULL;
    for (int k = 0; k < RM_OBJ_COUNT; k++) {
        if (st->obj_lines[k]) fclose(st->obj_lines[k]);
        free(st->obj_buf[k]);
        st->obj_lines[k] = NULL;
        st->obj_buf[k] = NULL;
    }
    return st->failed || ferror(st->out) ? -1 : 0;
}
