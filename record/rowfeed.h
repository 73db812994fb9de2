/* The rows of a recording as they are recorded, for an exporter that sends every row (the
 * InfluxDB writer of issue 21): each stream's files in the session folder followed as they
 * grow, `tail -F` through rollover, every line handed out once and in file order.
 *
 * Why the files and not a tap in the streams: the workers pay nothing for it (a tap would
 * cost every row a copy and a lock, and a branch even with no exporter on); the rows handed
 * out are exactly those on disk (what gpu.csv holds, none lost, none doubled); and the files
 * are the buffer of an outage: the feed does not move past a line the consumer did not take,
 * so what a server missed is sent once it is back, with no memory but one read buffer.
 * The cost: lines arrive when the stream writes them (at most RM_STREAM_BATCH_NS late at
 * short intervals), and they are CSV text to parse again (a few rows a second).
 *
 * Rollover: a sealed file is renamed <stem>-NNNNNN.csv and a new <stem>.csv opened
 * (monitor/stream.h). The feed keeps its file open, so after a seal it reads the sealed file
 * to its end through its own fd, then goes on with the sealed files numbered after it (those
 * a slow consumer fell behind on) and the new active file. A sealed file that retention
 * removed before the feed reached it is counted in lost_files, never waited for.
 *
 * One thread (the exporter's), bounded work per call.
 */
#ifndef RUNMON_RECORD_ROWFEED_H
#define RUNMON_RECORD_ROWFEED_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/streams.h"

#define RM_ROWFEED_BUFSZ (256 * 1024) /* above RM_STREAM_MAX_ROW: a whole row always fits */

struct rm_rowfeed_stream {
    int fd;      /* the file being read, -1: none yet */
    int active;  /* fd was opened as the active <stem>.csv (it may be sealed since) */
    int rotated; /* that active file was sealed: read to its end, then the next */
    int seg;     /* the sealed file's number, when not active */
    dev_t dev;   /* identity of the open file */
    ino_t ino;
    off_t off;           /* the next byte to hand out: always the start of a line */
    int skipping;        /* inside a line longer than the buffer */
    int last_seg;        /* number of the newest sealed file read to its end (0: none) */
    int gap_unknown;     /* the file read last was removed before its number was known */
    uint64_t lines;      /* lines handed out */
    uint64_t lost_files; /* sealed files removed before they were read */
    uint64_t long_lines; /* lines longer than the buffer, skipped */
};

struct rm_rowfeed {
    char dir[PATH_MAX];
    unsigned mask; /* 1u << stream for each stream followed */
    struct rm_rowfeed_stream s[RM_STREAM_COUNT];
    char *buf;
};

/* One line of a stream: its text without the newline; first: the first line of a file (the
 * header of a stream's CSV file). Returns 0 when taken, nonzero to stop: the line is offered
 * again by the next rm_rowfeed_read (a full batch, a server that is down). */
typedef int (*rm_rowfeed_fn)(void *ctx, int stream, const char *line, size_t len, int first);

/* Follows the streams in mask (1u << RM_STREAM_*) of the session folder dir from their
 * beginning; files that do not exist yet are looked for at each read. 0, or -1 (no memory,
 * a path too long). */
int rm_rowfeed_open(struct rm_rowfeed *f, const char *dir, unsigned mask);

/* Hands what stream's files gained since the last call to fn, line by line, at most
 * max_lines of them, in order across its files. Returns how many were taken. */
size_t rm_rowfeed_read(struct rm_rowfeed *f, int stream, size_t max_lines, rm_rowfeed_fn fn,
                       void *ctx);

void rm_rowfeed_close(struct rm_rowfeed *f);

#endif
