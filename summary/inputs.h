/* The summary's side of the stream table: one reader per input kind (model/streams.h), the
 * way sysstat keeps one row of callbacks per activity. Scanning (scan.c), chunk planning
 * (chunks.c), segment aggregates (segagg.c) and the build (build.c) ask this table what a kind
 * does instead of switching on it; a new kind of file is one reader and one line here.
 */
#ifndef RUNMON_SUMMARY_INPUTS_H
#define RUNMON_SUMMARY_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/streams.h"
#include "summary/csvread.h"
#include "summary/fileagg.h"

/* Which merged GPU source a kind's GPU samples belong to (build.c pairs the two). */
enum rm_gpu_source {
    RM_GPU_SOURCE_NONE,  /* no GPU samples */
    RM_GPU_SOURCE_QUERY, /* nvidia-smi --query-gpu: the primary figures */
    RM_GPU_SOURCE_DMON,  /* nvidia-smi dmon: fills what the query source lacks */
};

struct rm_input_reader {
    enum rm_input_kind kind; /* its row in model/streams.h's rm_input_defs */
    /* Puts f's parser (f->parser, calloc'd) in its start state. */
    void (*reset)(struct file_agg *f);
    /* One CSV row: 1 for a sample (its time in *t; folded into f when add), 0 for a header,
     * or -(1 + enum rm_skip). NULL for a kind read by line. */
    int (*row)(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t);
    /* One line of a format that is not CSV (nvidia-smi dmon's own text): the same returns.
     * NULL for a CSV kind. */
    int (*line)(struct file_agg *f, const char *line, size_t len, bool torn, bool add, int64_t *t);
    /* Whether two parser states map the columns alike. Set: a large file of this kind is
     * read in chunks (chunks.h), every chunk starting from the state after the first row. */
    bool (*same_map)(const void *a, const void *b);
    /* After the rows: closes what the last rows left open (a sample of several rows). May
     * be NULL. */
    void (*close)(struct file_agg *f);
    /* After the rows, before the parser is freed: what the reader assumed, into f->note.
     * May be NULL. */
    void (*note)(struct file_agg *f);
    enum rm_gpu_source source;
    bool gpu_gaps;       /* gaps are each GPU's own, summed (rows of several GPUs interleave) */
    bool own_spacing;    /* sampled at its own spacing whatever the session's interval */
    bool name_period;    /* without a GPU count, rows with no identity are told apart by the
                            period of their GPU names (scan.c) */
    bool segment_whole;  /* a sealed segment's stored aggregate holds all it adds (else the
                            segment's rows are read while on disk) */
    const char *untimed; /* the note for data rows without a time, NULL when they cannot be */
};

/* The reader of kind k. */
const struct rm_input_reader *rm_input_reader(enum rm_input_kind k);

/* The scan's callbacks (ctx: the struct file_agg): one CSV row, or one line, read by the
 * file's reader and folded into it, a rejected one counted. Here, beside the table, so that
 * the compiler can call the readers directly (one row is a few hundred nanoseconds). */
void rm_input_fold_row(void *ctx, const struct rm_csv_row *row);
void rm_input_fold_line(void *ctx, const char *line, size_t len, bool torn);

#endif
