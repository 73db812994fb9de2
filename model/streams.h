/* The ONE table of a session's streams: each collector writes one stream, and every layer
 * that names, lists, reads or exports a stream takes it from here.
 *
 * Adding a collector starts with one row here, and one in rm_input_defs for each new kind of
 * file (docs/ARCHITECTURE.md, "Adding a collector", lists the few other places).
 */
#ifndef RUNMON_MODEL_STREAMS_H
#define RUNMON_MODEL_STREAMS_H

#include <stdbool.h>
#include <stddef.h>

/* How the summary reads a file. */
enum rm_input_kind {
    RM_INPUT_GPU_CSV,   /* nvidia-smi --query-gpu CSV (runmon's gpu.csv or a bare file) */
    RM_INPUT_DMON_TEXT, /* nvidia-smi dmon's own output */
    RM_INPUT_DMON_CSV,  /* runmon's dmon.csv */
    RM_INPUT_CPU_CSV,
    RM_INPUT_PROC_CSV,
    RM_INPUT_APPS_CSV,       /* runmon's apps.csv (per-process GPU memory, from nvidia-smi pmon) */
    RM_INPUT_IO_CSV,         /* runmon's io.csv (disks, network, pressure, the tree's bytes) */
    RM_INPUT_PMON_TEXT,      /* nvidia-smi pmon's own output */
    RM_INPUT_COMPUTE_APPS,   /* nvidia-smi --query-compute-apps CSV */
    RM_INPUT_ACCOUNTED_APPS, /* nvidia-smi --query-accounted-apps CSV (one row per life) */
    RM_INPUT_STALL_CSV,      /* runmon's stall.csv (the workload's own stalls) */
    RM_INPUT_COUNT
};

/* The streams of a session, in the order summaries read them and collectors are listed. */
enum rm_stream_id {
    RM_STREAM_GPU,
    RM_STREAM_DMON,
    RM_STREAM_CPU,
    RM_STREAM_PROC,
    RM_STREAM_APPS,
    RM_STREAM_IO,
    RM_STREAM_STALL,
    RM_STREAM_COUNT
};

/* What a stream's collector needs; without it the stream starts out disabled. */
enum {
    RM_NEEDS_NVIDIA_SMI = 1u << 0, /* off with record --no-gpu; unavailable without one */
    RM_NEEDS_COMMAND = 1u << 1,    /* off when recording without a command */
};

/* How `runmon summary FILE` tells a lone file of the stream by its base name. */
enum rm_name_guess {
    RM_GUESS_PREFIX,   /* the name starts with the stem ("cpu_metrics.csv") */
    RM_GUESS_ANYWHERE, /* the stem is anywhere in it, checked before any prefix */
    RM_GUESS_DEFAULT,  /* any other name (one stream) */
};

/* What a stream's rows are about, one stream per subject. The outputs ask by subject, not by
 * stream: the live snapshot's part its collector fills (monitor/latest.h; report/prom.c shows
 * a part while that stream is healthy) and the report's charts of its rows (report_collect.c
 * reads a drawn stream's rows by its subject: the GPU rows are --query-gpu CSV). */
enum rm_stream_subject {
    RM_SUBJECT_NONE,      /* none of its own (dmon fills in the GPU subject's figures) */
    RM_SUBJECT_GPUS,      /* the latest value of each GPU metric, energy */
    RM_SUBJECT_HOST,      /* CPU busy and iowait, host memory */
    RM_SUBJECT_TREE,      /* the command's process tree: resident memory, CPU */
    RM_SUBJECT_PROCESSES, /* the workload's processes on the GPUs */
    RM_SUBJECT_IO,        /* disks, network, pressure stalls, the tree's read/write bytes */
    RM_SUBJECT_STALLS,    /* the workload's threads: run-queue wait, blocked on I/O, its cgroup */
    RM_SUBJECT_COUNT
};

struct rm_stream_def {
    const char *name;        /* "gpu": the collector's and the stream's name in every file */
    const char *stem;        /* active file "<stem>.csv", sealed "<stem>-NNNNNN.csv" */
    enum rm_input_kind kind; /* the summary reader of its files */
    const char *what;        /* one line for humans */
    unsigned needs;          /* RM_NEEDS_* */
    const char *option;      /* `runmon summary --OPTION FILE` */
    const char *option_help; /* its line in `runmon summary --help` */
    enum rm_name_guess guess;
    const char *chart; /* the report's chart group that shows its degraded spans */
    bool drawn;        /* the report reads its rows for charts, by its subject (report_collect.c) */
    enum rm_stream_subject subject; /* what its rows are about */
    bool influx;                    /* its rows go out as InfluxDB lines (record --influx) */
    /* Its rows carry the sample's own time (the query's `timestamp`, dmon's and pmon's -o DT
     * Date and Time): their ts is that time, guarded (arrival_ts_rows counts the rows that
     * fell back), and they may wait for the recorder's next tick; the others are stamped
     * when read (issue 24). */
    bool own_time;
};
extern const struct rm_stream_def rm_stream_defs[RM_STREAM_COUNT];

/* The kinds of file the summary reads. A stream's files are of its kind, or of another kind
 * of the same stream that the file's first character tells (dmon's own text starts '#'). */
struct rm_input_def {
    const char *name; /* "gpu_csv": in stored segment aggregates and messages */
    enum rm_stream_id stream;
    bool hash_first; /* the kind of a file whose first non-blank character is '#' (or
                        that is empty), among its stream's kinds */
};
extern const struct rm_input_def rm_input_defs[RM_INPUT_COUNT];

/* apps.csv's columns, in the file's order (ts first, as in every stream): the apps collector
 * writes them, the summary (summary/apps.c) and `runmon top` find them by name. */
enum rm_apps_col {
    RM_APPS_COL_TS,
    RM_APPS_COL_GPU,
    RM_APPS_COL_UUID,
    RM_APPS_COL_PID,
    RM_APPS_COL_PROCESS,
    RM_APPS_COL_VRAM,
    RM_APPS_COL_SM,
    RM_APPS_COL_IN_WORKLOAD,
    RM_APPS_COL_COUNT
};
/* Their names in the header ("vram_mb"), then NULL. */
extern const char *const rm_apps_cols[RM_APPS_COL_COUNT + 1];

/* The stream of subject, or -1. */
int rm_stream_of_subject(enum rm_stream_subject part);

/* The streams whose rows go out as InfluxDB lines: a bit per stream. */
unsigned rm_streams_influx(void);

/* The stream named name, or -1. */
int rm_stream_by_name(const char *name);

/* The input kind named name ("gpu_csv"), or -1. */
int rm_input_by_name(const char *name);

/* The kind of a file of stream whose first non-blank character is c (EOF when none). */
enum rm_input_kind rm_input_of_stream(int stream, int c);

/* Whether the kind of stream's files is told by their first character (rm_input_of_stream
 * would read something): only then need a file be opened to choose. */
bool rm_stream_sniffed(int stream);

/* The stream a lone file belongs to, guessed from its base name. */
int rm_stream_guess(const char *base);

/* Segment file names. Active: "<stem>.csv"; sealed: "<stem>-NNNNNN.csv" (number >= 1, at
 * least six digits). Writes the name for number (0: the active file); -1 if it does not fit. */
int rm_segment_name(char *out, size_t cap, int stream, int number);

/* True when name is a segment file name of some stream; sets *stream and *sealed. */
int rm_segment_parse_name(const char *name, int *stream, int *sealed);

#endif
