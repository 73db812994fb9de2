/* apps.csv (the per-process GPU collector, docs/FORMATS.md) -> what the workload's own
 * processes held on each GPU, what other processes held, and per-process figures.
 *
 * Rows of one sample share their ts. Per sample and GPU, workload VRAM is the sum over rows
 * with in_workload 1, other VRAM over rows with 0, unknown VRAM over rows with an empty
 * in_workload; a GPU's idle row (no pid) makes a sample of 0 for all three. So an idle GPU
 * has workload_vram_mb 0 and a GPU the collector never reported has no figure at all.
 */
#ifndef RUNMON_SUMMARY_APPS_H
#define RUNMON_SUMMARY_APPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/streams.h"
#include "summary/csvread.h"
#include "summary/sample.h"
#include "summary/stats.h"

#define RM_APPS_MAX_GPUS 64

/* The columns of an apps.csv, found by name in its header. */
struct rm_appscsv {
    bool mapped;
    size_t ncols;
    int col[RM_APPS_COL_COUNT]; /* by enum rm_apps_col (model/streams.h); -1 when absent */
};

/* Where a row came from. */
enum rm_app_origin {
    RM_APP_RUNMON,       /* runmon's apps.csv */
    RM_APP_SMI_SAMPLE,   /* nvidia-smi's pmon or compute-apps: a sample, no workload known */
    RM_APP_SMI_LIFETIME, /* nvidia-smi's accounted-apps: a process over its life, no sample */
};

struct rm_app_row {
    int64_t t_ns; /* RM_NO_TIME: the sample ends where its GPU's idle row or process repeats */
    int gpu;      /* index */
    struct rm_strref uuid, name;
    long long pid;          /* -1: the GPU's idle row */
    double vram_mb, sm_pct; /* NaN when not given */
    int in_workload;        /* 1, 0, -1 unknown */
    unsigned char origin;   /* enum rm_app_origin */
};

void rm_appscsv_init(struct rm_appscsv *p);
/* 1 with *out for a data row, 0 for a header, or -(1 + enum rm_skip). */
int rm_appscsv_row(struct rm_appscsv *p, const struct rm_csv_row *row, struct rm_app_row *out);

struct rm_apps_gpu {
    bool seen;
    char uuid[64];
    struct rm_stat workload, other, unknown; /* per sample: the sums described above */
};

struct rm_app_proc {
    int gpu;
    long long pid;
    char name[64];
    int in_workload;   /* 1 once seen in the workload; else 0, or -1 when never known */
    double peak_mb;    /* NaN when no row gave memory */
    struct rm_stat sm; /* SM % over the rows that gave one */
    uint64_t samples;
    uint64_t last_sample; /* the aggregate's sample it was last seen in, plus 1 */
};

struct rm_apps_agg {
    struct rm_apps_gpu gpu[RM_APPS_MAX_GPUS];
    struct rm_app_proc *procs;
    size_t nprocs, capprocs;
    /* Per phase, per GPU: workload VRAM per sample. ph[p] holds phn[p] GPUs (NULL: none), made
     * when the phase first has a sample, so memory follows the phases met, not those named. */
    struct rm_stat **ph;
    unsigned char *phn;
    size_t nph;
    /* Rows from nvidia-smi's own output: no process is known to be the workload's, so only
     * the unknown sums are kept (a workload of 0 would be a claim). */
    bool no_workload;
    /* The sample being added up. */
    bool open;
    int64_t t_ns;
    uint64_t nsample; /* samples closed so far */
    uint64_t seen;    /* bit g: GPU g has a row in this sample (GPUs >= 64 are not counted) */
    uint64_t idle;    /* bit g: GPU g's idle row is in this sample */
    double w[RM_APPS_MAX_GPUS], o[RM_APPS_MAX_GPUS], u[RM_APPS_MAX_GPUS];
};

void rm_apps_init(struct rm_apps_agg *a, size_t nphases);
void rm_apps_free(struct rm_apps_agg *a);
/* True when row starts a new sample: call rm_apps_close with the phases of the open one.
 * A row's new time starts one; so does, for a row without time, its GPU's idle row or its
 * process met again in the open sample. */
bool rm_apps_starts_sample(const struct rm_apps_agg *a, const struct rm_app_row *row);
/* Adds the open sample to the GPUs' figures and to each phase in phases[0..n). */
void rm_apps_close(struct rm_apps_agg *a, const size_t *phases, size_t n);
void rm_apps_add(struct rm_apps_agg *a, const struct rm_app_row *row);
/* Folds src (another file of the same session) into dst. */
void rm_apps_merge(struct rm_apps_agg *dst, const struct rm_apps_agg *src);
/* GPU g's workload VRAM in phase p, or NULL when the phase had no sample of it. */
const struct rm_stat *rm_apps_phase_stat(const struct rm_apps_agg *a, size_t p, int g);

#endif
