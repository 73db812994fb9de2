/* The RunLog (runlog.jsonl) as the summary needs it: phase windows and monitor events.
 *
 * Phases come from `phase` lines (a completed phase: window [ts - seconds, ts)) and from
 * phase_enter/phase_exit pairs matched by (pid, path); an enter never closed is closed at
 * the session end (or left open-ended) and counted `unterminated`. A last line without "\n"
 * is torn and skipped; other lines that are not JSON objects with a time are garbage. The
 * lines runmon's writers write (flat objects of plain strings and numbers) are read without a
 * JSON tree, each as jansson would read it, or handed to jansson (events, nesting, escapes,
 * bytes past ASCII, a number it cannot read exactly): a run log of 300,000 phases is read in
 * a fifth of the time.
 *
 * At most max_phases distinct paths get a phase of their own, in order of first appearance
 * (RM_MAX_PHASES_DEFAULT, or RUNMON_SUMMARY_MAX_PHASES); the paths after them are folded into
 * one more phase, RM_OTHER_PHASES_PATH, so that a loop naming a phase per step costs a few
 * bytes per path (a 64-bit hash) rather than a phase's figures in every layer above. That
 * number is a budget of phase rows times GPUs (max_cells): once the GPUs are known, the
 * summary lowers the cap to max_cells / GPUs with rm_runlog_fold_after.
 */
#ifndef RUNMON_SUMMARY_RUNLOG_READ_H
#define RUNMON_SUMMARY_RUNLOG_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "summary/metrics.h"

#define RM_OPEN_END INT64_MAX
#define RM_RUNLOG_MAX_LINE (1u << 20)
#define RM_RUNLOG_MAX_ALERTS 100
#define RM_MAX_PHASES_DEFAULT 10000
#define RM_OTHER_PHASES_PATH "(other phases)"
#define RM_NO_PHASE ((size_t)-1)

/* A framework's own memory peaks (phase_exit "framework", docs/FORMATS.md), MiB per device
 * index; NaN where none was reported. */
#define RM_FW_MAX_DEVICES 64
struct rm_framework_peaks {
    char name[16]; /* "torch", "jax", ... (the last one reported) */
    double allocated_mb[RM_FW_MAX_DEVICES], reserved_mb[RM_FW_MAX_DEVICES];
};

struct rm_phase {
    char *path;
    struct rm_framework_peaks *fw; /* NULL: no exit line of this phase carried "framework" */
    int depth;                     /* -1 when unknown (`phase` lines) */
    uint64_t count, ok, error, unterminated;
    double total_s; /* from the lines' seconds; unterminated ones are added at finish */
    int64_t first_start_ns, last_end_ns;
};

struct rm_phase_window {
    int64_t start_ns, end_ns; /* [start, end); end may be RM_OPEN_END */
    size_t phase;
};

struct rm_open_phase {
    long long pid;
    size_t phase;     /* RM_NO_PHASE: a path the keep filter left out */
    uint64_t pathkey; /* the path's hash: folded paths share a phase, not their windows */
    int64_t start_ns;
};

/* Hashes of paths without a phase of their own: folded into the other phase, or left out. */
struct rm_pathset {
    uint64_t *key; /* 0 = empty */
    unsigned char *folded;
    size_t n, cap;
};

struct rm_phase_index {
    struct rm_phase *phases;
    size_t nphases, capphases;
    size_t *hash; /* open addressing over phases by path, 0 = empty, else index + 1 */
    size_t hashcap;
    struct rm_phase_window *win;
    size_t nwin, capwin;
    int64_t *maxend; /* after rm_runlog_finish: windows sorted by start, and the largest end
                        in each node's subtree of the implicit interval tree over them */
    int levels;      /* that tree's height */
    struct rm_open_phase *open;
    size_t nopen, capopen;

    size_t max_cells;                   /* the budget of phase rows x GPUs */
    size_t max_phases;                  /* paths with a phase of their own */
    size_t other;                       /* the phase of the paths past them, or RM_NO_PHASE */
    uint64_t folded_paths;              /* distinct paths folded into it */
    struct rm_pathset extra;            /* paths folded or left out */
    bool (*keep)(void *, const char *); /* set before reading: paths it rejects are left out */
    void *keep_ctx;

    int64_t first_ns, last_ns, session_start_ns, session_end_ns; /* RM_NO_TIME when unknown */
    bool has_jax;
    double jax_peak_bytes;
    struct rm_framework_peaks *fw; /* over every phase; NULL when none */
    json_t *collectors;            /* name -> {degraded, recovered, unavailable, last_error} */
    json_t *alerts;                /* the first RM_RUNLOG_MAX_ALERTS warning/critical events */
    json_t *params;                /* the `params` lines' objects merged (a later key wins) */
    char *sweep;                   /* the last `params` line's "sweep", or NULL */
    uint64_t bad_params;           /* `params` lines whose params is not an object, or whose
                                      sweep is not a string */
    char bad_params_first[128];    /* the first one's offending value, as JSON text, cut */
    uint64_t warnings, criticals, nonconforming;
    uint64_t lines, events, torn, garbage, bad_time, long_lines, unmatched_exits;

    struct rm_metrics metrics; /* metric and objective lines (per phase after
                                  rm_runlog_phase_metrics) */
    char **files;              /* the run logs read, and the bytes read of each: what */
    uint64_t *file_bytes;      /* rm_runlog_phase_metrics reads again */
    size_t nfiles;

    uint64_t fast_lines; /* lines read without a JSON tree */
    bool general_only;   /* every line through a JSON tree (tests: the fast reader must agree) */
    char *scratch;       /* the fast reader's copy of a line's strings */
    size_t capscratch;
};

/* max_phases and max_cells from RUNMON_SUMMARY_MAX_PHASES (a positive integer), else the
 * default. */
void rm_runlog_init(struct rm_phase_index *r);
void rm_runlog_free(struct rm_phase_index *r);
/* RUNMON_SUMMARY_MAX_PHASES: its value, or RM_MAX_PHASES_DEFAULT when unset; *bad is set
 * when it is set to something other than a positive integer (the default is used then). */
size_t rm_runlog_max_phases_env(bool *bad);
/* Leaves out, while reading, the phases whose path keep() rejects: they take no phase and
 * count nothing toward max_phases (exits still pair with their enters). Before reading. */
void rm_runlog_set_keep(struct rm_phase_index *r, bool (*keep)(void *, const char *),
                        void *keep_ctx);
/* The other phase, made when there is none yet (a segment's partial of folded paths). */
size_t rm_runlog_other_phase(struct rm_phase_index *r);
/* Lowers the cap to rows paths (at least 1), before rm_runlog_finish: the phases of the paths
 * past the first rows join the other phase (their lines, windows and open enters) and their
 * paths count as folded, as if the run log had been read with that cap. */
void rm_runlog_fold_after(struct rm_phase_index *r, size_t rows);
/* The paths with a row of their own when gpus GPUs share the budget: max_cells / gpus, at
 * least 1 (gpus 0 counts as 1). */
size_t rm_runlog_rows_for(const struct rm_phase_index *r, size_t gpus);
/* Adds phase from's lines (counts, seconds, times, framework peaks) to into. */
void rm_phase_fold(struct rm_phase *into, const struct rm_phase *from);
/* The phase of path: its own, the other phase for a folded path, else RM_NO_PHASE. */
size_t rm_runlog_phase_of(const struct rm_phase_index *r, const char *path);
void rm_runlog_line(struct rm_phase_index *r, const char *line, size_t len, bool torn);
int rm_runlog_read_file(struct rm_phase_index *r, const char *path, char *err, size_t errsz);
/* Closes phases still open at end_ns (RM_NO_TIME: open-ended), keeps only phases whose path
 * keep() accepts (NULL keeps all), and builds the window index. */
void rm_runlog_finish(struct rm_phase_index *r, int64_t end_ns, bool (*keep)(void *, const char *),
                      void *keep_ctx);
/* After finish: the metric lines again (the bytes rm_runlog_read_file read of each file; lines
 * given to rm_runlog_line are not kept), each value added to the metrics of every phase
 * whose window holds the line's time (a phase once per line). Memory stays the statistics';
 * a run log without metric lines is not read again. Returns 0, or -1 with err. */
int rm_runlog_phase_metrics(struct rm_phase_index *r, char *err, size_t errsz);

/* Calls fn for each window containing t (start <= t < end); after finish only. */
void rm_runlog_windows_at(const struct rm_phase_index *r, int64_t t,
                          void (*fn)(void *ctx, size_t phase), void *ctx);
/* Calls fn for each window overlapping [t0, t1) (start < t1 and end > t0), with its bounds;
 * after finish only. */
void rm_runlog_windows_over(const struct rm_phase_index *r, int64_t t0, int64_t t1,
                            void (*fn)(void *ctx, size_t phase, int64_t start, int64_t end),
                            void *ctx);

#endif
