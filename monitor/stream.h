/* A CSV stream: one collector's output file (gpu.csv, dmon.csv, cpu.csv, proc.csv).
 *
 * Rows are built in memory and handed to the kernel with one write() per flush, always whole
 * rows, so `tail -F` never sees half a row and a failed write never leaves one behind that
 * later rows would be glued to. A stream is owned by exactly one thread.
 *
 * Failure policy: the monitor must never stop because of its own output. A failed write
 * drops the pending rows (counted in dropped_rows), remembers the errno, and the next flush
 * tries again; the first row to land after a failure clears `failing`. A file that cannot be
 * created or a header that cannot be written (a full disk at the start) is no exception:
 * the stream opens all the same and each flush tries the file, then the header, again.
 */
#ifndef RUNMON_STREAM_H
#define RUNMON_STREAM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rm_time.h"

struct rm_clock;

#define RM_STREAM_BUFSZ (256 * 1024)
#define RM_STREAM_MAX_ROW (64 * 1024)

/* What a stream tells its observer (the sink): after each flush, and after each seal. */
enum rm_stream_event { RM_STREAM_FLUSHED, RM_STREAM_SEALED };

struct rm_stream_seg {
    const char *file; /* the sealed file's base name (SEALED only) */
    uint64_t rows, bytes;
    int64_t first_ts_ns, last_ts_ns;
};

struct rm_stream;
/* Called on the stream's own thread; must be quick (it only copies numbers). */
typedef void (*rm_stream_hook)(void *ctx, const struct rm_stream *s, enum rm_stream_event ev,
                               const struct rm_stream_seg *sealed);

struct rm_stream {
    int id;              /* the stream (model/streams.h: RM_STREAM_*) */
    char name[16];       /* its name, "gpu", "dmon", "cpu", "proc" */
    char path[PATH_MAX]; /* the active file */
    int fd;
    char *buf;        /* pending whole rows, then the row being built */
    size_t len;       /* bytes of whole rows pending */
    size_t row_len;   /* bytes of the row being built (after len) */
    int row_fields;   /* fields in the row being built */
    int row_overflow; /* the row being built did not fit: it will be dropped */
    uint64_t pending_rows;
    uint64_t rows;         /* data rows written to disk */
    uint64_t bytes;        /* bytes in the active file */
    uint64_t dropped_rows; /* rows lost to write errors or oversize */
    uint64_t write_errors;
    int last_errno;
    int failing;  /* the last flush failed */
    int reopened; /* the active file was opened by this flush (it could not be before) */
    /* CLOCK_MONOTONIC times of the failed write that began the latest failure and of the
     * first write that landed after it (0 while still failing): the sink's outage. */
    int64_t fail_start_ns, fail_end_ns;
    int has_header;
    int next_segment;                /* number the next sealed file gets */
    int64_t first_ts_ns, last_ts_ns; /* of rows written, 0 when none */
    int64_t pending_first_ts, pending_last_ts;
    char *header; /* the header row (with '\n'), rewritten after each rollover */
    size_t header_len;
    uint64_t rollover_bytes; /* 0: never; else seal once the active file reaches this size */
    rm_stream_hook hook;     /* NULL: nobody listens */
    void *hook_ctx;
    /* rm_stream_flush writes at most this often (0: at every call); see rm_stream_batch. */
    int64_t write_every_ns;
    int64_t last_write_mono_ns;
    /* The clock of the monotonic times above (base/clock.h); NULL, as rm_stream_open leaves
     * it: the system's. */
    const struct rm_clock *clock;
    /* The last row's formatted ts: rows of one sample (a GPU each) share it. */
    int64_t ts_text_ms;
    size_t ts_text_len; /* 0: none yet */
    char ts_text[RM_TS_BUFSZ];
};

/* Rows at most this old wait in memory for the next write, when a stream batches. */
#define RM_STREAM_BATCH_NS (500 * 1000 * 1000LL)

/* For a stream sampled every interval_ns below RM_STREAM_BATCH_NS, lets rm_stream_flush hold
 * whole rows back until RM_STREAM_BATCH_NS after the previous write: at a 0.1 s interval five
 * sample groups share one write() instead of one each (each write also dirties the inode: the bulk
 * of a write's cost). Files then lag by at most that long, and a SIGKILL loses at most that much;
 * close, a full buffer and rows that reach the rollover size always write (so segments end where
 * they did). */
void rm_stream_batch(struct rm_stream *s, int64_t interval_ns);

/* Opens (appending) the active file of stream (model/streams.h) in dir; a torn last line (no '\n')
 * left by a killed writer is cut off first, so new rows never glue onto it. A file that cannot
 * be opened is a write error (failing set; each flush tries again), not a failure. 0, or -1
 * with errno: out of memory or a path too long (nothing to close then). */
int rm_stream_open(struct rm_stream *s, const char *dir, int stream);
void rm_stream_close(struct rm_stream *s);

/* Writes the header row now if the file is empty. `names` are the columns after `ts`. A write
 * that fails is counted as the stream's write error and tried again before the next rows: 0
 * all the same; -1 (errno) only for a header too long or out of memory. */
int rm_stream_header(struct rm_stream *s, const char *const *names, int n);
int rm_stream_has_header(const struct rm_stream *s);

/* Row building: begin (writes the ts column), fields, end. */
void rm_stream_begin_row(struct rm_stream *s, int64_t ts_ns);
void rm_stream_field(struct rm_stream *s, const char *v, size_t n);
/* A field the caller knows holds no ',', '"', CR or LF (cut from a plain line,
 * rm_csv_is_plain): written as it is, without looking for bytes that need quotes. */
void rm_stream_field_plain(struct rm_stream *s, const char *v, size_t n);
void rm_stream_field_str(struct rm_stream *s, const char *v);
/* v with DECIMALS (0 to 6 for the fast path) digits after the point, exactly as
 * printf("%.*f") writes it, without printf's cost on the common case; "" for NaN and
 * infinities. OUT holds RM_FIXED_BUFSZ bytes (DBL_MAX has 309 digits). Returns the length. */
#define RM_FIXED_BUFSZ 336
size_t rm_format_fixed(char *out, double v, int decimals);
void rm_stream_field_double(struct rm_stream *s, double v, int decimals); /* NaN -> empty */
void rm_stream_field_u64(struct rm_stream *s, uint64_t v);
void rm_stream_end_row(struct rm_stream *s);

/* Seals the active file: it is renamed to <name>-NNNNNN.csv (the next free number) and a new,
 * empty active file is opened in its place, so `tail -F name.csv` follows on. 0, or -1 with
 * errno (the stream then keeps writing to the old file). */
int rm_stream_seal(struct rm_stream *s);

/* Whether rm_stream_flush would write now (given rows): a batching stream's time has come, or
 * it does not hold rows back. */
int rm_stream_write_due(const struct rm_stream *s);
/* Hands pending rows to the kernel (a batching stream: once its time has come, see
 * rm_stream_batch). 0, or -1 when they were dropped (errno saved). */
int rm_stream_flush(struct rm_stream *s);
/* The same, now, whether or not the stream batches. */
int rm_stream_flush_now(struct rm_stream *s);
/* Writes the pending rows only when they reach the rollover size (the segment is sealed after
 * them): a reader of several samples at once calls it before each sample, so that segments end
 * where they did when each sample was read and flushed alone. 0, or as rm_stream_flush_now. */
int rm_stream_flush_if_sealing(struct rm_stream *s);

#endif
