/* The sink's files that let it scale with its history (docs/FORMATS.md, "Sink directory"):
 *
 *  - DIR/index.jsonl: a header line, then one JSON line per session event (created, ended,
 *    interrupted, updated, adopted). Each line is the session's whole listing record, so the
 *    newest line of a session is the one that counts; a line that has an older one of the
 *    same session carries "supersedes": true. Appended with one write() to an O_APPEND file
 *    under the sink lock, compacted (one line per session, temp file + rename) when the
 *    superseded lines become a large share, never rewritten per flush.
 *  - DIR/<id>/state.json: one session's manifest entry and its segments (with their
 *    aggregates), replaced atomically by its recorder at each flush.
 *  - DIR/sink.json: sink-wide totals kept up to date incrementally under the lock (counters,
 *    the running sessions' contributions, the sealed segments still on disk for retention),
 *    so no flush reads anything whose size grows with the number of sessions.
 *
 * Readers stream the index in two passes with memory bounded by its superseded lines.
 */
#ifndef RUNMON_SINK_INDEX_H
#define RUNMON_SINK_INDEX_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sink/names.h"

#define RM_INDEX_FORMAT "runmon-sink-index"
#define RM_STATE_FORMAT "runmon-session-state"
#define RM_TOTALS_FORMAT "runmon-sink-totals"
#define RM_SINK_SCHEMA_VERSION 1
/* The temp files of the files written only under the sink lock, in the sink's folder: one
 * name each, so one a writer killed mid-write left is removed by name at the next open. */
#define RM_STATE_TMP ".state.json.tmp"
#define RM_TOTALS_TMP "sink.json.tmp"
#define RM_INDEX_TMP ".index.jsonl.tmp"
/* Compaction: when at least this many lines are superseded and they are a third of all. */
#define RM_INDEX_COMPACT_MIN 64

/* ---- index.jsonl ---- */

/* The index line of a session: event, session_id, status, host, pid, started_at, ended_at,
 * exit_code, signal, command, files and bytes (the unpruned segments of doc's segments). doc is a
 * session document (rm_state_load's shape). */
json_t *rm_index_line(const json_t *doc, const char *event);

/* Appends line (with "supersedes": true when set) as one write(); a torn last line left by a
 * crash is cut first. Call under the sink lock. Counts the line in totals (may be NULL).
 * 0, or -1 with errno. */
int rm_index_append(const char *sink_dir, json_t *line, int supersedes, json_t *totals);

enum {
    RM_REC_ID,
    RM_REC_STATUS,
    RM_REC_HOST,
    RM_REC_STARTED,
    RM_REC_ENDED,
    RM_REC_EXIT,
    RM_REC_UNWRITTEN, /* what the session's end could not write (a non-empty array), if any */
    RM_REC_SIGNAL,
    RM_REC_NRAW
};

/* One index line as listings read it (no JSON tree): the fields, decoded, cut to their
 * buffers; line/len the whole line for readers that need every key (json_loadb). */
struct rm_index_rec {
    const char *line;
    size_t len;
    char session_id[RM_SESSION_ID_MAX + 1], status[32], host[256], started_at[64], ended_at[64];
    int has_ended, has_exit, supersedes;
    long long exit_code, files, bytes, pid;
    long long signal;    /* the signal that stopped the run; 0 when null or absent */
    const char *command; /* the "command" array's JSON text in line, or NULL */
    size_t command_len;
    /* The JSON text of these keys' values in line (p NULL when absent), for exact output. */
    struct {
        const char *p;
        size_t n;
    } raw[RM_REC_NRAW];
};
/* 1 when line is a JSON object with a session_id, 0 otherwise. */
int rm_index_rec_parse(const char *line, size_t len, struct rm_index_rec *r);
/* The next word of the record's command (decoded) into out; *pos starts at 0. 1, or 0 at
 * the end. */
int rm_index_rec_word(const struct rm_index_rec *r, size_t *pos, char *out, size_t cap);

/* The next element of the command array as JSON text (*v, *n); *pos starts at 0. */
int rm_index_rec_element(const struct rm_index_rec *r, size_t *pos, const char **v, size_t *n);

/* Calls fn once per session, in the order of the sessions' first lines (the order they were
 * made in), with the parsed newest line of the session (borrowed). fn returns non-zero to
 * stop. Two passes; the memory is a table of the sessions that have superseded lines (at
 * most the superseded lines, which compaction bounds), never one entry per session. Returns 0, 1
 * when there is no index, -1 when it is unreadable or its header is not an index header (err says
 * why). */
typedef int (*rm_index_fn)(void *ctx, const struct rm_index_rec *r);
int rm_index_each(const char *sink_dir, rm_index_fn fn, void *ctx, char *err, size_t errsz);

/* The index's size in bytes (0 when there is none). */
int64_t rm_index_size(const char *sink_dir);

/* The newest whole line of session id, scanning back from the index's end to offset from (a
 * line start; 0: the whole index), parsed (a new reference), or NULL. Its cost is the lines
 * written after that one: recovery reads back only as far as the session's own lines. */
json_t *rm_index_newest(const char *sink_dir, const char *id, int64_t from);

/* Cuts a torn last line (a writer that died mid-line, a cut file), as the next append
 * would. Under the sink lock. Returns 1 when a line was cut (id: its session, when that much
 * of it was written, else ""), 0 when there was none, -1 on an error. */
int rm_index_cut_torn(const char *sink_dir, char *id, size_t idcap);

/* A fresh index written to a temp file and renamed into place. */
struct rm_index_out {
    int fd, failed;
    long lines;
    char tmp[4200], path[4200];
};
int rm_index_out_open(struct rm_index_out *o, const char *sink_dir);
void rm_index_out_put(struct rm_index_out *o, json_t *line);
int rm_index_out_commit(struct rm_index_out *o); /* 0, or -1 (the temp file removed) */

/* Compacts the index when totals say enough of it is superseded (under the lock). Returns 1
 * when compacted, 0 when not needed, -1 on failure. */
int rm_index_maybe_compact(const char *sink_dir, json_t *totals);

/* ---- what a writer last wrote: state.json, sink.json ---- */

/* A file a recorder rewrites under the lock every round (its session's state.json, the
 * sink's sink.json): the text it last wrote there, and the tree that text was made from.
 * While the file still holds exactly that text (anyone else who writes it replaces it: a
 * prune, another recorder's round, a recovery), the next round takes the tree instead of
 * reading, parsing and confining the file again. */
struct rm_doc_memo {
    char *text;
    size_t len;
    json_t *tree;
};
void rm_memo_clear(struct rm_doc_memo *m);
/* The tree (the caller's reference) when sink_dir/name holds the memo's text byte for byte,
 * else NULL; the memo is emptied either way (the caller writes it again when it writes the
 * file). */
json_t *rm_memo_take(struct rm_doc_memo *m, const char *sink_dir, const char *name);

/* ---- DIR/<id>/state.json ---- */

/* A session document {"sessions": [entry], "segments": [...]} (the 0.1.0 manifest's shape,
 * for one session) from state.json. 0, 1 when absent, -1 when unreadable. */
int rm_state_load(const char *sink_dir, const char *id, json_t **out);
/* Writes doc as DIR/<id>/state.json atomically. 0, or -1 with errno. */
int rm_state_save(const char *sink_dir, const char *id, const json_t *doc);
/* rm_state_save, durable (fsyncs) or only atomic (rm_json_save_via, not durable: after a
 * power loss the file may be stale, empty or torn; rm_state_load then says unreadable and
 * the sink's recovery rebuilds it from the session's files). */
int rm_state_write(const char *sink_dir, const char *id, const json_t *doc, int durable);
/* rm_state_write, keeping what it wrote in memo (emptied when the write fails). */
int rm_state_write_memo(const char *sink_dir, const char *id, json_t *doc, int durable,
                        struct rm_doc_memo *memo);
/* The session entry of doc (NULL if none). */
json_t *rm_state_session(const json_t *doc);

/* ---- DIR/sink.json ---- */

json_t *rm_totals_new(void);
/* 0, 1 absent, -1 unreadable. */
int rm_totals_load(const char *sink_dir, json_t **out);
/* Derives the counters and writes atomically. 0, or -1 with errno. */
int rm_totals_save(const char *sink_dir, json_t *t);
/* rm_totals_save, durable or only atomic (as rm_state_write). */
int rm_totals_write(const char *sink_dir, json_t *t, int durable);
/* rm_totals_write, keeping what it wrote in memo (emptied when the write fails). */
int rm_totals_write_memo(const char *sink_dir, json_t *t, int durable, struct rm_doc_memo *memo);
/* What a session adds to the totals: its active files and bytes, rows dropped and write
 * errors, from its document. */
json_t *rm_totals_contribution(const json_t *doc);
/* The session is recording: its contribution, replaced at each flush. */
void rm_totals_set_running(json_t *t, const char *id, const char *host, json_int_t pid,
                           json_t *contribution);
/* The session ended: its contribution moves into the finished sums. */
void rm_totals_finish(json_t *t, const char *id, json_t *contribution);
/* A sealed segment entry: listed for retention (once), counted as a rollover. */
void rm_totals_add_sealed(json_t *t, const json_t *seg);
/* A pruned sealed segment (rebuild): counted, not listed. */
void rm_totals_add_pruned(json_t *t, const json_t *seg);
/* Retention over the whole sink from the totals alone: the segments to delete, oldest first,
 * moved from "sealed" to "pruning" (still counted as retained: their files are on disk until
 * deleted) and counted as pruned. A new array of {session_id, file, bytes}. The caller writes
 * the totals before deleting any file (a kill in between leaves the choice in "pruning", for
 * rm_sink_finish_pruning), then rm_totals_pruned for each file gone. A choice that deletes
 * is recorded in "last_prune" (the bytes it kept, the last segment chosen). */
json_t *rm_totals_plan_prune(json_t *t, int files_per_stream, uint64_t total_bytes);
/* Segment (sid, file) of "pruning" is deleted: it leaves the totals. */
void rm_totals_pruned(json_t *t, const char *sid, const char *file);

/* ---- the open sequence ---- */

/* Writes summary.json of session_id of sink_dir (0, or -1 with errno): the summary the end
 * of that session could not write (a full disk), written by the first open whose recovery
 * ends the session (docs/FORMATS.md, "The end's writes"). Building a summary is above the
 * sink's layer: the command sets it (record/end_summary.h); NULL, as at the start: none. */
typedef int (*rm_sink_summary_writer)(const char *sink_dir, const char *session_id);
void rm_sink_set_summary_writer(rm_sink_summary_writer w);

/* What every command runs when it opens a sink: lock; migrate a 0.1.0 manifest.json, or
 * rebuild the index and totals from the session folders when missing or corrupt (or
 * force_rebuild); recovery of the sessions sink.json lists as running (a dead recorder's
 * session becomes "interrupted"); unlock. Returns 0 (a sink), 1 (no sink there), -1 with err
 * (not a directory, or a sink that needs rebuilding but cannot be written). own_id: the
 * session a recorder is about to register itself (a rebuild leaves it out), or NULL. */
int rm_sink_open_index(const char *sink_dir, int force_rebuild, const char *own_id, char *err,
                       size_t errsz);

/* rm_sink_open_index of each of n sinks, as a command that reads several does once before
 * reading them: 0, or -1 with err ("DIR: not a runmon sink ..." where there is none). */
int rm_sinks_open(const char *const *sinks, size_t n, int force_rebuild, char *err, size_t errsz);

/* Under the lock: the totals (a new reference in *tot), rebuilding the index and the totals
 * first when they are missing or corrupt (own_id as for rm_sink_open_index). 0, or -1 (said on
 * stderr). */
int rm_sink_totals_locked(const char *sink_dir, const char *own_id, json_t **tot);

/* Before a recorder creates its session folder: runs the open sequence, then lists the
 * session in sink.json as running (creating the index and sink.json of a new sink), so that
 * the recorder killed at any later moment is found by recovery. 0, or -1 with errno. */
int rm_sink_reserve(const char *sink_dir, const char *id, const char *host, long long pid);

/* For a listing: r is a session's newest index line. When it says running and the session's
 * recorder is dead (sink/liveness.h), the session is finished as recovery would finish it:
 * under the lock, its files mended and its line appended, when the sink can be written;
 * else only decided (the next open that can write mends the files). Returns the line that now
 * stands for the session (a new reference), or NULL when r stands as it is. */
json_t *rm_sink_settle(const char *sink_dir, const struct rm_index_rec *r);

/* Exclusive lock on DIR/.manifest.lock (blocking). A descriptor, or -1 with errno. */
int rm_sink_lock(const char *sink_dir);
void rm_sink_unlock(int fd);

/* Marks segment `file` of another session `id` pruned in its state.json, and when that
 * session is not running, appends its updated index line (its newest line with the files and
 * bytes of its folder, even when state.json cannot be read or written). Under the lock. 0, or
 * -1 when that line could not be appended. */
int rm_sink_note_pruned(const char *sink_dir, json_t *totals, const char *id, const char *file);

/* The unpruned segments of session document doc as the disk has them (sink/recover.c): each
 * one's bytes its file's size, a sealed one whose file is gone marked pruned. Returns how
 * many changed. */
int rm_sink_doc_from_disk(const char *sink_dir, json_t *doc);

/* Retention's figures checked against the disk, under the lock: each of totals' sealed
 * entries takes its file's size (an entry whose file is gone is dropped), the finished
 * sessions' active files and bytes are those of the live files (<stream>.csv) of every
 * session folder running does not list, and a running session's are cut to its files' where
 * they claim more. O(session folders): done only before retention deletes. Returns how many
 * figures disagreed (what: the first, said in words; "" when none). */
int rm_totals_check_disk(const char *sink_dir, json_t *totals, char *what, size_t whatsz);

/* Deletes the files of totals' "pruning" list (retention's choice, written first), marks them
 * pruned (in own_doc for own_id's segments, else in their session's state.json) and takes them
 * out of the list; a file that cannot be deleted stays there for the next round. Under the
 * lock. */
void rm_sink_finish_pruning(const char *sink_dir, json_t *totals, const char *own_id,
                            json_t *own_doc);

#endif
