/* The report's summary cards and tables, from the ResourceSummary document. */
#include <math.h>
#include <string.h>

#include "base/rm_time.h"
#include "model/figures.h"
#include "model/objects.h"
#include "report/report_internal.h"
#include "summary/objects.h"

/* ---- summary cards and tables --------------------------------------------------------- */

/* v / div with dec decimals (-1: %g) and a suffix, or a dash when v is not a number. */
void rm_report_num(FILE *o, const json_t *v, int dec, const char *suffix, double div)
{
    if (!json_is_number(v))
        fputs("&#8211;", o);
    else if (dec < 0)
        fprintf(o, "%g%s", json_number_value(v) / div, suffix);
    else
        fprintf(o, "%.*f%s", dec, json_number_value(v) / div, suffix);
}

void rm_report_name_or_dash(FILE *o, const json_t *v)
{
    if (json_is_string(v))
        rm_html_name(o, json_string_value(v));
    else
        rm_report_str_or_dash(o, v);
}

void rm_report_str_or_dash(FILE *o, const json_t *v)
{
    if (json_is_string(v))
        esc(o, json_string_value(v));
    else if (json_is_integer(v))
        fprintf(o, "%lld", (long long)json_integer_value(v));
    else
        fputs("&#8211;", o);
}

static void fmt_duration(FILE *o, const json_t *v)
{
    if (!json_is_number(v)) {
        fputs("&#8211;", o);
        return;
    }
    double s = json_number_value(v);
    if (s < 120)
        fprintf(o, "%.1f s", s);
    else if (s < 86400)
        fprintf(o, "%ldh %02ldm %02lds", (long)s / 3600, (long)s % 3600 / 60, (long)s % 60);
    else
        fprintf(o, "%ldd %ldh %02ldm", (long)s / 86400, (long)s % 86400 / 3600,
                (long)s % 3600 / 60);
}

/* The error bar of obj's energy_wh (summary.json's energy_wh_low/high: docs/ENERGY.md) after
 * the value, as the phase table shows it ("?" for a top that is unknown: time no sample covered
 * and no power limit recorded), and the seconds no sample covered; nothing when obj has none. */
static void energy_bar(FILE *o, const json_t *obj, int dec)
{
    const json_t *lo = json_object_get(obj, RM_FIG_KEY(ENERGY_LOW)),
                 *hi = json_object_get(obj, RM_FIG_KEY(ENERGY_HIGH)),
                 *un = json_object_get(obj, RM_FIG_KEY(ENERGY_UNCOVERED));
    if (!json_is_number(lo)) return;
    fprintf(o, " <small class=\"ebar\">(%.*f&#8211;", dec, json_number_value(lo));
    if (json_is_number(hi))
        fprintf(o, "%.*f", dec, json_number_value(hi));
    else
        fputs("?", o);
    if (json_is_number(un) && json_number_value(un) >= 0.005)
        fprintf(o, "; %.2f s unsampled", json_number_value(un));
    fputs(")</small>", o);
}

static void card(FILE *o, const char *label)
{
    fprintf(o, "<div class=\"card\"><div class=\"label\">%s</div><div class=\"value\">", label);
}

void rm_report_write_cards(struct report *r)
{
    FILE *o = r->out;
    const json_t *s = r->summary;
    const json_t *dur = rm_report_get(s, "session.duration_s");
    if (!json_is_number(dur)) dur = rm_report_get(s, "data_quality.session_seconds");
    fprintf(o, "<section class=\"cards\">");
    card(o, "Duration");
    fmt_duration(o, dur);
    fprintf(o, "</div></div>");
    card(o, "Peak VRAM");
    rm_report_num(o, rm_report_get(s, RM_RUN_KEY(PEAK_VRAM)), 1, " GiB", 1024);
    /* Two peaks side by side read as a contradiction unless each says what it counts. */
    fprintf(o, "</div><div class=\"sub\" id=\"sub-peak-vram\">the GPUs' memory used by "
               "every process (nvidia-smi)</div></div>");
    const json_t *wp = rm_report_get(s, RM_RUN_KEY(WORKLOAD_PEAK_VRAM));
    const char *basis = json_string_value(rm_report_get(s, RM_RUN_KEY(WORKLOAD_VRAM_BASIS)));
    if (json_is_number(wp) || basis) { /* apps.csv: what the workload's own processes held */
        card(o, "Workload peak VRAM");
        rm_report_num(o, wp, 1, " GiB", 1024); /* "-" when unattributed, never 0 */
        fprintf(o, "</div><div class=\"sub\" id=\"sub-workload-vram\">%s</div></div>",
                !basis ? "the recorded command's own processes only (0: they held no GPU memory)"
                : !strcmp(basis, "assumed")
                    ? "assumed the workload's: GPU memory of processes runmon cannot place "
                      "(another PID namespace, or none listed), on the job's own GPUs with no "
                      "other process"
                    : "unattributed: GPU memory is held by processes runmon cannot place "
                      "(another PID namespace, or none listed)");
    }
    card(o, "Mean GPU utilization");
    rm_report_num(o, rm_report_get(s, RM_RUN_KEY(UTIL_MEAN)), 1, " %", 1);
    fprintf(o, "</div></div>");
    card(o, "Energy");
    rm_report_num(o, rm_report_get(s, "totals.energy_wh"), 2, " Wh", 1);
    energy_bar(o, rm_report_get(s, "totals"), 3); /* finer than the value: a bar of a short run */
    fprintf(o, "</div></div>");
    card(o, "Alerts");
    long long w = json_integer_value(rm_report_get(s, "alerts.warning"));
    long long c = json_integer_value(rm_report_get(s, "alerts.critical"));
    fprintf(o, "<span class=\"%s\">%lld warning</span>, <span class=\"%s\">%lld critical</span>",
            w ? "warn" : "", w, c ? "crit" : "", c);
    fprintf(o, "</div></div>");
    card(o, "GPUs");
    rm_report_num(o, rm_report_get(s, "totals.gpu_count"), 0, "", 1);
    fprintf(o, "</div></div>");
    card(o, "Coverage");
    rm_report_num(o, rm_report_get(s, "data_quality.coverage"), 1, " %", 0.01);
    fprintf(o, "</div></div></section>\n");
}

/* A numeric column of a table: the summary key, decimals, divisor. */
struct num_col {
    const char *key;
    int dec;
    double div;
};

/* One cell per column of the GPU table (model/figures.c's report columns), each opened by
 * "</td><td>" (the row's first cell is the caller's); the energy with its bar. */
static void gpu_cells(FILE *o, const json_t *g)
{
    for (int at = 1, k; (k = rm_fig_report_at(at)) >= 0; at++) {
        const struct rm_figure *f = &rm_figures[k];
        fprintf(o, "</td><td>");
        rm_report_num(o, rm_report_get(g, f->key), f->report.dec, "", f->report.div);
        if (f->report.bar) energy_bar(o, g, f->report.dec);
    }
}

/* A figure computed here, or a dash when there was none. */
static void value_or_dash(FILE *o, bool has, int dec, double v)
{
    if (has)
        fprintf(o, "%.*f", dec, v);
    else
        fputs("&#8211;", o);
}

static const struct num_col phase_cols[] = {
    {"count", 0, 1},        {"total_seconds", 3, 1},       {"status.ok", 0, 1},
    {"status.error", 0, 1}, {"status.unterminated", 0, 1},
};

void rm_report_write_gpu_table(struct report *r)
{
    FILE *o = r->out;
    const json_t *gpus = rm_report_get(r->summary, "gpus");
    if (!json_array_size(gpus)) return;
    fprintf(o, "<section class=\"panel\"><h3>GPUs</h3><div "
               "class=\"tw\"><table><thead><tr><th>GPU</th><th class=\"l\">name</th>");
    for (int at = 1, k; (k = rm_fig_report_at(at)) >= 0; at++)
        fprintf(o, "<th>%s</th>", rm_figures[k].report.head);
    fprintf(o, "</tr></thead><tbody>");
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        fprintf(o, "<tr><td>");
        rm_report_str_or_dash(o, rm_report_get(g, "index"));
        fprintf(o, "</td><td class=\"l\">");
        rm_report_str_or_dash(o, rm_report_get(g, "name"));
        if (json_is_true(rm_report_get(g, "mig_instance")))
            fprintf(o, "<br><small>MIG instance: power and energy are the whole GPU's, counted "
                       "once in sums</small>");
        gpu_cells(o, g);
        fprintf(o, "</td></tr>");
    }
    fprintf(o, "</tbody></table></div></section>\n");
}

/* A number with dec decimals, or a dash (NaN: the row had none), as rm_report_num. */
static void num_or_dash(FILE *o, double v, int dec)
{
    value_or_dash(o, !isnan(v), dec, v);
}

/* A phase's energy with its bar (summary.json's energy_wh_low/high) and a mark for a short
 * phase; the sum over its GPUs where the summary is older than the bar. */
static void phase_energy_cell(FILE *o, const struct report_phase *p)
{
    if (isnan(p->energy_wh)) {
        value_or_dash(o, p->has_gpu_energy, 3, p->gpu_energy);
        return;
    }
    fprintf(o, "%.3f", p->energy_wh);
    if (p->short_phase)
        fprintf(o, "<span class=\"short\" title=\"short phase: shorter than 2 sensor windows or 3 "
                   "samples; its energy is mostly the sensor's smear\">~</span>");
    if (!isnan(p->energy_lo) && !isnan(p->energy_hi))
        fprintf(o, " <small>(%.3f&#8211;%.3f)</small>", p->energy_lo, p->energy_hi);
    else if (!isnan(p->energy_lo)) /* its top unknown: no power limit recorded */
        fprintf(o, " <small>(%.3f&#8211;?)</small>", p->energy_lo);
}

/* What held the phase back (summary.json's held_back_by): a row per finding under the phase's
 * row, across the table, wrapping on a narrow screen. */
static void held_rows(FILE *o, const json_t *held, int depth, int ncols)
{
    size_t i;
    json_t *f;
    json_array_foreach(held, i, f)
    {
        const json_t *text = rm_report_get(f, "text");
        if (!json_is_string(text)) continue;
        fprintf(o,
                "<tr class=\"held\"><td class=\"l\" colspan=\"%d\" "
                "style=\"padding-left:%dem;color:#8a4b00\">held back by ",
                ncols, depth + 2);
        rm_html_escape_str(o, json_string_value(text));
        fprintf(o, "</td></tr>");
    }
}

void rm_report_write_phase_table(struct report *r)
{
    FILE *o = r->out;
    if (!r->nphases) return;
    fprintf(o, "<section class=\"panel\" id=\"t-phase-table\"><h3>Phases</h3><div "
               "class=\"tw\"><table><thead><tr><th "
               "class=\"l\">phase</th>"
               "<th>runs</th><th>total s</th><th>ok</th><th>error</th><th>unterminated</th>"
               "<th>GPU util mean %%</th><th>VRAM peak GiB</th><th>energy Wh</th>");
    /* The objects' columns (model/objects.h) of a run that has the object: the process
     * tree's RSS peak (the host's objects, always); with io.csv the phase's disk and network
     * MB/s and io pressure. */
    bool shown[RM_OBJ_REPORT_MAX] = {false};
    int extra = 0;
    for (int c = 1, f; c <= RM_OBJ_REPORT_MAX && (f = rm_obj_report_at(c)) >= 0; c++) {
        const struct rm_obj_figure *of = &rm_obj_figures[f];
        const struct rm_object *ob = &rm_objects[of->obj];
        shown[c - 1] = ob->host ||
                       json_is_object(json_object_get(rm_obj_holder(r->summary, of->obj), ob->key));
        if (!shown[c - 1]) continue;
        fprintf(o, "<th>%s</th>", of->report.head);
        extra++;
    }
    fprintf(o, "<th class=\"t\">first start</th></tr></thead><tbody>");
    for (size_t i = 0; i < r->nphases; i++) {
        const struct report_phase *p = &r->phases[i];
        fprintf(o, "<tr><td class=\"l\" style=\"padding-left:%dem\">", p->depth + 1);
        rm_report_phase_swatch(o, json_is_string(p->path) ? json_string_value(p->path) : "");
        rm_report_name_or_dash(o, p->path);
        const double cells[] = {p->count, p->total_s, p->ok, p->error, p->unterminated};
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
            fprintf(o, "</td><td>");
            num_or_dash(o, cells[c], phase_cols[c].dec);
        }
        fprintf(o, "</td><td>");
        value_or_dash(o, p->has_util, 1, p->util_mean);
        fprintf(o, "</td><td>");
        value_or_dash(o, p->vram_peak >= 0, 2, p->vram_peak / 1024);
        fprintf(o, "</td><td>");
        phase_energy_cell(o, p);
        for (int c = 1, f; c <= RM_OBJ_REPORT_MAX && (f = rm_obj_report_at(c)) >= 0; c++) {
            if (!shown[c - 1]) continue;
            fprintf(o, "</td><td>");
            num_or_dash(o, p->obj[c - 1], rm_obj_figures[f].report.dec);
        }
        fprintf(o, "</td><td class=\"t\">");
        rm_report_str_or_dash(o, p->first_start);
        fprintf(o, "</td></tr>");
        held_rows(o, p->held, p->depth, 10 + extra);
    }
    fprintf(o, "</tbody></table></div></section>\n");
}

void rm_report_write_events(struct report *r)
{
    FILE *o = r->out;
    const json_t *al = rm_report_get(r->summary, "alerts.events");
    if (!json_array_size(al) && !r->nspans) return;
    fprintf(o, "<section class=\"panel\"><h3>Alerts and collector problems</h3><div "
               "class=\"tw\"><table><thead>"
               "<tr><th class=\"t\">time</th><th class=\"t\">what</th><th "
               "class=\"l\">detail</th></tr></thead><tbody>");
    size_t i;
    json_t *a;
    json_array_foreach(al, i, a)
    {
        const json_t *lv = rm_report_get(a, "level");
        bool crit = json_is_string(lv) && !strcmp(json_string_value(lv), "critical");
        fprintf(o, "<tr><td class=\"t\">");
        rm_report_str_or_dash(o, rm_report_get(a, "ts"));
        fprintf(o, "</td><td class=\"t %s\">", crit ? "crit" : "warn");
        rm_report_str_or_dash(o, lv);
        fprintf(o, "</td><td class=\"l\">GPU ");
        rm_report_str_or_dash(o, rm_report_get(a, "gpu"));
        fprintf(o, ": VRAM ");
        rm_report_num(o, rm_report_get(a, "pct"), 1, " %", 1);
        fprintf(o, " of ");
        rm_report_num(o, rm_report_get(a, "memory_total_mb"), 0, " MiB", 1);
        fprintf(o, " (threshold ");
        rm_report_num(o, rm_report_get(a, "threshold_pct"), -1, " %", 1);
        fprintf(o, ")</td></tr>");
    }
    for (size_t k = 0; k < r->nspans && k < 200; k++) {
        char ts[RM_TS_BUFSZ];
        rm_format_ts(r->spans[k].a, ts);
        fprintf(o, "<tr><td class=\"t\">%s</td><td class=\"t crit\">", ts);
        esc(o, r->spans[k].collector);
        fprintf(o, " degraded</td><td class=\"l\">");
        if (r->spans[k].b != RM_NO_TIME)
            fprintf(o, "down %.1f s: ", (double)(r->spans[k].b - r->spans[k].a) / 1e9);
        else
            fprintf(o, "not recovered: ");
        esc(o, r->spans[k].reason);
        fprintf(o, "</td></tr>");
    }
    fprintf(o, "</tbody></table></div></section>\n");
}

void rm_report_write_quality(struct report *r)
{
    FILE *o = r->out;
    const json_t *dq = rm_report_get(r->summary, "data_quality");
    fprintf(o, "<section class=\"panel\"><h3>Data quality</h3><p>rows read ");
    rm_report_num(o, rm_report_get(dq, "rows_read"), 0, "", 1);
    fprintf(o, "; gaps ");
    rm_report_num(o, rm_report_get(dq, "gaps.count"), 0, "", 1);
    fprintf(o, " (");
    rm_report_num(o, rm_report_get(dq, "gaps.seconds"), 1, " s", 1);
    fprintf(o, "); coverage ");
    rm_report_num(o, rm_report_get(dq, "coverage"), 1, " %", 0.01);
    fprintf(o, ". Collectors:");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)rm_report_get(r->summary, "collectors"), k, v)
    {
        fprintf(o, " ");
        esc(o, k);
        fprintf(o, " ");
        rm_report_str_or_dash(o, rm_report_get(v, "health"));
        fprintf(o, ";");
    }
    fprintf(o, "</p>");
    size_t i;
    json_array_foreach(rm_report_get(dq, "notes"), i, v)
    {
        fprintf(o, "<p class=\"note\">");
        rm_report_str_or_dash(o, v);
        fprintf(o, "</p>");
    }
    if (r->gpu_overflow)
        fprintf(o, "<p class=\"note\">Only the first %d GPUs are drawn.</p>", MAX_GPUS);
    if (r->alerts_total > r->nalerts)
        fprintf(o, "<p class=\"note\">%llu alerts; the first %zu are drawn.</p>",
                (unsigned long long)r->alerts_total, r->nalerts);
    fprintf(o, "</section>\n");
}
