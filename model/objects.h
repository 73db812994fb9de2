/* The ONE table of the run's and the phases' objects that a stream of host samples feeds
 * (summary.json's "cpu" from cpu.csv and "proc" from proc.csv, the run's in "totals"; "io"
 * from io.csv, "stall" from stall.csv): one row per object (its key, where the run's copy
 * goes, what feeds it, the lead of its text lines, the title of its text table by phase) and
 * one row per figure of an object (its key or path in the object, unit, decimals, whether the
 * run's object only has it, and the outputs that show it: the text summary's lines under
 * Totals, its table by phase, the HTML report's phase table). summary/ writes the objects by
 * walking the rows (each object's engine computes a row's value, summary/objects.h);
 * report/output.c and report/report_tables.c show the rows that name them; summary/held.c
 * and the lines that mix objects read a figure by its row (summary/objects.h's rm_obj_at).
 * The GPUs' figures are model/figures.h's; a metric's statistics are
 * model/objective.h's rm_metric_fields. docs/ARCHITECTURE.md: "Adding a figure".
 */
#ifndef RUNMON_MODEL_OBJECTS_H
#define RUNMON_MODEL_OBJECTS_H

#include <stdbool.h>

/* The objects, in the document's order: X(ENUM, name) makes RM_OBJ_ENUM, and summary/ finds
 * each object's engine as rm_obj_engine_name (summary/objects.c), so a new object is one
 * line here, its rows, and its engine in its own file. */
#define RM_OBJECTS(X) X(CPU, cpu) X(PROC, proc) X(IO, io) X(STALL, stall)

enum rm_obj {
#define RM_OBJ_ENUM(e, n) RM_OBJ_##e,
    RM_OBJECTS(RM_OBJ_ENUM)
#undef RM_OBJ_ENUM
        RM_OBJ_COUNT
};

struct rm_object {
    const char *key; /* its member of the document (or of "totals") and of each phase row */
    bool in_totals;  /* the run's copy is a member of the document's "totals", not of the
                      * document */
    bool host;       /* fed by the host's samples (cpu.csv, proc.csv) that summary/ merges
                      * for the run and each phase (struct rm_host_stats), not by an aggregate
                      * of its own: written for every run, with or without its files */
    struct {
        const char *lead;        /* the first text line's lead under Totals ("  I/O  "), the
                                  * others as many spaces; NULL: no text lines */
        const char *phase_title; /* the text table by phase's title line; NULL: none */
    } text;
};
extern const struct rm_object rm_objects[RM_OBJ_COUNT];

/* The figures, in each object's order in the document (an object's rows together). */
enum rm_obj_fig {
    RM_OF_CPU_SAMPLES,
    RM_OF_CPU_USR_MEAN,
    RM_OF_CPU_USR_MAX,
    RM_OF_CPU_SYS_MEAN,
    RM_OF_CPU_SYS_MAX,
    RM_OF_CPU_IOWAIT_MEAN,
    RM_OF_CPU_IOWAIT_MAX,
    RM_OF_CPU_STEAL_MEAN,
    RM_OF_CPU_STEAL_MAX,
    RM_OF_CPU_IDLE_MEAN,
    RM_OF_CPU_IDLE_MAX,
    RM_OF_CPU_MEM_USED_PEAK,
    RM_OF_CPU_MEM_TOTAL,
    RM_OF_CPU_HOST_MEM_PEAK,
    RM_OF_PROC_SAMPLES,
    RM_OF_PROC_RSS_PEAK,
    RM_OF_PROC_CPU_MEAN,
    RM_OF_PROC_CPU_MAX,
    RM_OF_PROC_NPROCS_MAX,
    RM_OF_IO_DISK_READ_MB_S,
    RM_OF_IO_DISK_WRITE_MB_S,
    RM_OF_IO_NET_RX_MB_S,
    RM_OF_IO_NET_TX_MB_S,
    RM_OF_IO_CPU_SOME_PCT,
    RM_OF_IO_CPU_FULL_PCT,
    RM_OF_IO_IO_SOME_PCT,
    RM_OF_IO_IO_FULL_PCT,
    RM_OF_IO_MEMORY_SOME_PCT,
    RM_OF_IO_MEMORY_FULL_PCT,
    RM_OF_IO_TREE_READ_MB_S,
    RM_OF_IO_TREE_WRITE_MB_S,
    RM_OF_IO_TREE_READ_MB,
    RM_OF_IO_TREE_WRITE_MB,
    RM_OF_IO_DISKS,
    RM_OF_IO_INTERFACES,
    RM_OF_IO_TREE_PROCS_MAX,
    RM_OF_IO_TREE_UNREADABLE_MAX,
    RM_OF_IO_RESETS,
    RM_OF_IO_ROWS,
    RM_OF_STALL_SAMPLES,
    RM_OF_STALL_SECONDS,
    RM_OF_STALL_THREADS_MEAN,
    RM_OF_STALL_WAIT_SHARE,
    RM_OF_STALL_WAIT_S,
    RM_OF_STALL_WAITING_THREADS,
    RM_OF_STALL_BLOCKED_SHARE,
    RM_OF_STALL_BLKIO_S,
    RM_OF_STALL_CG_CPU_PCT,
    RM_OF_STALL_CG_IO_PCT,
    RM_OF_STALL_CG_MEMORY_PCT,
    RM_OF_COUNT
};

/* What a row's value is: a number (null when unknown), an integer (null when unknown), or
 * a value of its own shape (an array) that the object's engine writes whole. */
enum rm_obj_kind { RM_OK_REAL, RM_OK_INT, RM_OK_JSON };

enum {
    RM_OF_IN_TEXT = 1u << 0,   /* a text line under Totals (`runmon summary`) */
    RM_OF_IN_PHASES = 1u << 1, /* a column of the object's text table by phase */
    RM_OF_IN_REPORT = 1u << 2, /* a column of the HTML report's phase table */
};

struct rm_obj_figure {
    int obj;          /* its object, enum rm_obj */
    const char *key;  /* its member of the object, or its path there: "usr_pct.mean" is
                       * member mean of the object's member usr_pct */
    const char *unit; /* "" for a count, a share or an array */
    enum rm_obj_kind kind;
    int dec;           /* RM_OK_REAL: its decimals in summary.json */
    bool run_only;     /* the run's object has it, a phase's does not */
    unsigned shown;    /* RM_OF_IN_* */
    bool beside;       /* run only: a member of what holds the run's object ("totals"), written
                        * right after the object, not a member of the object */
    struct {           /* RM_OF_IN_TEXT: "<pre><value><post>" at its place in its line */
        int line, pos; /* from 1 */
        const char *pre, *post;
        int dec;
        bool if_positive; /* shown only when above 0 (a line with none shown is left out) */
    } text;
    struct {     /* RM_OF_IN_PHASES: */
        int col; /* from 1, after PATH */
        const char *head;
        int width, dec;
    } phases;
    struct {              /* RM_OF_IN_REPORT: */
        int col;          /* from 1, after the GPU columns, among every object's */
        const char *head; /* HTML */
        int dec;
    } report;
};
extern const struct rm_obj_figure rm_obj_figures[RM_OF_COUNT];

/* Figure X's key (its path in its object), for a reader of one figure:
 * RM_OBJ_KEY(STALL_WAIT_SHARE); summary/objects.h's rm_obj_at reads it from a phase row or
 * from what holds the run's object. */
#define RM_OBJ_KEY(x) (rm_obj_figures[RM_OF_##x].key)

/* Object o's figure at text line `line`, place pos; in column col of its text table by phase;
 * at column col of the report's phase table (every object's). -1 when none. */
int rm_obj_text_at(int obj, int line, int pos);
int rm_obj_phases_at(int obj, int col);
int rm_obj_report_at(int col);

/* The report's phase table has at most this many objects' columns (test_objects checks it):
 * the page keeps each phase row's values of them. */
#define RM_OBJ_REPORT_MAX 8

#endif
