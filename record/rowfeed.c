/* The rows of a recording as they are recorded (record/rowfeed.h). */
#include "record/rowfeed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "summary/segments.h"

int rm_rowfeed_open(struct rm_rowfeed *f, const char *dir, unsigned mask)
{
    memset(f, 0, sizeof *f);
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        f->s[k].fd = -1;
    if (snprintf(f->dir, sizeof f->dir, "%s", dir) >= (int)sizeof f->dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    f->mask = mask;
    f->buf = malloc(RM_ROWFEED_BUFSZ);
    return f->buf ? 0 : -1;
}

void rm_rowfeed_close(struct rm_rowfeed *f)
{
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        if (f->s[k].fd >= 0) close(f->s[k].fd);
    free(f->buf);
    f->buf = NULL;
}

static int path_of(const struct rm_rowfeed *f, int stream, int number, char *out, size_t cap)
{
    char name[64];
    if (rm_segment_name(name, sizeof name, stream, number) < 0) return -1;
    return snprintf(out, cap, "%s/%s", f->dir, name) >= (int)cap ? -1 : 0;
}

/* The stream's sealed files numbered above `after`: the smallest number (0: none), and the
 * number of the one that is the file (dev, ino) (0: not among them). */
static int sealed_after(const struct rm_rowfeed *f, int stream, int after, dev_t dev, ino_t ino,
                        int *ours)
{
    char **names = NULL, path[PATH_MAX + 80];
    size_t n = rm_segment_family(f->dir, stream, &names);
    size_t sl = strlen(rm_stream_defs[stream].stem);
    int min = 0;
    *ours = 0;
    for (size_t i = 0; i < n; i++) {
        if (names[i][sl] != '-') continue; /* the active file */
        int num = atoi(names[i] + sl + 1);
        if (num <= after) continue;
        if (!min || num < min) min = num;
        struct stat st;
        if (ino && snprintf(path, sizeof path, "%s/%s", f->dir, names[i]) < (int)sizeof path &&
            stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
            *ours = num;
    }
    rm_segment_family_free(names, n);
    return min;
}

static int open_file(struct rm_rowfeed_stream *s, const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    s->fd = fd;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->off = 0;
    s->rotated = 0;
    s->skipping = 0;
    return 0;
}

/* Opens the stream's next file: the oldest sealed file not read yet, else the active one.
 * 1 when one is open, 0 when there is none yet. */
static int open_next(struct rm_rowfeed *f, int k)
{
    struct rm_rowfeed_stream *s = &f->s[k];
    char path[PATH_MAX + 80];
    for (int tries = 0; tries < 4; tries++) {
        int ours;
        int min = sealed_after(f, k, s->last_seg, 0, 0, &ours);
        if (min) {
            if (min > s->last_seg + 1 && !s->gap_unknown)
                s->lost_files += (uint64_t)(min - s->last_seg - 1);
            s->gap_unknown = 0;
            if (path_of(f, k, min, path, sizeof path) < 0 || open_file(s, path) < 0) {
                s->last_seg = min; /* removed meanwhile: retention was faster */
                s->lost_files++;
                continue;
            }
            s->active = 0;
            s->seg = min;
            return 1;
        }
        if (path_of(f, k, 0, path, sizeof path) < 0 || open_file(s, path) < 0) return 0;
        /* Sealed between the listing and the open? Then what was opened is either that
         * sealed file (read it as such) or the active file after it (read the sealed first). */
        min = sealed_after(f, k, s->last_seg, s->dev, s->ino, &ours);
        if (!min) {
            s->active = 1;
            return 1;
        }
        if (ours == min) {
            s->active = 0;
            s->seg = min;
            return 1;
        }
        close(s->fd);
        s->fd = -1;
    }
    return 0;
}

/* The stream's file was read to its end and will not grow: the next one. */
static void finish_file(struct rm_rowfeed *f, int k)
{
    struct rm_rowfeed_stream *s = &f->s[k];
    if (s->active) { /* sealed since it was opened: under which number? */
        int ours;
        sealed_after(f, k, s->last_seg, s->dev, s->ino, &ours);
        if (ours)
            s->last_seg = ours;
        else
            s->gap_unknown = 1; /* removed already: the next gap includes it */
    } else {
        s->last_seg = s->seg;
    }
    close(s->fd);
    s->fd = -1;
}

/* At the end of the active file: 1 when it was sealed (renamed away) since it was opened. A
 * file cut back (a failed write undone, monitor/stream.c) is followed to its new end. */
static int was_sealed(struct rm_rowfeed *f, int k)
{
    struct rm_rowfeed_stream *s = &f->s[k];
    char path[PATH_MAX + 80];
    struct stat st;
    if (path_of(f, k, 0, path, sizeof path) < 0) return 0;
    if (stat(path, &st) < 0) return errno == ENOENT;
    if (st.st_dev != s->dev || st.st_ino != s->ino) return 1;
    if (st.st_size < s->off) s->off = st.st_size;
    return 0;
}

size_t rm_rowfeed_read(struct rm_rowfeed *f, int k, size_t max_lines, rm_rowfeed_fn fn, void *ctx)
{
    if (k < 0 || k >= RM_STREAM_COUNT || !(f->mask & (1u << k)) || !f->buf) return 0;
    struct rm_rowfeed_stream *s = &f->s[k];
    size_t taken = 0;
    while (taken < max_lines) {
        if (s->fd < 0 && !open_next(f, k)) break;
        ssize_t n = pread(s->fd, f->buf, RM_ROWFEED_BUFSZ, s->off);
        if (n < 0) {
            if (errno == EINTR) continue;
            break; /* tried again at the next call */
        }
        size_t pos = 0, got = (size_t)n;
        int stop = 0;
        while (pos < got && taken < max_lines) {
            char *line = f->buf + pos;
            char *nl = memchr(line, '\n', got - pos);
            if (!nl) break;
            size_t len = (size_t)(nl - line);
            if (s->skipping) { /* the end of a line longer than the buffer */
                s->skipping = 0;
            } else if (fn(ctx, k, line, len, s->off == 0)) {
                stop = 1;
                break;
            } else {
                taken++;
                s->lines++;
            }
            pos += len + 1;
            s->off += (off_t)(len + 1);
        }
        if (stop || taken == max_lines) break;
        if (got == RM_ROWFEED_BUFSZ) {
            if (pos == 0) { /* no newline in a whole buffer: skip that line */
                if (!s->skipping) s->long_lines++;
                s->skipping = 1;
                s->off += (off_t)got;
            }
            continue;
        }
        /* The end of the file for now; what is left is a line still being written. */
        if (!s->active || s->rotated) {
            finish_file(f, k); /* a torn last line of a finished file is left out */
            continue;
        }
        if (!was_sealed(f, k)) break;
        s->rotated = 1; /* read it to its end once more: rows written before the rename */
    }
    return taken;
}
