/* RunLog: the line-per-record JSON file (JSONL) that a sweep writes its phases and events
 * into, made for `tail -F` and `jq`. Every record is one line, written the moment it happens.
 *
 * Line kinds (docs/FORMATS.md has the full reference). Every line starts with "ts" (UTC
 * ISO-8601 with ms and "+00:00") and "type", and carries "pid" (the writer) and "t" (epoch
 * seconds, ms precision, the same instant as ts):
 *   {"ts","type":"phase","name","seconds","pid","t",...extra}      a completed phase
 *   {"ts","type":"event","event","pid","t","data"?}                 a point-in-time event
 *   {"ts","type":"phase_enter","name","path","depth","pid","t",...extra}
 *   {"ts","type":"phase_exit","name","path","depth","seconds","status","pid","t",...extra}
 *   {"ts","type":"metric","step"?,"values":{NAME:number,...},"pid","t"}   metric values
 *   {"ts","type":"objective","objectives":[{"metric","goal","pick"},...],"pid","t"}
 * "path" is the '/'-joined names of the open phases, outermost first ("train/forward");
 * "depth" is the number of phases enclosing this one (0 at the top). "status" is "ok" or
 * "error". "seconds" is rounded to the millisecond.
 *
 * How a line reaches the file, and why:
 *  - The file is opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, mode 0644 (less the umask).
 *  - Each line is built completely in memory and handed to a single write(), so concurrent
 *    appenders (threads, processes, `runmon log` invocations) never interleave inside a line:
 *    Linux holds the inode lock for the whole of an O_APPEND write on local filesystems.
 *  - Linux can still write only part of a line: when the line crosses RLIMIT_FSIZE
 *    (`ulimit -f`) the write is cut at the limit, and ENOSPC/EDQUOT can strike mid-line.
 *    With O_APPEND the partial tail cannot be overwritten, so it is cut back: every write
 *    is made under flock(LOCK_EX) on the file (writers in other processes and other
 *    runmon writers wait), the size is taken before the write, and after a short write the
 *    file is ftruncate()d back to that size if it is exactly size + bytes written (no one
 *    else appended). Writers that honour the lock can therefore never see or produce a
 *    partial line; a writer that ignores flock (`echo >>`) cannot be protected against. If
 *    flock is not supported by the filesystem the write goes ahead unlocked. The call then
 *    fails with errno EFBIG (when RLIMIT_FSIZE explains the short write) or ENOSPC.
 *  - A regular file that has been removed (no links left) is reported as ENOENT and not
 *    written to: the lines would be lost with the inode.
 *  - A write that would start at or past RLIMIT_FSIZE raises SIGXFSZ, whose default action
 *    kills the process. Ignore SIGXFSZ (the runmon CLI does) to get EFBIG instead.
 *  - Nothing is retried: a failed call wrote nothing (or had its partial line cut back).
 *
 * Errors: functions return 0 (or a pointer) on success; -1 (or NULL) with errno set on
 * failure, and rm_runlog_errmsg() then gives a one-line message for the calling thread.
 *
 * Threads: a handle may be used from several threads at once; every call takes the handle's
 * mutex. Only rm_runlog_enter/exit/set_prefix change state (the stack of open phases), and
 * that stack is per handle, not per thread: use enter/exit from one thread, or give each
 * thread its own handle. phase/event never touch the stack. After fork() the child must
 * open its own handle (the fd is close-on-exec and the mutex may be held).
 *
 * Extra fields are a jansson object (borrowed: never modified or freed by these calls; NULL
 * for none), or "KEY=VALUE" / "KEY:=JSON" strings (the _kv variants; see kvargs.h,
 * installed beside this header as <runmon/kvargs.h>).
 * Numbers in extra data must be finite. Keys that the line writes itself ("ts", "type",
 * "pid", "t", and the kind's own fields) are refused in top-level extras (EINVAL).
 */
#ifndef RUNMON_RUNLOG_H
#define RUNMON_RUNLOG_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rm_runlog rm_runlog;

/* Status of a phase_exit line. */
enum rm_runlog_status { RM_RUNLOG_OK = 0, RM_RUNLOG_ERROR = 1 };

/* Opens (creating if needed) the run log at path for appending. NULL on failure. */
rm_runlog *rm_runlog_open(const char *path);

/* Closes the file and frees the handle. Phases still open get no phase_exit line. Returns
 * -1 if close() reported an error (the handle is freed anyway). NULL is a no-op. */
int rm_runlog_close(rm_runlog *log);

/* Sets the inherited path prefix ("train/epoch1") that nested phases continue, as a child
 * process continues its parent's RUNMON_PHASE_PATH. NULL or "" clears it. Each component
 * must be a valid phase name (see rm_runlog_enter). */
int rm_runlog_set_prefix(rm_runlog *log, const char *prefix);

/* Writes a completed phase of `seconds` (finite, >= 0; rounded to the millisecond). */
int rm_runlog_phase(rm_runlog *log, const char *name, double seconds, json_t *extra);

/* Writes an event; a non-empty `data` object is written as "data". */
int rm_runlog_event(rm_runlog *log, const char *event, json_t *data);

/* The most values one metric line may carry. */
#define RM_RUNLOG_METRIC_MAX 256
/* rm_runlog_metric's step when the line has none (the reader then orders by the line). */
#define RM_RUNLOG_NO_STEP (-1)

/* Writes a metric line: n values (1 to RM_RUNLOG_METRIC_MAX, each finite) named names[i],
 * at `step` (>= 0, or RM_RUNLOG_NO_STEP). A metric name is non-empty UTF-8 of at most 127
 * bytes without control characters, without any of / : = < > , and without a space at
 * either end; a name given twice is refused. Refused input (EINVAL) writes nothing. */
int rm_runlog_metric(rm_runlog *log, long long step, size_t n, const char *const *names,
                     const double *values);

/* The same with n "NAME=VALUE" strings, VALUE a JSON number (finite). */
int rm_runlog_metric_kv(rm_runlog *log, long long step, int n, const char *const *kv);

/* Checks what rm_runlog_metric_kv would write, without writing (as rm_runlog_check_extra). */
int rm_runlog_check_metric_kv(long long step, int n, const char *const *kv);

/* Writes an objective line: n (1 to 64) specs "METRIC:min|max[:last|best]" saying what the
 * run is judged by (the sweep table's objectives when none is given on its command line). */
int rm_runlog_objective(rm_runlog *log, int n, const char *const *specs);

/* Checks objective specs without writing. */
int rm_runlog_check_objective(int n, const char *const *specs);

/* Opens a nested phase: writes phase_enter and pushes name. A phase name is non-empty UTF-8
 * without control characters and, here, without '/' (it is a path component). If the line
 * cannot be written nothing is pushed. The phase's clock starts after its line is written. */
int rm_runlog_enter(rm_runlog *log, const char *name, json_t *extra);

/* Closes the innermost open phase: writes phase_exit with its wall-clock seconds and
 * status, then pops it. `name` may be NULL; otherwise it must be the innermost open phase
 * (EINVAL if not, and nothing is written). With no open phase: -1, errno ENOENT.
 * The phase is popped even if the write fails, so scopes stay balanced. */
int rm_runlog_exit(rm_runlog *log, const char *name, enum rm_runlog_status status, json_t *extra);

/* As above, with extra fields given as n "KEY=VALUE" / "KEY:=JSON" strings. */
int rm_runlog_phase_kv(rm_runlog *log, const char *name, double seconds, int n,
                       const char *const *kv);
int rm_runlog_event_kv(rm_runlog *log, const char *event, int n, const char *const *kv);

/* Checks extra fields for a line of `type` ("phase", "event", "phase_enter", "phase_exit")
 * without writing: what the writing call would refuse (EINVAL) is refused here too. Lets a
 * caller validate all input before it opens, and so creates, the file. */
int rm_runlog_check_extra(const char *type, json_t *extra);

/* Number of open phases on this handle (the prefix not counted). */
size_t rm_runlog_depth(rm_runlog *log);

/* The current path (prefix and open phases, '/'-joined) as a new string the caller frees;
 * "" when nothing is open. NULL only if out of memory. */
char *rm_runlog_current_path(rm_runlog *log);

/* The calling thread's message for its last failed rm_runlog_* / rm_kv_* call. */
const char *rm_runlog_errmsg(void);

/* Sets the calling thread's message (for runmon modules that report through this channel). */
void rm_runlog_seterr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
