/* Follows a run log (runlog.jsonl) for the phase that is open now.
 *
 * Incremental and bounded: the file offset is remembered, each poll reads only what was
 * appended since (at most RM_PF_MAX_READ bytes; the rest waits for the next poll), a partial
 * last line is kept for the next poll, and a line longer than RM_PF_MAX_LINE is skipped.
 * Only phase_enter / phase_exit lines are parsed. Open phases are tracked by (pid, path) in a
 * fixed table (the oldest is forgotten when it is full); the current phase is the most
 * recently entered one still open. `phase` lines (completed phases) do not change it.
 *
 * Completed phases are counted by path (`phase_exit` lines, and `phase` lines by their `path`,
 * else their `name`): how many ended and their summed `seconds`, in a fixed table of
 * RM_PF_MAX_DONE paths (a path first seen once it is full is counted in `done_dropped`), so a
 * phase shorter than any polling period is never lost.
 */
#ifndef RUNMON_PHASE_FOLLOW_H
#define RUNMON_PHASE_FOLLOW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RM_PF_MAX_OPEN 64
#define RM_PF_MAX_PATH 512
#define RM_PF_MAX_LINE 16384
#define RM_PF_MAX_READ (1024 * 1024)
#define RM_PF_MAX_DONE 128

struct rm_pf_open {
    int64_t pid;
    uint64_t seq;
    char path[RM_PF_MAX_PATH];
};

/* One path's completed phases. */
struct rm_pf_done {
    char path[RM_PF_MAX_PATH];
    uint64_t count;
    double seconds;
    uint64_t short_count; /* those shorter than RM_PF_SHORT_S: mostly the power sensor's smear */
};

/* A phase shorter than 2 power-sensor windows (model/energy.h) is short (summary.json's
 * short_phase, which also counts 3 sampling intervals). */
#define RM_PF_SHORT_S 2.0

struct rm_phase_follow {
    int fd; /* -1 until the file could be opened */
    char file[4096];
    off_t offset;
    char line[RM_PF_MAX_LINE];
    size_t line_len;
    int skipping; /* inside an over-long line: drop bytes up to its newline */
    struct rm_pf_open open[RM_PF_MAX_OPEN];
    int nopen;
    uint64_t seq;
    int check_pids; /* drop open phases whose writer is gone (kill -9 leaves no exit) */
    struct rm_pf_done done[RM_PF_MAX_DONE]; /* in order of first completion */
    int ndone;
    uint64_t done_dropped; /* completions of paths that found the table full */
};

void rm_phase_follow_init(struct rm_phase_follow *f, const char *file, int check_pids);
void rm_phase_follow_fini(struct rm_phase_follow *f);

/* Reads what was appended since the last poll. Returns the number of lines handled, or -1
 * when the file cannot be read (it may not exist yet; the next poll tries again). */
int rm_phase_follow_poll(struct rm_phase_follow *f);

/* Handles one complete line (without its newline). Exposed for tests. */
void rm_phase_follow_line(struct rm_phase_follow *f, const char *line, size_t len);

/* The current phase path, or NULL when none is open. */
const char *rm_phase_follow_current(struct rm_phase_follow *f);

#endif
