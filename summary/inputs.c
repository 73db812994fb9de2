/* The readers, one per input kind: how a file of the kind is parsed and folded. */
#include "summary/inputs.h"

#include <stdio.h>
#include <string.h>

/* ---- nvidia-smi --query-gpu CSV ------------------------------------------------------ */

static void reset_gpu(struct file_agg *f)
{
    rm_gpucsv_init(&f->parser->gpu, f->gpu_fields);
    f->parser->gpu.fields_src = f->gpu_fields_src;
}

static int read_gpu_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_gpu_sample s;
    int rc = rm_gpucsv_row(&f->parser->gpu, row, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add)
            rm_file_add_gpu_sample(f, &s);
        else
            f->probe_index = s.index;
    }
    return rc;
}

static bool same_map_gpu(const void *a, const void *b)
{
    return rm_gpucsv_same_map(a, b);
}

/* A headerless file read with an assumed field list says so. */
static void note_gpu(struct file_agg *f)
{
    if (f->parser->gpu.assumed)
        snprintf(f->note, sizeof f->note, "%s: %s", f->path, f->parser->gpu.note);
}

/* ---- nvidia-smi dmon: its own text, and runmon's dmon.csv ---------------------------- */

static void reset_dmon(struct file_agg *f)
{
    rm_dmon_map_init(&f->parser->dmon);
}

static int read_dmon_line(struct file_agg *f, const char *line, size_t len, bool torn, bool add,
                          int64_t *t)
{
    struct rm_gpu_sample s;
    int rc = rm_dmon_text_line(&f->parser->dmon, line, len, torn, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add)
            rm_file_add_gpu_sample(f, &s);
        else
            f->probe_index = s.index;
    }
    return rc;
}

static int read_dmon_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_gpu_sample s;
    int rc = rm_dmon_csv_row(&f->parser->dmon, row, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add)
            rm_file_add_gpu_sample(f, &s);
        else
            f->probe_index = s.index;
    }
    return rc;
}

static bool same_map_dmon(const void *a, const void *b)
{
    return rm_dmon_map_same(a, b);
}

#define DMON_UNTIMED                                                                               \
    "dmon output without time columns: no energy, coverage or phase figures from it"

/* ---- the host: cpu.csv and proc.csv --------------------------------------------------- */

static void reset_host(struct file_agg *f)
{
    rm_hostcsv_init(&f->parser->host);
}

static int read_host(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t,
                     bool proc)
{
    struct rm_host_sample s;
    int rc = rm_hostcsv_row(&f->parser->host, row, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add) rm_file_add_host_sample(f, &s, proc);
    }
    return rc;
}

static int read_cpu_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    return read_host(f, row, add, t, false);
}

static int read_proc_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    return read_host(f, row, add, t, true);
}

/* ---- apps.csv: per-process GPU memory (nvidia-smi pmon) -------------------------------- */

static void reset_apps(struct file_agg *f)
{
    rm_appscsv_init(&f->parser->apps);
}

static int read_apps_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_app_row a;
    int rc = rm_appscsv_row(&f->parser->apps, row, &a);
    if (rc == 1) {
        *t = a.t_ns;
        if (add) rm_file_add_app_row(f, &a);
    }
    return rc;
}

/* ---- nvidia-smi's own per-process outputs: pmon text, compute-apps and accounted-apps -- */

static void reset_pmon(struct file_agg *f)
{
    rm_pmon_map_init(&f->parser->pmon);
}

static int read_pmon_line(struct file_agg *f, const char *line, size_t len, bool torn, bool add,
                          int64_t *t)
{
    struct rm_app_row a;
    int rc = rm_pmon_text_line(&f->parser->pmon, line, len, torn, &a);
    if (rc == 1) {
        *t = a.t_ns;
        if (add) rm_file_add_app_row(f, &a);
    }
    return rc;
}

static void reset_smi_apps(struct file_agg *f)
{
    rm_smi_apps_csv_init(&f->parser->smi_apps);
}

static int read_smi_apps_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_app_row a;
    int rc = rm_smi_apps_csv_row(&f->parser->smi_apps, row, &a);
    if (rc == 1) {
        *t = a.t_ns;
        if (add) rm_file_add_app_row(f, &a);
    }
    return rc;
}

/* These outputs have no GPU index: say how the GPUs were numbered. */
static void note_smi_apps(struct file_agg *f)
{
    const struct rm_smi_apps_csv *p = &f->parser->smi_apps;
    if (!f->rows) return;
    snprintf(f->note, sizeof f->note,
             "%s: nvidia-smi %s: no GPU index; %s%s; no process is known to be the workload's%s",
             f->path, p->accounted ? "--query-accounted-apps" : "--query-compute-apps",
             p->col[RM_SAC_UUID] >= 0 || p->col[RM_SAC_BUS] >= 0 || p->col[RM_SAC_GPU_NAME] >= 0
                 ? "GPUs numbered in the order they first appear, by "
                 : "no GPU named: all read as GPU 0",
             p->col[RM_SAC_UUID] >= 0       ? "gpu_uuid"
             : p->col[RM_SAC_BUS] >= 0      ? "gpu_bus_id"
             : p->col[RM_SAC_GPU_NAME] >= 0 ? "gpu_name"
                                            : "",
             p->accounted ? "; a row per process over its life (peak memory, share of time a "
                            "kernel ran), not samples"
                          : "");
    if (p->too_many) {
        size_t u = strlen(f->note);
        snprintf(f->note + u, sizeof f->note - u, "; rows of GPUs past the 64th skipped");
    }
}

static void note_pmon(struct file_agg *f)
{
    if (f->rows)
        snprintf(f->note, sizeof f->note,
                 "%s: nvidia-smi pmon: no process is known to be the workload's%s", f->path,
                 f->first_ns == RM_NO_TIME
                     ? "; no Date and Time columns: samples told apart by a process or idle "
                       "GPU coming again"
                     : "");
}

/* ---- io.csv: disks, network, pressure, the tree's bytes (cumulative counters) --------- */

static void reset_io(struct file_agg *f)
{
    rm_iocsv_init(&f->parser->io);
}

static int read_io_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_io_row r;
    int rc = rm_iocsv_row(&f->parser->io, row, &r);
    if (rc == 1) {
        *t = r.t_ns;
        if (add) rm_file_add_io_row(f, &r);
    }
    return rc;
}

/* ---- stall.csv: the workload's own stalls (each row one interval's growth) ------------ */

static void reset_stall(struct file_agg *f)
{
    rm_stallcsv_init(&f->parser->stall);
}

static int read_stall_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_stall_row r;
    int rc = rm_stallcsv_row(&f->parser->stall, row, &r);
    if (rc == 1) {
        *t = r.t_ns;
        if (add) rm_file_add_stall_row(f, &r);
    }
    return rc;
}

/* ---- the table: adding an input kind is one reader above and one line here ------------ */

static const struct rm_input_reader readers[RM_INPUT_COUNT] = {
    [RM_INPUT_GPU_CSV] = {.kind = RM_INPUT_GPU_CSV,
                          .reset = reset_gpu,
                          .row = read_gpu_row,
                          .same_map = same_map_gpu,
                          .note = note_gpu,
                          .source = RM_GPU_SOURCE_QUERY,
                          .gpu_gaps = true,
                          .name_period = true,
                          .segment_whole = true},
    [RM_INPUT_DMON_TEXT] = {.kind = RM_INPUT_DMON_TEXT,
                            .reset = reset_dmon,
                            .line = read_dmon_line,
                            .same_map = same_map_dmon,
                            .source = RM_GPU_SOURCE_DMON,
                            .gpu_gaps = true,
                            .segment_whole = true,
                            .untimed = DMON_UNTIMED},
    [RM_INPUT_DMON_CSV] = {.kind = RM_INPUT_DMON_CSV,
                           .reset = reset_dmon,
                           .row = read_dmon_row,
                           .same_map = same_map_dmon,
                           .source = RM_GPU_SOURCE_DMON,
                           .gpu_gaps = true,
                           .segment_whole = true,
                           .untimed = DMON_UNTIMED},
    [RM_INPUT_CPU_CSV] = {.kind = RM_INPUT_CPU_CSV,
                          .reset = reset_host,
                          .row = read_cpu_row,
                          .segment_whole = true},
    [RM_INPUT_PROC_CSV] = {.kind = RM_INPUT_PROC_CSV,
                           .reset = reset_host,
                           .row = read_proc_row,
                           .segment_whole = true},
    /* pmon samples at whole seconds whatever the session's interval; per-process figures
     * need the rows, so its segments are read while on disk. */
    [RM_INPUT_APPS_CSV] = {.kind = RM_INPUT_APPS_CSV,
                           .reset = reset_apps,
                           .row = read_apps_row,
                           .close = rm_file_close_apps,
                           .own_spacing = true},
    /* Its own period (--io-interval); rates need consecutive rows of a device, so its
     * segments are read while on disk rather than from a stored aggregate. */
    [RM_INPUT_IO_CSV] = {.kind = RM_INPUT_IO_CSV,
                         .reset = reset_io,
                         .row = read_io_row,
                         .own_spacing = true},
    /* Its rows are intervals of their own; a sealed segment is read while on disk. */
    [RM_INPUT_STALL_CSV] = {.kind = RM_INPUT_STALL_CSV,
                            .reset = reset_stall,
                            .row = read_stall_row,
                            .own_spacing = true},
    /* nvidia-smi's own per-process outputs are read as apps.csv is (summary/smi_apps.h). */
    [RM_INPUT_PMON_TEXT] = {.kind = RM_INPUT_PMON_TEXT,
                            .reset = reset_pmon,
                            .line = read_pmon_line,
                            .close = rm_file_close_apps,
                            .note = note_pmon,
                            .own_spacing = true},
    [RM_INPUT_COMPUTE_APPS] = {.kind = RM_INPUT_COMPUTE_APPS,
                               .reset = reset_smi_apps,
                               .row = read_smi_apps_row,
                               .close = rm_file_close_apps,
                               .note = note_smi_apps,
                               .own_spacing = true},
    [RM_INPUT_ACCOUNTED_APPS] = {.kind = RM_INPUT_ACCOUNTED_APPS,
                                 .reset = reset_smi_apps,
                                 .row = read_smi_apps_row,
                                 .close = rm_file_close_apps,
                                 .note = note_smi_apps,
                                 .own_spacing = true},
};

const struct rm_input_reader *rm_input_reader(enum rm_input_kind k)
{
    return &readers[k];
}

void rm_input_fold_row(void *ctx, const struct rm_csv_row *row)
{
    struct file_agg *f = ctx;
    int64_t t;
    int rc = readers[f->kind].row(f, row, true, &t);
    if (rc < 0) rm_file_skip(f, rc);
}

void rm_input_fold_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct file_agg *f = ctx;
    int64_t t;
    int rc = readers[f->kind].line(f, line, len, torn, true, &t);
    if (rc < 0) rm_file_skip(f, rc);
}
