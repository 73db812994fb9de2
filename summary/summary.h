/* ResourceSummary: what the GPUs and CPUs did during a run, per GPU, per phase, in total.
 *
 * The engine is fed inputs (files, or per-segment aggregates already computed by the
 * recorder), scans the files in parallel with bounded memory, merges everything in the
 * order it was added (segments oldest first) and builds the summary as a JSON object whose
 * layout docs/FORMATS.md describes ("format": "runmon-summary", "schema_version": 1).
 */
#ifndef RUNMON_SUMMARY_SUMMARY_H
#define RUNMON_SUMMARY_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "model/streams.h"

#define RM_SUMMARY_SCHEMA_VERSION 1

struct rm_summary_opts {
    const char *phase_regex; /* PCRE2; keep phases whose path matches (NULL: all) */
    int threads;             /* 0: one per file up to the number of online CPUs */
    bool progress;           /* progress on stderr when a scan takes over a second */
    double interval_s;       /* sampling interval; 0: session.json, else median spacing */
    const char *gpu_fields;  /* field list for headerless gpu CSVs (NULL: session.json/legacy) */
    /* When set, each row of "phases" goes here as soon as it is made (the callee owns it),
     * with doc the document's keys so far, and "phases" stays empty: a writer that streams
     * the rows out never holds them all (10,000 rows' JSON would be ~120 MB). */
    void (*phase_row)(void *ctx, const json_t *doc, json_t *row);
    void *phase_row_ctx;
};

struct rm_summary;

struct rm_summary *rm_summary_new(const struct rm_summary_opts *opts);
void rm_summary_free(struct rm_summary *s);
/* Files are read in the order added within each kind (sealed segments first). */
int rm_summary_add_file(struct rm_summary *s, enum rm_input_kind kind, const char *path);
/* A file the user named (`runmon summary FILE`, --gpu-csv FILE ...): as rm_summary_add_file,
 * but a regular file's head is read first (summary/sniff.h). nvidia-smi's per-process outputs
 * are read as what their header names (pmon text, --query-compute-apps or
 * --query-accounted-apps CSV) whatever kind was given, and text that is neither runmon's nor
 * nvidia-smi's is refused ("not a runmon or nvidia-smi file") even where rows parse. */
int rm_summary_add_named_file(struct rm_summary *s, enum rm_input_kind kind, const char *path);
int rm_summary_add_runlog(struct rm_summary *s, const char *path);
/* session.json's object (borrowed; a reference is kept). */
void rm_summary_set_session(struct rm_summary *s, json_t *session);
/* A pre-aggregated segment, as rm_summary_segment_to_json writes it (for sink manifests).
 * Such a segment adds to gpus and totals but not to phases (it has no samples). */
int rm_summary_add_segment(struct rm_summary *s, const json_t *segment, char *err, size_t errsz);
/* Whether a sealed segment's stored aggregate of kind k holds everything a summary takes from
 * it; if not (apps.csv: per-process figures), its rows are read while the file is on disk. */
bool rm_summary_segment_whole(enum rm_input_kind k);
/* Scans everything and builds the summary. Returns 0, 1 on a runtime failure, 2 when an
 * input is unusable (no data at all, unreadable); err says which file. */
int rm_summary_build(struct rm_summary *s, json_t **out, char *err, size_t errsz);

/* Aggregates one file into a segment object (what the recorder stores per sealed segment).
 * interval_s as in the options. Returns NULL with err set. */
json_t *rm_summary_segment_from_file(enum rm_input_kind kind, const char *path, double interval_s,
                                     char *err, size_t errsz);

/* The phases of a session folder's run log as the aggregates of its segment files take them,
 * read once for several files (a rebuild adopting a folder's files, a batch of seals): each
 * file read again would parse the whole run log per file. */
struct rm_segment_phases;
/* The phases of dir/runlog.jsonl; NULL when there is no run log or it holds no phase (the
 * aggregates then keep none, as rm_summary_segment_from_file's). */
struct rm_segment_phases *rm_summary_segment_phases(const char *dir);
void rm_summary_segment_phases_free(struct rm_segment_phases *ph);
/* rm_summary_segment_from_file with the run log's phases already read (ph may be NULL). */
json_t *rm_summary_segment_from_file_with(enum rm_input_kind kind, const char *path,
                                          double interval_s, const struct rm_segment_phases *ph,
                                          char *err, size_t errsz);

/* The whole summary of a session folder (session.json, gpu*.csv, dmon*.csv, cpu*.csv,
 * proc*.csv, runlog.jsonl, whichever exist). The recorder calls this at the end of a
 * session. Returns as rm_summary_build. */
int rm_summary_session_dir(const char *dir, const struct rm_summary_opts *opts, json_t **out,
                           char *err, size_t errsz);

#endif
