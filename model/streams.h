/* The ONE table of a session's streams: each collector writes one stream, and every layer
 * that names, lists, reads or exports a stream takes it from here.
 *
 * Adding a collector starts with one row here (docs/ARCHITECTURE.md lists the other places).
 */
#ifndef RUNMON_MODEL_STREAMS_H
#define RUNMON_MODEL_STREAMS_H

#include <stddef.h>

/* How the summary reads a file. */
enum rm_input_kind {
    RM_INPUT_GPU_CSV,   /* nvidia-smi --query-gpu CSV (runmon's gpu.csv or a bare file) */
    RM_INPUT_DMON_TEXT, /* nvidia-smi dmon's own output */
    RM_INPUT_DMON_CSV,  /* runmon's dmon.csv */
    RM_INPUT_CPU_CSV,
    RM_INPUT_PROC_CSV,
    RM_INPUT_APPS_CSV, /* runmon's apps.csv (per-process GPU memory, from nvidia-smi pmon) */
    RM_INPUT_COUNT
};

/* The streams of a session, in the order summaries read them and collectors are listed. */
enum rm_stream_id {
    RM_STREAM_GPU,
    RM_STREAM_DMON,
    RM_STREAM_CPU,
    RM_STREAM_PROC,
    RM_STREAM_APPS,
    RM_STREAM_COUNT
};

struct rm_stream_def {
    const char *name;        /* "gpu": the collector's and the stream's name in every file */
    const char *stem;        /* active file "<stem>.csv", sealed "<stem>-NNNNNN.csv" */
    enum rm_input_kind kind; /* the summary reader of its files */
    const char *what;        /* one line for humans */
};
extern const struct rm_stream_def rm_stream_defs[RM_STREAM_COUNT];

/* The stream named name, or -1. */
int rm_stream_by_name(const char *name);

/* Segment file names. Active: "<stem>.csv"; sealed: "<stem>-NNNNNN.csv" (number >= 1, at
 * least six digits). Writes the name for number (0: the active file); -1 if it does not fit. */
int rm_segment_name(char *out, size_t cap, int stream, int number);

/* True when name is a segment file name of some stream; sets *stream and *sealed. */
int rm_segment_parse_name(const char *name, int *stream, int *sealed);

#endif
