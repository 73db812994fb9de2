/* Small file helpers with the durability rules runmon relies on. */
#ifndef RUNMON_FILEIO_H
#define RUNMON_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Replaces path with data: temp file in the same directory, fsync, rename, fsync of the
 * directory (redis rdb.c order), so a reader or a power cut sees the old or the new file,
 * never a mix. Returns 0, or -1 with errno set (the temp file is removed). */
int rm_write_file_atomic(const char *path, const void *data, size_t len);

/* write() the whole buffer, resuming after EINTR and short writes. 0, or -1 with errno. */
int rm_write_all(int fd, const void *data, size_t len);

/* mkdir -p with mode 0755. 0, or -1 with errno. */
int rm_mkdir_p(const char *path);

#endif
