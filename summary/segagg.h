/* Segments: a file's aggregate as JSON ("runmon-segment-stats"), as the recorder stores it
 * per sealed segment in a sink's state.json, and read back into a file_agg.
 */
#ifndef RUNMON_SUMMARY_SEGAGG_H
#define RUNMON_SUMMARY_SEGAGG_H

#include <jansson.h>
#include <stddef.h>

#include "summary/fileagg.h"
#include "summary/runlog_read.h"

/* Reads a segment aggregate (as rm_summary_segment_from_file writes it) into f, which it
 * initialises (so it can always be freed with rm_file_agg_free's fields). Its per-phase
 * partials are kept for rm_segment_resolve_phases. 0, or -1 with err set. */
int rm_file_agg_from_json(struct file_agg *f, const json_t *j, char *err, size_t errsz);

/* Places a segment's per-phase partials (its aggregate's "phases") in f's phases by the phase
 * paths of rl. */
void rm_segment_resolve_phases(struct file_agg *f, const struct rm_phase_index *rl);

#endif
