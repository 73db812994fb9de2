/* Private to summary/: what the files of the summary engine share, and nothing outside
 * summary/ may include it (the public API is summary/summary.h).
 *
 *   summary.c  the summary object (inputs added) and the session-folder entry
 *   engine.c   scanning one file into a file_agg, and the worker threads that scan them all
 *   segagg.c   a file_agg to and from JSON (the per-segment aggregates of a sink manifest)
 *   merge.c    merging the files of one source (query-gpu, dmon), pairing GPUs across both
 *   build.c    the ResourceSummary JSON document (rm_summary_build)
 */
#ifndef RUNMON_SUMMARY_SUMMARY_INTERNAL_H
#define RUNMON_SUMMARY_SUMMARY_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <jansson.h>
#include <pcre2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/streams.h"
#include "summary/apps.h"
#include "summary/dmon_read.h"
#include "summary/gpucsv.h"
#include "summary/hostcsv.h"
#include "summary/runlog_read.h"
#include "summary/sample.h"
#include "summary/stats.h"
#include "summary/summary.h"

/* The kinds' names in files and segments ("gpu_csv", ...), by enum rm_input_kind. */
extern const char *const rm_input_kind_names[RM_INPUT_COUNT];

#define RM_GPU_KEY_MAX 80

struct gpu_slot {
    char key[RM_GPU_KEY_MAX];
    size_t keylen;
    int index; /* -1 when unknown */
    char uuid[64], name[96], pci[32];
    struct rm_gpu_stats st;
    uint64_t last_group;
};

/* One source's GPUs: a growable table keyed by identity. */
struct gpu_table {
    struct gpu_slot *s;
    size_t n, cap;
    size_t hint;
};

/* A stretch of one phase's window inside a spacing between two samples. */
struct span_piece {
    size_t phase;
    int64_t a, b;
};
struct span_buf {
    struct span_piece *v;
    size_t n, cap;
};

/* One phase's part of one file, made when a sample or a spacing first falls in the phase. */
struct phase_acc {
    uint32_t stamp;
    bool used;
    struct rm_gpu_stats *gpu; /* by slot index of the owning table */
    size_t ngpu;
    struct rm_host_stats *host; /* NULL until a host sample */
};

struct file_agg {
    enum rm_input_kind kind;
    char *path; /* NULL for a pre-aggregated segment */
    bool strict;
    uint64_t bytes;
    struct gpu_table gpus;
    struct rm_stat total_power; /* per sample group: the sum over GPUs */
    struct rm_host_stats host;
    uint64_t rows, skipped[RM_SKIP_COUNT];
    uint64_t gaps;
    int64_t gap_total_ns, first_ns, last_ns, interval_ns, gap_ns;
    char note[1024];
    int rc;
    char err[512];

    /* Scan state. */
    union {
        struct rm_gpucsv gpu;
        struct rm_dmon_map dmon;
        struct rm_hostcsv host;
        struct rm_appscsv apps;
    } * parser;
    struct rm_apps_agg *apps; /* RM_INPUT_APPS_CSV: per-process figures */
    const char *gpu_fields, *gpu_fields_src;
    int gpu_count; /* session.json's GPUs: rows without identity, time or name cycle by it */
    bool group_open, group_has_power;
    int64_t group_t, prev_t;
    uint64_t group_id;
    int pos;
    double group_power;
    const struct rm_runlog *rl;
    struct phase_acc **ph; /* [phase], each NULL until met (rm_file_phase) */
    size_t nph;
    uint32_t stamp;
    int64_t phase_t;
    size_t *plist, nplist, capplist;
    struct span_buf spans;

    /* One chunk of a file parsed in parallel (engine.c): its bytes [part_off, part_end). */
    uint64_t part_off, part_end;
    bool part_quoted; /* the chunk holds a '"': a quoted field may cross a boundary */
    void *part_start; /* a copy of the parser state the chunk started in */

    json_t *seg_phases; /* a segment's per-phase partials, until placed by phase path */
};

struct rm_summary {
    struct rm_summary_opts opts;
    struct file_agg **jobs;
    size_t njobs, capjobs;
    char **runlogs;
    size_t nrunlogs;
    bool runlog_strict;
    json_t *session;
    pcre2_code *re;
    pcre2_match_data *md;
    struct rm_runlog rl;
    _Atomic uint64_t progress;
    int64_t interval_ns;
    char gpu_fields[4096];
    const char *gpu_fields_src; /* "--gpu-fields" or "session.json gpu_fields" */
};

/* The files of one source (query-gpu or dmon) merged, in the order they were added. */
struct source {
    struct gpu_table t;
    struct rm_stat total_power;
    int64_t gap_ns;
    struct rm_gpu_stats **ph; /* [phase][slot] */
    size_t *phn;
    size_t nph;
    uint64_t files;
};

/* One GPU of the summary: its slot in the query-gpu source, in the dmon source, or both. */
struct final_gpu {
    int index;
    const struct gpu_slot *q, *d;
    size_t qi, di;
};

/* ---- engine.c ---- */

/* The slot of key in t, or (size_t)-1. */
size_t rm_gpu_table_find(struct gpu_table *t, const char *key, size_t len);
/* A new zeroed slot for key (index -1); returns its position. */
size_t rm_gpu_table_add(struct gpu_table *t, const char *key, size_t len);
void rm_file_agg_init(struct file_agg *f, enum rm_input_kind kind, const char *path);
void rm_file_agg_free(struct file_agg *f);
/* Phase p's part of f (of f->rl's phases), made when missing. */
struct phase_acc *rm_file_phase(struct file_agg *f, size_t p);
/* GPU slot i's statistics in phase p of f, made when missing; marks the phase used. */
struct rm_gpu_stats *rm_file_phase_gpu(struct file_agg *f, size_t p, size_t i);
/* Frees f's per-phase parts (once they were merged). */
void rm_file_agg_drop_phases(struct file_agg *f);
/* Reads f->path into f; f->rc 0, 1 (runtime failure) or 2 (unusable, f->err says why).
 * interval_ns 0: the file's own median spacing. progress (may be NULL) counts bytes. */
void rm_scan_file(struct file_agg *f, int64_t interval_ns, _Atomic uint64_t *progress);
/* Scans every job that has a path, in parallel (opts.threads), with progress on stderr. */
void rm_summary_run_jobs(struct rm_summary *s);

/* The spacing (t0, p0) -> (t1, p1) of one GPU cut to the phases' windows: for each phase with
 * a window overlapping it, add(ctx, phase, kind, ns, joules) once, where ns is the length of
 * the union of that phase's windows clipped at t0 and t1, and joules the integral of power
 * taken as the straight line from p0 to p1 over those stretches (model/energy.h's rule for a
 * missing end). kind is the spacing's (a gap: ns unknown, no joules); a spacing going
 * backwards or of length 0 adds nothing. buf is scratch space kept by the caller. */
void rm_phase_spans(const struct rm_runlog *rl, struct span_buf *buf, int64_t t0, double p0,
                    int64_t t1, double p1, int64_t gap_ns,
                    void (*add)(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns,
                                double joules),
                    void *ctx);

/* ---- summary.c ---- */

/* Appends a new job (a file, or a segment when path is NULL) to s. */
struct file_agg *rm_summary_push_job(struct rm_summary *s, enum rm_input_kind kind,
                                     const char *path);

/* ---- segagg.c ---- */

/* A JSON string of v, or null when v is NULL or empty. */
json_t *rm_str_or_null(const char *v);
/* Places a segment's per-phase partials (its aggregate's "phases") in f->ph by the phase
 * paths of rl. */
void rm_segment_resolve_phases(struct file_agg *f, const struct rm_runlog *rl);

/* ---- merge.c ---- */

/* Adds f's GPUs and phases to src; rl (may be NULL) gives the phase windows that the spacing
 * from one file's last sample of a GPU to the next file's first is cut to. */
void rm_source_merge(struct source *src, const struct file_agg *f, size_t nph,
                     const struct rm_runlog *rl);
void rm_source_free(struct source *src);
/* The GPUs of both sources, paired by index and ordered by it (unknown indexes last).
 * Returns the count; *out is malloc'd. */
size_t rm_pair_gpus(json_t *session, const struct source *q, const struct source *d,
                    struct final_gpu **out);
/* A GPU's uuid, name and PCI bus id: from its slots, else from session.json. */
void rm_final_gpu_ident(json_t *session, const struct final_gpu *g, const char **uuid,
                        const char **name, const char **pci);

#endif
