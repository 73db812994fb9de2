/* Session documents in the shape of 0.1.0's DIR/manifest.json ("format":
 * "runmon-sink-manifest": "sessions" and "segments" arrays).
 *
 * Pure document handling (load, merge, retention plan, counters, atomic save). Since 0.2 a
 * sink keeps one such document per session (DIR/<id>/state.json, sink/index.h) and the
 * manifest.json of a 0.1.0 sink is only read, to migrate it. The lock (flock on
 * DIR/.manifest.lock) is the sink's one lock.
 */
#ifndef RUNMON_MANIFEST_H
#define RUNMON_MANIFEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define RM_MANIFEST_FORMAT "runmon-sink-manifest"
#define RM_MANIFEST_SCHEMA_VERSION 1

json_t *rm_manifest_new(void);

/* 0 loaded, 1 no manifest, -1 unreadable or not a manifest (err says why). */
int rm_manifest_load(const char *sink_dir, json_t **out, char *err, size_t errsz);

/* Stamps updated_at, recomputes the counters and writes atomically. 0, or -1 with errno. */
int rm_manifest_save(const char *sink_dir, json_t *m);

/* Exclusive lock on DIR/.manifest.lock (blocking). A file descriptor, or -1 with errno. */
int rm_manifest_lock(const char *sink_dir);
void rm_manifest_unlock(int fd);

json_t *rm_manifest_find_session(const json_t *m, const char *session_id);
json_t *rm_manifest_find_segment(const json_t *m, const char *session_id, const char *file);

/* A manifest session entry from a session.json document (a copy; the caller owns it). */
json_t *rm_manifest_session_entry(const json_t *session_doc);

/* Replaces the entry with the same session_id, or appends. Steals entry. */
void rm_manifest_put_session(json_t *m, json_t *entry);

/* Replaces the entry with the same (session_id, file), or appends. "pruned" is sticky: an
 * entry already marked pruned stays so (another recorder may have pruned it). Steals seg. */
void rm_manifest_put_segment(json_t *m, json_t *seg);

/* A segment entry with the fields every segment has (file, stream, session_id, state,
 * pruned=false, first/last_row_at, rows, bytes); callers add the rest. One definition, so
 * the recorder's entries and the ones rebuilt from disk cannot drift apart. */
json_t *rm_manifest_segment_entry(const char *sid, const char *file, int stream_ix, int sealed,
                                  uint64_t rows, uint64_t bytes, int64_t first, int64_t last);

/* Sink counters from the entries (see docs/FORMATS.md). */
void rm_manifest_update_counters(json_t *m);

/* Retention: marks the oldest sealed, unpruned segments as pruned until every stream keeps at
 * most files_per_stream sealed segments (0: no limit) and the retained segment bytes (sealed
 * and active, all sessions) fit total_bytes (0: no limit). Active files are never chosen.
 * Appends the chosen entries (borrowed references) to `chosen`; returns how many. */
size_t rm_manifest_plan_prune(json_t *m, int files_per_stream, uint64_t total_bytes,
                              json_t *chosen);

#endif
