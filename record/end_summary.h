/* The session's summary at the end of `runmon record`: summary.json written as the summary is
 * built, a phase row at a time (report/output.h), and the text on stderr the same way, so the
 * end of a run with thousands of phase rows never holds their JSON.
 */
#ifndef RUNMON_RECORD_END_SUMMARY_H
#define RUNMON_RECORD_END_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>

struct rm_end_summary {
    const char *sink_dir;   /* the sink, or NULL (a plain session folder) */
    const char *session_id; /* the session in the sink */
    const char *dir;        /* the session's folder: summary.json goes there */
    double interval_s;
    bool quiet; /* no text on stderr, no messages */
    /* The session's documents as the recorder holds them, where the end could not write
     * session.json or state.json (NULL: read the file), so the summary says how it ended. */
    const json_t *session_doc, *state_doc;
};

/* summary.json in the session folder (its write tried as the sink's end is: a failed write is
 * tried again from a fresh build, after rm_sink_end_backoff), and the text summary on stderr
 * unless quiet. Sealed segments come from the sink's aggregates (no rescan). -1 when
 * summary.json could not be written, else 0 (also when there was nothing to summarize). */
int rm_end_summary_write(const struct rm_end_summary *e);

/* summary.json of a session of a sink whose end could not write it, quietly (an
 * rm_sink_summary_writer: main sets it). 0, or -1 with errno. */
int rm_end_summary_catch_up(const char *sink_dir, const char *session_id);

#endif
