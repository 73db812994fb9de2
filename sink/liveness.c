/* Liveness of a session's recorder (sink/liveness.h). */
#include "sink/liveness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "sink/names.h"

/* /proc/stat's btime and a start time in clock ticks have a second's resolution each, and
 * btime moves with clock adjustments: a process that started this much after the session is
 * surely another one. */
#define START_SLACK_NS (3 * RM_NS_PER_SEC)

void rm_this_host(char *out, size_t cap)
{
    /* RUNMON_HOSTNAME stands for the host name (tests: two "hosts" on one machine); one
     * that is empty, too long or holds control bytes is ignored, and said once. */
    static atomic_flag said = ATOMIC_FLAG_INIT;
    const char *env = getenv("RUNMON_HOSTNAME");
    size_t n = env ? strlen(env) : 0;
    int ok = n > 0 && n < cap, control = 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = !(control = (unsigned char)env[i] < 0x20 || env[i] == 0x7f);
    if (ok)
        memcpy(out, env, n + 1);
    else if (gethostname(out, cap) < 0)
        snprintf(out, cap, "unknown");
    out[cap - 1] = '\0';
    if (n > 0 && !ok && !atomic_flag_test_and_set(&said)) {
        fputs("runmon: RUNMON_HOSTNAME ignored: ", stderr);
        if (control)
            fputs("it holds a control character (a newline, a tab...)", stderr);
        else
            fprintf(stderr, "%zu bytes, longer than a host name may be (%zu)", n, cap - 1);
        fputs("; the host name is ", stderr);
        rm_fput_safe(stderr, out);
        fputc('\n', stderr);
    }
}

int rm_pid_exists(long long pid)
{
    if (pid <= 0 || pid > INT_MAX) return 0;
    if (kill((pid_t)pid, 0) != 0 && errno != EPERM) return 0;
    /* A zombie (killed, not yet reaped by its parent) writes nothing again: a temp file it
     * left must go when its session is recovered, the only time anything looks. */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    if (rm_read_head(AT_FDCWD, path, buf, sizeof buf) < 0) return 1;
    const char *rp = strrchr(buf, ')'); /* the name may hold ')' */
    return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

int64_t rm_session_id_start_ns(const char *id)
{
    struct tm tm = {0};
    const char *end = id ? strptime(id, "%Y%m%dT%H%M%SZ", &tm) : NULL;
    if (!end || (*end && *end != '-')) return 0;
    time_t t = timegm(&tm);
    return t > 0 ? (int64_t)t * RM_NS_PER_SEC : 0;
}

/* Boot time (epoch seconds) from /proc/stat, or 0. */
static long long boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f) return 0;
    char line[256];
    long long bt = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &bt) == 1) break;
    fclose(f);
    return bt;
}

/* When process pid started (epoch ns), or 0 when unknown. */
static int64_t process_start_ns(long long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    if (rm_read_head(AT_FDCWD, path, buf, sizeof buf) <= 0) return 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    if (!p) return 0;
    /* after the name: state (field 3) ... starttime (field 22) */
    unsigned long long ticks = 0;
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ') field++;
    if (field != 22 || sscanf(p, "%llu", &ticks) != 1) return 0;
    long hz = sysconf(_SC_CLK_TCK);
    long long bt = boot_time();
    if (hz <= 0 || bt <= 0) return 0;
    return (int64_t)bt * RM_NS_PER_SEC + (int64_t)(ticks / (unsigned long long)hz) * RM_NS_PER_SEC +
           (int64_t)(ticks % (unsigned long long)hz) * RM_NS_PER_SEC / hz;
}

enum rm_liveness rm_recorder_liveness(const char *sink_dir, const char *id, const char *host,
                                      long long pid, int64_t started_ns)
{
    char me[256];
    rm_this_host(me, sizeof me);
    if (!host || strcmp(host, me)) return RM_RECORDER_UNKNOWN;
    if (rm_valid_session_id(id)) {
        char path[PATH_MAX + RM_SESSION_ID_MAX + 32];
        snprintf(path, sizeof path, "%s/%s/%s", sink_dir, id, RM_RECORDER_LOCK);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
            int rc = flock(fd, LOCK_SH | LOCK_NB);
            int e = errno;
            close(fd); /* drops our test lock too */
            if (rc == 0) return RM_RECORDER_DEAD;
            if (e == EWOULDBLOCK) return RM_RECORDER_ALIVE;
            /* a file system without flock: the pid decides */
        }
    }
    if (!rm_pid_exists(pid)) return RM_RECORDER_DEAD;
    int64_t began = process_start_ns(pid);
    if (started_ns > 0 && began > started_ns + START_SLACK_NS) return RM_RECORDER_DEAD;
    return RM_RECORDER_ALIVE;
}

int rm_recorder_claim(const char *session_dir)
{
    char tmp[PATH_MAX + 64], path[PATH_MAX + 64];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", session_dir, RM_RECORDER_LOCK) >=
            sizeof path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    (void)unlink(tmp);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, rm_file_mode());
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    return fd;
}

void rm_recorder_release(int fd, const char *session_dir)
{
    if (fd < 0) return;
    char path[PATH_MAX + 64];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", session_dir, RM_RECORDER_LOCK) < sizeof path)
        (void)unlink(path);
    close(fd);
}
