/* Small file helpers with the durability rules runmon relies on. */
#ifndef RUNMON_FILEIO_H
#define RUNMON_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* The modes runmon creates its files and folders with (the umask still applies): 0644 and
 * 0755 by default, 0600 and 0700 once rm_fileio_set_private(1) was called (runmon record
 * --private; call it before any thread starts). */
void rm_fileio_set_private(int on);
int rm_fileio_private(void);
mode_t rm_file_mode(void);
mode_t rm_dir_mode(void);

/* Replaces path with data: temp file in the same directory, fsync, rename, fsync of the
 * directory (redis rdb.c order), so a reader or a power cut sees the old or the new file,
 * never a mix. The new file gets 0600 when private, else the mode bits of the file it
 * replaces (a private manifest stays private), else rm_file_mode(). The temp file is never
 * opened through a symbolic link. Returns 0, or -1 with errno set (the temp file is removed). */
int rm_write_file_atomic(const char *path, const void *data, size_t len);

/* rm_write_file_atomic through the temp file tmp (same file system), for a file only written
 * under a lock (a sink's sink.json and state.json): one temp name whoever writes, so one a
 * writer killed mid-write leaves is found by name (and replaced by the next write). */
int rm_write_file_atomic_via(const char *path, const char *tmp, const void *data, size_t len);

/* rm_write_file_atomic_via without its two fsyncs: a reader, or a process killed at any
 * moment, still sees the old file or the new one, never a mix; but after a power loss or an
 * OS crash the file may be the old one, the new one, or (on some file systems) empty or torn,
 * until the next rm_write_file_atomic_via of it has returned. For files the caller can
 * rebuild from others (a sink's state.json and sink.json between durable rounds). */
int rm_write_file_replace_via(const char *path, const char *tmp, const void *data, size_t len);

/* The same with the new file's mode given (before the umask). */
int rm_write_file_atomic_mode(const char *path, const void *data, size_t len, mode_t mode);

/* True when path exists and is neither a regular file nor a folder: a character device
 * (/dev/null, a terminal), a FIFO or a socket, followed through symbolic links. Such a target
 * is written in place: renaming a temp file over it would replace the device with a file (as
 * root, /dev/null itself). The rm_write_file_atomic functions do so on their own. */
int rm_path_is_special(const char *path);

/* write() the whole buffer, resuming after EINTR and short writes. 0, or -1 with errno. */
int rm_write_all(int fd, const void *data, size_t len);

/* read() into buf until end of file or cap bytes, resuming after EINTR and short reads (a
 * pipe, a /proc file handed out a page at a time). The bytes read (cap: there may be more),
 * or -1 with errno. */
ssize_t rm_read_full(int fd, void *buf, size_t cap);

/* The whole file at path (relative to dirfd; AT_FDCWD: the working directory) into *buf,
 * grown with realloc as needed (*cap its size; NULL and 0 to start), NUL-terminated. Read to
 * its end whatever its size said: a /proc file says 0, a file growing while read gives what
 * it held when the read reached its end. Only regular files (/proc's are): a directory is
 * refused with EISDIR, a FIFO, device or socket with EINVAL (never waiting for a writer), a
 * file of more than max bytes with EFBIG. The length, or -1 with errno set and, when err is
 * not NULL, "PATH: why" written there (the buffer is kept for the next call). */
ssize_t rm_read_file_at(int dirfd, const char *path, size_t max, char **buf, size_t *cap, char *err,
                        size_t errsz);

/* rm_read_file_at into new memory: the bytes (malloc'd, NUL-terminated, *len of them), or
 * NULL with errno and err. */
char *rm_read_file(const char *path, size_t max, size_t *len, char *err, size_t errsz);

/* The first bytes of the regular file at path (relative to dirfd), at most cap - 1 of them,
 * into buf, NUL-terminated: a /proc/<pid>/stat, a file's head. Refuses what rm_read_file_at
 * refuses but a large file. The length, or -1 with errno. */
ssize_t rm_read_head(int dirfd, const char *path, char *buf, size_t cap);

/* Why a write of len bytes at offset `at` of a regular file stopped short without an errno:
 * EFBIG when it would cross the file-size limit (RLIMIT_FSIZE, `ulimit -f`), else ENOSPC.
 * Learned without writing again (past the limit, a write raises SIGXFSZ). */
int rm_short_write_errno(off_t at, size_t len);

/* mkdir -p with rm_dir_mode(). 0, or -1 with errno. */
int rm_mkdir_p(const char *path);

/* Cuts a file back to its last '\n': a torn last line, left by a writer killed mid-line,
 * that a line appended later would otherwise glue onto (the CSV streams, the sink's index).
 * Returns the bytes cut, or -1. */
long rm_file_trim_torn(int fd);

#endif
