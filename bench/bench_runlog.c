/* RunLog append throughput: the C API (flock + fstat + one write() per line) against two
 * references measured in the same run on the same kind of file: the same line through stdio
 * with fflush per line (the usual way to write a log line at once), and a bare write() of a
 * line built with snprintf (the floor: one syscall, no lock, no JSON).
 * usage: bench_runlog DIR [LINES]   prints "name lines_per_second" rows. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "runlog/runlog.h"

static double rate(long n, int64_t t0)
{
    return n / ((rm_now_monotonic_ns() - t0) / 1e9);
}

/* The line all three write: {"ts":..,"type":"event","event":"step","pid":..,"t":..,"data":{..}} */
static int fmt_line(char *buf, size_t n, long i)
{
    int64_t now = rm_now_realtime_ns();
    char ts[RM_TS_BUFSZ];
    rm_format_ts(now, ts);
    int64_t ms = now / RM_NS_PER_MS;
    return snprintf(buf, n,
                    "{\"ts\":\"%s\",\"type\":\"event\",\"event\":\"step\",\"pid\":%ld,\"t\":%lld."
                    "%03lld,\"data\":{\"i\":%ld,\"loss\":0.25,\"tag\":\"bench\"}}\n",
                    ts, (long)getpid(), (long long)(ms / 1000), (long long)(ms % 1000), i);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_runlog DIR [LINES]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 200000;
    char path[4096], line[512];

    snprintf(path, sizeof path, "%s/api.jsonl", argv[1]);
    rm_runlog *log = rm_runlog_open(path);
    if (!log) {
        fprintf(stderr, "%s\n", rm_runlog_errmsg());
        return 1;
    }
    json_t *data = json_pack("{s:i, s:f, s:s}", "i", 0, "loss", 0.25, "tag", "bench");
    int64_t t0 = rm_now_monotonic_ns();
    for (long i = 0; i < n; i++) {
        json_object_set_new(data, "i", json_integer(i));
        if (rm_runlog_event(log, "step", data) < 0) {
            fprintf(stderr, "%s\n", rm_runlog_errmsg());
            return 1;
        }
    }
    double api = rate(n, t0);
    json_decref(data);
    rm_runlog_close(log);

    snprintf(path, sizeof path, "%s/stdio.jsonl", argv[1]);
    FILE *f = fopen(path, "a");
    t0 = rm_now_monotonic_ns();
    for (long i = 0; i < n; i++) {
        fmt_line(line, sizeof line, i);
        fputs(line, f);
        fflush(f);
    }
    double stdio = rate(n, t0);
    fclose(f);

    snprintf(path, sizeof path, "%s/write.jsonl", argv[1]);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    t0 = rm_now_monotonic_ns();
    for (long i = 0; i < n; i++) {
        int len = fmt_line(line, sizeof line, i);
        if (write(fd, line, (size_t)len) != len) return 1;
    }
    double bare = rate(n, t0);
    close(fd);

    printf("api_lines_per_s %.0f\nstdio_fflush_lines_per_s %.0f\nbare_write_lines_per_s %.0f\n",
           api, stdio, bare);
    return 0;
}
