/* Fixed-capacity line splitter for a non-blocking fd (a collector's stdout or stderr, a run
 * log that `runmon top` follows).
 *
 * The caller owns the storage, so nothing is allocated, per line or at all. Lines are handed
 * to a callback without their "\n" (and without one trailing "\r"), NUL-terminated in place.
 * A line longer than the capacity is delivered once, cut to the capacity and flagged
 * RM_LINE_TRUNCATED; the rest of it up to the next "\n" is dropped, so the splitter never
 * loses sync and never grows. At EOF an unfinished last line is delivered flagged
 * RM_LINE_TORN: a writer killed mid-row leaves one, and the caller should not take it as data.
 *
 * One rm_linebuf per fd; not thread-safe (use it from the thread that polls the fd).
 */
#ifndef RUNMON_BASE_LINEBUF_H
#define RUNMON_BASE_LINEBUF_H

#include <stdbool.h>
#include <stddef.h>

#define RM_LINE_TRUNCATED 1u /* longer than the capacity: only its first bytes are here */
#define RM_LINE_TORN 2u      /* the fd reached EOF before this line's "\n" */

/* line[len] == '\0'; the line may itself contain NUL bytes (len is authoritative). The
 * pointer is valid only during the call. flags: RM_LINE_* bits. */
typedef void (*rm_line_cb)(void *ctx, char *line, size_t len, unsigned flags);

typedef struct rm_linebuf {
    char *buf;       /* caller's storage, size bytes */
    size_t size;     /* lines up to size-1 bytes arrive whole */
    size_t len;      /* bytes of an unfinished line held in buf */
    bool discarding; /* dropping the tail of a truncated line until its "\n" */
    bool eof;        /* EOF seen (and the torn line, if any, delivered) */
} rm_linebuf;

typedef enum rm_linebuf_status {
    RM_LB_AGAIN = 0, /* nothing more for now (or the per-call read budget was used): poll again */
    RM_LB_EOF = 1,   /* writer closed its end; every byte has been delivered */
    RM_LB_ERROR = -1 /* read failed: errno says why (not EAGAIN/EINTR) */
} rm_linebuf_status;

/* storage must stay valid while lb is used; size >= 2. */
void rm_linebuf_init(rm_linebuf *lb, char *storage, size_t size);

/* Forgets any buffered partial line and the EOF state (e.g. when the fd is replaced). */
void rm_linebuf_reset(rm_linebuf *lb);

/* Reads what fd has now (at most a bounded number of read() calls, so a chatty writer cannot
 * starve the poll loop), calling cb once per complete line. Once RM_LB_EOF was returned,
 * further calls return RM_LB_EOF without reading. */
rm_linebuf_status rm_linebuf_read(rm_linebuf *lb, int fd, rm_line_cb cb, void *ctx);

/* The same for a pipe that poll() just reported readable, in one read() when it can: a read
 * that returns less than it asked for drained the pipe, so no second read() is made to see
 * EAGAIN (the recorder wakes ten times a second; each call counts). EOF is then seen at the
 * next readiness. */
rm_linebuf_status rm_linebuf_read_ready(rm_linebuf *lb, int fd, rm_line_cb cb, void *ctx);

/* Feeds bytes that were read some other way; same delivery rules as rm_linebuf_read. */
void rm_linebuf_feed(rm_linebuf *lb, const char *data, size_t n, rm_line_cb cb, void *ctx);

/* Delivers the unfinished line, if any, flagged RM_LINE_TORN, as at EOF. */
void rm_linebuf_finish(rm_linebuf *lb, rm_line_cb cb, void *ctx);

#endif
