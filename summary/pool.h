/* Scanning every file of a summary in parallel (opts.threads), with progress on stderr. */
#ifndef RUNMON_SUMMARY_POOL_H
#define RUNMON_SUMMARY_POOL_H

#include "summary/summary_internal.h"

/* Scans every job that has a path (large GPU files in chunks: chunks.h), and places each
 * segment's per-phase partials (segagg.h), on a pool of threads. */
void rm_summary_run_jobs(struct rm_summary *s);

#endif
