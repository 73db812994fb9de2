/* The report's tables of per-process GPU memory (apps.csv), from the ResourceSummary: the
 * processes per GPU with the workload's and the other processes' VRAM, and the framework's
 * and the workload's peak per phase. Sessions without apps.csv get neither. */
#include <math.h>
#include <string.h>

#include "model/figures.h"
#include "report/report_internal.h"

/* At most this many process rows; a note says how many more there were. */
#define MAX_PROC_ROWS 500

static void td_num(FILE *o, const json_t *v, int dec)
{
    fprintf(o, "<td>");
    rm_report_num(o, v, dec, "", 1);
    fprintf(o, "</td>");
}

static const char *workload_word(const json_t *w)
{
    return json_is_true(w) ? "yes" : json_is_false(w) ? "no" : "unknown";
}

/* "GPU 0: workload peak 1860 MiB, mean 1162.5 MiB; other processes peak 3656 MiB". */
static void gpu_line(FILE *o, const json_t *g)
{
    fprintf(o, "<p class=\"apps-gpu\">GPU ");
    rm_report_str_or_dash(o, rm_report_get(g, "index"));
    fprintf(o, ": workload peak ");
    rm_report_num(o, rm_report_get(g, "workload_vram_mb.peak"), 0, " MiB", 1);
    fprintf(o, ", mean ");
    rm_report_num(o, rm_report_get(g, "workload_vram_mb.mean"), 1, " MiB", 1);
    fprintf(o, "; other processes peak ");
    rm_report_num(o, rm_report_get(g, "other_vram_mb.peak"), 0, " MiB", 1);
    const char *basis = json_string_value(rm_report_get(g, "workload_vram_basis"));
    const json_t *u = rm_report_get(g, "unknown_vram_mb.peak");
    /* no unplaced process at all: nvidia-smi listed none (summary/build.c's unlisted_vram) */
    bool unlisted = !(json_is_number(u) && json_number_value(u) > 0);
    if (basis)
        fprintf(o, " (%s)",
                !strcmp(basis, "assumed")
                    ? (unlisted ? "assumed the workload's: the GPU's memory used while nvidia-smi "
                                  "listed no process, on the job's own GPU"
                                : "assumed the workload's: processes runmon cannot place, on the "
                                  "job's own GPU with no other process")
                : unlisted ? "unattributed: memory used while nvidia-smi listed no process"
                           : "unattributed: processes runmon cannot place, another PID namespace");
    if (json_is_number(u) && json_number_value(u) > 0) {
        fprintf(o, "; processes not known to be the workload's peak ");
        rm_report_num(o, u, 0, " MiB", 1);
    }
    fprintf(o, "</p>");
}

static void proc_row(FILE *o, const json_t *g, const json_t *p)
{
    const char *w = workload_word(rm_report_get(p, "in_workload"));
    fprintf(o, "<tr class=\"proc\" data-pid=\"");
    rm_report_str_or_dash(o, rm_report_get(p, "pid"));
    fprintf(o, "\" data-workload=\"%s\"><td>", w);
    const json_t *gi = rm_report_get(p, "gpu");
    rm_report_str_or_dash(o, json_is_integer(gi) ? gi : rm_report_get(g, "index"));
    fprintf(o, "</td><td>");
    rm_report_str_or_dash(o, rm_report_get(p, "pid"));
    fprintf(o, "</td><td class=\"l\">");
    rm_report_str_or_dash(o, rm_report_get(p, "name"));
    fprintf(o, "</td><td class=\"t\">%s</td>", w);
    td_num(o, rm_report_get(p, "peak_mb"), 0);
    td_num(o, rm_report_get(p, "sm_pct_mean"), 1);
    td_num(o, rm_report_get(p, "samples"), 0);
    fprintf(o, "</tr>");
}

void rm_report_write_processes(struct report *r)
{
    FILE *o = r->out;
    const json_t *gpus = rm_report_get(r->summary, "gpus");
    size_t i, k, nproc = 0;
    json_t *g, *p;
    bool any = false;
    json_array_foreach(gpus, i, g)
    {
        any |= json_is_object(rm_report_get(g, RM_GPU_WORKLOAD_VRAM));
        nproc += json_array_size(rm_report_get(g, "processes"));
    }
    if (!any && !nproc) return;
    fprintf(o, "<section class=\"panel\" id=\"t-processes\"><h3>Processes</h3>");
    json_array_foreach(gpus, i, g) if (json_is_object(rm_report_get(g, RM_GPU_WORKLOAD_VRAM)))
        gpu_line(o, g);
    if (!nproc) {
        fprintf(o, "<p class=\"note\">No process was seen on a GPU.</p></section>\n");
        return;
    }
    fprintf(
        o,
        "<div class=\"tw\"><table><thead><tr><th>GPU</th><th>pid</th><th class=\"l\">name</th><th "
        "class=\"t\">workload</th>"
        "<th>peak MiB</th><th>SM %% mean</th><th>samples</th></tr></thead><tbody>");
    size_t shown = 0;
    json_array_foreach(gpus, i, g)
    {
        json_array_foreach(rm_report_get(g, "processes"), k, p)
        {
            if (shown == MAX_PROC_ROWS) break;
            proc_row(o, g, p);
            shown++;
        }
    }
    fprintf(o, "</tbody></table></div>");
    if (shown < nproc)
        fprintf(o, "<p class=\"note\">%zu more processes not listed.</p>", nproc - shown);
    fprintf(o, "</section>\n");
}

void rm_report_write_phase_memory(struct report *r)
{
    FILE *o = r->out;
    bool any = false;
    for (size_t i = 0; i < r->nphases; i++)
        any |= r->phases[i].has_memory;
    if (!any) return;
    fprintf(o, "<section class=\"panel\" id=\"t-phase-memory\"><h3>Memory by phase</h3><div "
               "class=\"tw\"><table>"
               "<thead><tr><th class=\"l\">phase</th><th class=\"l\">framework</th><th>framework "
               "peak MiB</th>"
               "<th>workload VRAM peak MiB</th></tr></thead><tbody>");
    for (size_t i = 0; i < r->nphases; i++) {
        const struct report_phase *p = &r->phases[i];
        fprintf(o, "<tr class=\"phase-mem\"><td class=\"l\" style=\"padding-left:%dem\">",
                p->depth + 1);
        rm_report_phase_swatch(o, json_is_string(p->path) ? json_string_value(p->path) : "");
        rm_report_name_or_dash(o, p->path);
        fprintf(o, "</td><td class=\"l\">");
        rm_report_str_or_dash(o, p->fw_name);
        fprintf(o, "</td><td>");
        if (isnan(p->fw_max))
            fputs("&#8211;", o);
        else
            fprintf(o, "%.0f", p->fw_max);
        fprintf(o, "</td>");
        if (p->workload_peak >= 0)
            fprintf(o, "<td>%.0f</td></tr>", p->workload_peak);
        else
            fprintf(o, "<td>&#8211;</td></tr>");
    }
    fprintf(o, "</tbody></table></div></section>\n");
}
