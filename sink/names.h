/* The one confinement rule for names read from a sink (manifest.json, session.json, the
 * directory itself): every reader and writer of a sink takes its session ids and segment
 * file names through here, so a hostile or corrupt manifest cannot make runmon read, trim,
 * write or delete anything outside the sink directory.
 *
 *  - a session id is what rm_session_make_id makes, leniently: [A-Za-z0-9._-]+, not
 *    starting with '.', shorter than RM_SESSION_ID_MAX (so no '/', no "..", never absolute);
 *  - a segment file name is one rm_segment_parse_name accepts ("gpu.csv", "gpu-000001.csv"),
 *    of the stream its entry names;
 *  - a session folder is a real directory in the sink, never a symbolic link (to anywhere);
 *  - segment files are unlinked relative to the session folder's descriptor (unlinkat).
 * Entries that break the rule are ignored with one line on stderr.
 */
#ifndef RUNMON_SINK_NAMES_H
#define RUNMON_SINK_NAMES_H

#include <jansson.h>
#include <stddef.h>

#define RM_SESSION_ID_MAX 200

/* True when id has the form of a session id (see above). */
int rm_valid_session_id(const char *id);

/* True when file is a segment file name (of stream stream_name, unless that is NULL). */
int rm_valid_segment_file(const char *file, const char *stream_name);

/* SINK/ID may be used as a session folder: id is valid and SINK/ID is not a symbolic link
 * or another non-directory (a missing folder is fine: its files are simply absent). Returns
 * 1, or 0 with why set ("SINK/ID: session folder is a symbolic link"). */
int rm_sink_session_ok(const char *sink_dir, const char *id, char *why, size_t whysz);
/* The same relative to dfd, the sink directory opened (-1: by path), for listings. */
int rm_sink_session_ok_at(int dfd, const char *sink_dir, const char *id, char *why, size_t whysz);

/* SINK/latest, when it is a symbolic link to a session id (a name in SINK, never a path out
 * of it): 1 with the id in id, else 0. */
int rm_sink_read_latest(const char *sink_dir, char *id, size_t idcap);

/* Opens SINK/ID as a directory without following a symbolic link at ID. A descriptor, or
 * -1 with errno (EINVAL: not a session id; ELOOP or ENOTDIR: a link or not a directory). */
int rm_sink_open_session_dir(const char *sink_dir, const char *id);

/* Deletes sealed segment file `file` of session `id` (retention): both names are checked (a
 * sealed segment's name, `<stem>-NNNNNN.csv` of a known stream: never an active file) and the
 * file is unlinked relative to the session folder. 0 (also when already gone), or -1 with
 * errno (EINVAL for a name that breaks the rule: counted in rm_sink_ignored_entries). */
int rm_sink_unlink_segment(const char *sink_dir, const char *id, const char *file);

/* Drops from manifest-shaped document m ("sessions", "segments": a 0.1.0 manifest, a
 * session's state.json, sink.json's sealed list) the entries that break the rule (an id or a
 * file name that is not runmon's, a session folder that is a symbolic link, a file name that
 * does not fit the entry's state: "active" names `<stem>.csv`, "sealed" or no state
 * `<stem>-NNNNNN.csv`), each with one warning on stderr naming file_name. Returns how many
 * entries were dropped (also counted in rm_sink_ignored_entries). */
int rm_manifest_confine(json_t *m, const char *sink_dir, const char *file_name);

/* Entries this process ignored by the rule so far (sink.json's "ignored_entries" adds them
 * up when the totals are written). */
long rm_sink_ignored_entries(void);

#endif
