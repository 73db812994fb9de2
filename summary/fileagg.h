/* One file's aggregate (struct file_agg): per GPU (a table keyed by identity), per phase,
 * the host, gaps and times; and folding one sample at a time into it. A file is scanned into
 * one (scan.h), a large file's chunks into one each (chunks.h), and a sealed segment's stored
 * aggregate is read back into one (segagg.h).
 */
#ifndef RUNMON_SUMMARY_FILEAGG_H
#define RUNMON_SUMMARY_FILEAGG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/streams.h"
#include "summary/apps.h"
#include "summary/dmon_read.h"
#include "summary/gpucsv.h"
#include "summary/hostcsv.h"
#include "summary/iocsv.h"
#include "summary/objects.h"
#include "summary/runlog_read.h"
#include "summary/sample.h"
#include "summary/smi_apps.h"
#include "summary/spans.h"
#include "summary/stallcsv.h"
#include "summary/stats.h"

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

/* One phase's part of one file, made when a sample or a spacing first falls in the phase.
 * While no sample falls in it, its figures wait packed (pack.h): rm_file_phase unpacks them,
 * rm_file_park_idle packs those of the phases that the latest sample time did not hit. */
struct phase_acc {
    uint32_t stamp;
    bool used;
    bool open;                /* unpacked (gpu and host below); else packed */
    bool parked;              /* packed at least once */
    struct rm_gpu_stats *gpu; /* by slot index of the owning table */
    size_t ngpu;
    struct rm_host_stats *host;        /* NULL until a host sample */
    uint8_t *gpu_packed, *host_packed; /* while not open */
};

struct file_agg {
    enum rm_input_kind kind;
    char *path; /* NULL for a pre-aggregated segment */
    bool strict;
    int sniffed; /* a file the user named: what its head is (enum rm_sniff); else EMPTY (0) */
    uint64_t bytes;
    struct gpu_table gpus;
    struct rm_stat total_power; /* per sample group: the sum over GPUs */
    struct rm_host_stats host;
    uint64_t rows, skipped[RM_SKIP_COUNT];
    uint64_t gaps;
    int64_t gap_total_ns, first_ns, last_ns, interval_ns, gap_ns;
    char note[1024];
    char ident_note[384]; /* how rows without identity or time were told apart */
    int rc;
    char err[512];

    /* Scan state. */
    union {
        struct rm_gpucsv gpu;
        struct rm_dmon_map dmon;
        struct rm_hostcsv host;
        struct rm_appscsv apps;
        struct rm_iocsv io;
        struct rm_stallcsv stall;
        struct rm_pmon_map pmon;
        struct rm_smi_apps_csv smi_apps;
    } * parser;
    struct rm_apps_agg *apps; /* per-process figures, from apps rows */
    /* model/objects.h's objects of the run fed by this file's rows (io, stall): each its
     * engine's aggregate (summary/objects.h), NULL until its first row */
    void *obj[RM_OBJ_COUNT];
    const char *gpu_fields, *gpu_fields_src;
    int gpu_count; /* session.json's GPUs: rows without identity, time or name cycle by it */
    bool group_open, group_has_power;
    int64_t group_t, prev_t;
    uint64_t group_id;
    int pos;
    double group_power;
    const struct rm_phase_index *rl;
    struct phase_acc **ph; /* [phase], each NULL until met (rm_file_phase) */
    size_t nph;
    uint32_t stamp;
    int64_t phase_t;
    size_t *plist, nplist, capplist;
    size_t *open, nopen, capopen, open_limit; /* phases unpacked since the last parking */
    size_t parked_last, reopened; /* phases the last parking packed; unpacked again since */
    struct span_buf spans;

    /* One chunk of a file parsed in parallel (chunks.c): its bytes [part_off, part_end). */
    uint64_t part_off, part_end;
    bool part_quoted; /* the chunk holds a '"': a quoted field may cross a boundary */
    void *part_start; /* a copy of the parser state the chunk started in */
    /* Rows without time (dmon without -o T) are cut where the GPU that starts each sample
     * group comes again: its key ("i:<index>"), and whether this chunk's last group held it
     * (then the whole file also starts a new group where the next chunk starts). */
    char cut_key[24];
    size_t cut_keylen;
    bool cut_in_group;
    struct rm_strref probe_index; /* the last row read without adding it: its GPU index */

    json_t *seg_phases; /* a segment's per-phase partials, until placed by phase path */
};

/* A MIG instance's row (its uuid "MIG-...", or "MIG " in its name): nvidia-smi's power on it
 * is the whole GPU's, shared by its instances, so sums count it once per GPU. */
bool rm_mig_instance(const char *uuid, const char *name);

/* The slot of key in t, or (size_t)-1. */
size_t rm_gpu_table_find(struct gpu_table *t, const char *key, size_t len);
/* A new zeroed slot for key (index -1); returns its position. */
size_t rm_gpu_table_add(struct gpu_table *t, const char *key, size_t len);

void rm_file_agg_init(struct file_agg *f, enum rm_input_kind kind, const char *path);
void rm_file_agg_free(struct file_agg *f);
/* Phase p's part of f (of f->rl's phases), made when missing, unpacked when packed. */
struct phase_acc *rm_file_phase(struct file_agg *f, size_t p);
/* Phase p's part of f, unpacked, or NULL when f has none. */
struct phase_acc *rm_file_phase_get(struct file_agg *f, size_t p);
/* Packs the figures of phase p (when f has it). Pointers into it are no longer valid. */
void rm_file_park_phase(struct file_agg *f, size_t p);
/* When more than a few hundred phases are unpacked, packs those the latest sample time did not
 * hit (an outer phase spanning the run stays unpacked). Call it where no pointer into a
 * phase's figures is held: the unpacked stay few, so a file meeting 100,000 phases holds
 * them at about 200 bytes each rather than 1.5 KB. When most of what it packed is unpacked
 * again before the next time (phases taken in turn, as a model's layers in each step), the
 * number it lets stay unpacked doubles instead, up to the working set. */
void rm_file_park_idle(struct file_agg *f);
/* GPU slot i's statistics in phase p of f, made when missing; marks the phase used. */
struct rm_gpu_stats *rm_file_phase_gpu(struct file_agg *f, size_t p, size_t i);
/* Frees f's per-phase parts (once they were merged). */
void rm_file_agg_drop_phases(struct file_agg *f);
/* Frees f's part of phase p (once merged): merging phase by phase, the file's and the
 * merged copies of thousands of phases are never both whole. */
void rm_file_agg_drop_phase(struct file_agg *f, size_t p);

/* One sample into f: its GPU's statistics (a new time or the same GPU again starts a sample
 * group), the phases whose windows hold it, and the spacing from the GPU's previous sample
 * cut to the phases' windows. */
void rm_file_add_gpu_sample(struct file_agg *f, const struct rm_gpu_sample *s);
/* proc: a sample of the command's process tree (proc.csv), else of the whole host. */
void rm_file_add_host_sample(struct file_agg *f, const struct rm_host_sample *s, bool proc);
/* One apps.csv row; a new sample time closes the previous sample, in its own phases. */
void rm_file_add_app_row(struct file_agg *f, const struct rm_app_row *row);
/* One io.csv row: its interval into the file's I/O figures and the phases holding its end. */
void rm_file_add_io_row(struct file_agg *f, const struct rm_io_row *row);
/* One stall.csv row: its interval's growth into the run and the phases its time overlaps. */
void rm_file_add_stall_row(struct file_agg *f, const struct rm_stall_row *row);
/* Closes the last apps sample (at the end of the file). */
void rm_file_close_apps(struct file_agg *f);
/* Closes the open sample group (its summed power) and opens the next. */
void rm_file_flush_group(struct file_agg *f);
/* Whether the GPU of key (as the table keys it) has a row in f's open sample group. */
bool rm_file_key_in_group(struct file_agg *f, const char *key, size_t len);
/* Counts a row a reader rejected: rc is -(1 + enum rm_skip). */
void rm_file_skip(struct file_agg *f, int rc);

#endif
