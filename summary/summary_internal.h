/* Private to summary/: the summary object's layout (summary/summary.h is the public API).
 * The files of the engine, each with its own header, in the order they depend on each other
 * (each uses only those below it; docs/ARCHITECTURE.md, and tests/check_layers.sh checks it):
 *
 *   summary.c   the summary object (its inputs) and the whole summary of a session folder
 *   build.c     the ResourceSummary JSON document (rm_summary_build)
 *   merge.c     the files of one source merged, the GPUs of both sources paired (merge.h)
 *   pool.c      the threads that scan every file (pool.h)
 *   segagg.c    a file's aggregate to and from JSON: sealed segments (segagg.h)
 *   chunks.c    a large GPU file cut into chunks and folded back (chunks.h)
 *   scan.c      one file read into its aggregate by the reader of its kind (scan.h)
 *   fileagg.c   one file's aggregate and its samples folded in (fileagg.h)
 *   spans.c     a spacing between samples cut to the phases' windows (spans.h)
 *
 * below them the readers (csvread, gpucsv, dmon_read, hostcsv, apps, runlog_read), the
 * statistics (stats, sample) and segments.c (a stream's files in a folder).
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

#include "summary/fileagg.h"
#include "summary/runlog_read.h"
#include "summary/summary.h"

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
    struct rm_phase_index rl;
    _Atomic uint64_t progress;
    int64_t interval_ns;
    char gpu_fields[4096];
    const char *gpu_fields_src; /* "--gpu-fields" or "session.json gpu_fields" */
};

#endif
