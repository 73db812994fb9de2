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
