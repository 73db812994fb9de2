#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int file_private;

void rm_fileio_set_private(int on)
{
    file_private = on != 0;
}

int rm_fileio_private(void)
{
    return file_private;
}

mode_t rm_file_mode(void)
{
    return file_private ? 0600 : 0644;
}

mode_t rm_dir_mode(void)
{
    return file_private ? 0700 : 0755;
}

int rm_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

ssize_t rm_read_full(int fd, void *buf, size_t cap)
{
    char *p = buf;
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, p + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    return (ssize_t)n;
}

/* path opened for reading if it is a regular file: O_NONBLOCK, so that a FIFO without a
 * writer is refused rather than waited for. The descriptor (and its stat), or -1 with errno. */
static int open_regular(int dirfd, const char *path, struct stat *st)
{
    int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    int e = 0;
    if (fstat(fd, st) < 0)
        e = errno;
    else if (!S_ISREG(st->st_mode))
        e = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static ssize_t read_failed(const char *path, size_t max, char *err, size_t errsz)
{
    int e = errno;
    if (err && errsz) {
        if (e == EFBIG)
            snprintf(err, errsz, "%s: larger than %zu bytes", path, max);
        else if (e == EINVAL)
            snprintf(err, errsz, "%s: not a regular file", path);
        else
            snprintf(err, errsz, "%s: %s", path, strerror(e));
    }
    errno = e;
    return -1;
}

/* Grows *buf to hold more than n + 1 bytes, up to max + 2 (a byte past max tells a file too
 * large; one more for the NUL). 0, or -1 with errno. */
static int grow_for(char **buf, size_t *cap, size_t n, size_t max)
{
    if (*cap > n + 1) return 0;
    size_t want = *cap < 4096 ? 4096 : *cap * 2;
    size_t limit = max > SIZE_MAX - 2 ? SIZE_MAX : max + 2;
    if (want > limit) want = limit;
    if (want <= *cap) {
        errno = EFBIG;
        return -1;
    }
    char *nb = realloc(*buf, want);
    if (!nb) return -1;
    *buf = nb;
    *cap = want;
    return 0;
}

/* fd read to its end into *buf (see rm_read_file_at), said: the size its stat gave. */
static ssize_t read_to_end(int fd, size_t said, size_t max, char **buf, size_t *cap)
{
    /* Sized from the stat, read to the end all the same (a /proc file's size is 0). */
    if (said < max && grow_for(buf, cap, said, max) < 0) return -1;
    size_t n = 0;
    for (;;) {
        if (grow_for(buf, cap, n, max) < 0) return -1;
        ssize_t r = rm_read_full(fd, *buf + n, *cap - 1 - n);
        if (r < 0) return -1;
        n += (size_t)r;
        if (n > max) {
            errno = EFBIG;
            return -1;
        }
        if (n < *cap - 1) break; /* the end: rm_read_full stops short only there */
    }
    (*buf)[n] = '\0';
    return (ssize_t)n;
}

ssize_t rm_read_file_at(int dirfd, const char *path, size_t max, char **buf, size_t *cap, char *err,
                        size_t errsz)
{
    struct stat st;
    int fd = open_regular(dirfd, path, &st);
    if (fd < 0) return read_failed(path, max, err, errsz);
    ssize_t n = read_to_end(fd, st.st_size > 0 ? (size_t)st.st_size : 0, max, buf, cap);
    int e = errno;
    close(fd);
    errno = e;
    return n < 0 ? read_failed(path, max, err, errsz) : n;
}

char *rm_read_file(const char *path, size_t max, size_t *len, char *err, size_t errsz)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = rm_read_file_at(AT_FDCWD, path, max, &buf, &cap, err, errsz);
    if (n < 0) {
        int e = errno;
        free(buf);
        errno = e;
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

ssize_t rm_read_head(int dirfd, const char *path, char *buf, size_t cap)
{
    struct stat st;
    if (cap == 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = open_regular(dirfd, path, &st);
    if (fd < 0) return -1;
    ssize_t n = rm_read_full(fd, buf, cap - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    return n;
}

int rm_short_write_errno(off_t at, size_t len)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && at >= 0 &&
        (rlim_t)at + len > rl.rlim_cur)
        return EFBIG;
    return ENOSPC;
}

static int fsync_parent_dir(const char *path)
{
    char copy[PATH_MAX];
    if (strlen(path) >= sizeof copy) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(copy, path);
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    int rc = fsync(dfd);
    close(dfd);
    return rc;
}

int rm_write_file_atomic(const char *path, const void *data, size_t len)
{
    mode_t mode = rm_file_mode();
    struct stat st;
    if (!file_private && lstat(path, &st) == 0 && S_ISREG(st.st_mode)) mode = st.st_mode & 0777;
    return rm_write_file_atomic_mode(path, data, len, mode);
}

/* How write_atomic puts the temp file in place: fsynced and renamed (durable), renamed
 * (replace), or swapped with the old file, which is then removed (swap). */
enum put_how { PUT_DURABLE, PUT_REPLACE, PUT_SWAP };
static int write_atomic(const char *path, const char *tmp, const void *data, size_t len,
                        mode_t mode, enum put_how how);

int rm_write_file_atomic_mode(const char *path, const void *data, size_t len, mode_t mode)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return write_atomic(path, tmp, data, len, mode, PUT_DURABLE);
}

int rm_write_file_atomic_via(const char *path, const char *tmp, const void *data, size_t len)
{
    mode_t mode = rm_file_mode();
    struct stat st;
    if (!file_private && lstat(path, &st) == 0 && S_ISREG(st.st_mode)) mode = st.st_mode & 0777;
    return write_atomic(path, tmp, data, len, mode, PUT_DURABLE);
}

int rm_write_file_replace_via(const char *path, const char *tmp, const void *data, size_t len)
{
    mode_t mode = rm_file_mode();
    struct stat st;
    int is_file = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (!file_private && is_file) mode = st.st_mode & 0777;
    /* An existing file is swapped out rather than renamed over (see write_atomic). */
    return write_atomic(path, tmp, data, len, mode, is_file ? PUT_SWAP : PUT_REPLACE);
}

int rm_path_is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* A device, FIFO or socket: opened as the shell's `>` would, nothing created or renamed. */
static int write_in_place(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (rm_write_all(fd, data, len) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

/* PUT_SWAP: the new file takes the old one's name in one step (RENAME_EXCHANGE), as a rename
 * would, and the old one is then removed under the temp name. On ext4, a rename over a file
 * writes the new file's data out at once (auto_da_alloc), and the replaced file's blocks are
 * freed inside the rename (with -o discard, a discard it waits for): two sleeps per replace,
 * every round of the sink. Swapped, the new file stays in the page cache, and the old one,
 * written seconds ago, has usually no blocks to free. Where the file system cannot swap, a
 * rename. */
static int put_in_place(const char *path, const char *tmp, enum put_how how)
{
    if (how == PUT_SWAP && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
        (void)unlink(tmp); /* the old file; one left by a kill here goes with the next write */
        return 0;
    }
    return rename(tmp, path);
}

static int write_atomic(const char *path, const char *tmp, const void *data, size_t len,
                        mode_t mode, enum put_how how)
{
    int durable = how == PUT_DURABLE;
    if (rm_path_is_special(path)) return write_in_place(path, data, len);
    (void)unlink(tmp); /* a stale one from a dead process: a fresh mode */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    if (rm_write_all(fd, data, len) < 0 || (durable && fsync(fd) < 0)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) < 0 || put_in_place(path, tmp, how) < 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return durable ? fsync_parent_dir(path) : 0;
}

int rm_mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = n ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, rm_dir_mode()) < 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, rm_dir_mode()) < 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(buf, &st) < 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

long rm_file_trim_torn(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return 0;
    char c;
    if (pread(fd, &c, 1, st.st_size - 1) != 1 || c == '\n') return 0;
    /* Walk back in blocks to the last newline. */
    char blk[4096];
    off_t end = st.st_size;
    while (end > 0) {
        off_t start = end > (off_t)sizeof blk ? end - (off_t)sizeof blk : 0;
        ssize_t n = pread(fd, blk, (size_t)(end - start), start);
        if (n <= 0) return -1;
        for (ssize_t i = n - 1; i >= 0; i--)
            if (blk[i] == '\n') {
                off_t keep = start + i + 1;
                return ftruncate(fd, keep) < 0 ? -1 : (long)(st.st_size - keep);
            }
        end = start;
    }
    return ftruncate(fd, 0) < 0 ? -1 : (long)st.st_size;
}
