/* Is a session's recorder still alive? (docs/FORMATS.md, "Recovery"; docs/ARCHITECTURE.md,
 * "The sink index".)
 *
 * A recorder holds an exclusive flock(2) on DIR/<id>/.recorder.lock for the whole life of its
 * session. The file appears under its name already locked (created under a temp name, locked,
 * renamed), so a reader that finds it unlocked knows the recorder is gone: the kernel drops
 * the lock when the process dies, whatever killed it, and a reused pid cannot hold it. A
 * session without the file (made by runmon 0.2.0, or a recorder killed before it made the
 * file) is judged by its pid and that process's start time: a live pid whose process started
 * after the session did is another process. A session of another host cannot be checked
 * from here: it is "unknown", and nothing is done to it.
 */
#ifndef RUNMON_SINK_LIVENESS_H
#define RUNMON_SINK_LIVENESS_H

#include <stdint.h>
#include <sys/types.h>

#define RM_RECORDER_LOCK ".recorder.lock"

enum rm_liveness { RM_RECORDER_ALIVE, RM_RECORDER_DEAD, RM_RECORDER_UNKNOWN };

/* The recorder of session id of sink_dir, which the sink knows as (host, pid), started at
 * started_ns (epoch ns; 0 when unknown: the pid alone then decides where there is no lock
 * file). Never blocks. */
enum rm_liveness rm_recorder_liveness(const char *sink_dir, const char *id, const char *host,
                                      long long pid, int64_t started_ns);

/* The recorder claims its new session folder: the lock file, locked. Returns the descriptor
 * (close-on-exec; keep it open while recording), or -1 with errno. */
int rm_recorder_claim(const char *session_dir);

/* The session's end is recorded: the lock file is removed and the lock dropped. fd < 0: nothing. */
void rm_recorder_release(int fd, const char *session_dir);

/* True when a process of that pid exists (EPERM counts as existing; a zombie does not). */
int rm_pid_exists(long long pid);

/* When the session of this id started, from the id's leading YYYYMMDDTHHMMSSZ (epoch ns,
 * whole seconds), or 0 when the id does not start so. */
int64_t rm_session_id_start_ns(const char *id);

/* This machine's host name as sessions record it ("unknown" when it has none). */
void rm_this_host(char *out, size_t cap);

#endif
