#include "monitor/phase_follow.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void rm_phase_follow_init(struct rm_phase_follow *f, const char *file, int check_pids)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    snprintf(f->file, sizeof f->file, "%s", file);
    f->check_pids = check_pids;
}

void rm_phase_follow_fini(struct rm_phase_follow *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}

static void forget(struct rm_phase_follow *f, int i)
{
    memmove(&f->open[i], &f->open[i + 1], (size_t)(f->nopen - i - 1) * sizeof f->open[0]);
    f->nopen--;
}

static void enter(struct rm_phase_follow *f, int64_t pid, const char *path)
{
    if (strlen(path) >= RM_PF_MAX_PATH) return;
    if (f->nopen == RM_PF_MAX_OPEN) forget(f, 0); /* the oldest: the table stays bounded */
    struct rm_pf_open *o = &f->open[f->nopen++];
    o->pid = pid;
    o->seq = ++f->seq;
    strcpy(o->path, path);
}

static void leave(struct rm_phase_follow *f, int64_t pid, const char *path)
{
    for (int i = f->nopen - 1; i >= 0; i--)
        if (f->open[i].pid == pid && !strcmp(f->open[i].path, path)) {
            forget(f, i);
            return;
        }
}

static void completed(struct rm_phase_follow *f, const char *path, double seconds)
{
    if (!isfinite(seconds) || seconds < 0) seconds = 0;
    for (int i = 0; i < f->ndone; i++)
        if (!strcmp(f->done[i].path, path)) {
            f->done[i].count++;
            f->done[i].seconds += seconds;
            f->done[i].short_count += seconds < RM_PF_SHORT_S;
            return;
        }
    if (strlen(path) >= RM_PF_MAX_PATH || f->ndone == RM_PF_MAX_DONE) {
        f->done_dropped++;
        return;
    }
    struct rm_pf_done *d = &f->done[f->ndone++];
    strcpy(d->path, path);
    d->count = 1;
    d->seconds = seconds;
    d->short_count = seconds < RM_PF_SHORT_S;
}

void rm_phase_follow_line(struct rm_phase_follow *f, const char *line, size_t len)
{
    /* Cheap filter first: most lines are events or samples of nothing phase-like. */
    if (!memmem(line, len, "\"phase", 6)) return;
    json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return;
    }
    const char *type = json_string_value(json_object_get(j, "type"));
    const char *path = json_string_value(json_object_get(j, "path"));
    json_t *pid = json_object_get(j, "pid");
    double secs = json_number_value(json_object_get(j, "seconds"));
    if (type && path && json_is_integer(pid)) {
        if (!strcmp(type, "phase_enter")) {
            enter(f, json_integer_value(pid), path);
        } else if (!strcmp(type, "phase_exit")) {
            leave(f, json_integer_value(pid), path);
            completed(f, path, secs);
        }
    }
    if (type && !strcmp(type, "phase")) {
        const char *p = path ? path : json_string_value(json_object_get(j, "name"));
        if (p && p[0]) completed(f, p, secs);
    }
    json_decref(j);
}

static void take(struct rm_phase_follow *f, const char *p, size_t n, int *lines)
{
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t chunk = nl ? (size_t)(nl - p) : n;
        if (!f->skipping) {
            if (f->line_len + chunk > sizeof f->line) {
                f->skipping = 1; /* too long to be a phase line we can use */
                f->line_len = 0;
            } else {
                memcpy(f->line + f->line_len, p, chunk);
                f->line_len += chunk;
            }
        }
        if (!nl) return;
        if (!f->skipping) {
            rm_phase_follow_line(f, f->line, f->line_len);
            (*lines)++;
        }
        f->skipping = 0;
        f->line_len = 0;
        p = nl + 1;
        n -= chunk + 1;
    }
}

int rm_phase_follow_poll(struct rm_phase_follow *f)
{
    if (f->fd < 0) {
        f->fd = open(f->file, O_RDONLY | O_CLOEXEC);
        if (f->fd < 0) return -1;
    }
    char buf[65536];
    int lines = 0;
    size_t total = 0;
    while (total < RM_PF_MAX_READ) {
        ssize_t n = pread(f->fd, buf, sizeof buf, f->offset);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) break;
        f->offset += n;
        total += (size_t)n;
        take(f, buf, (size_t)n, &lines);
    }
    return lines;
}

const char *rm_phase_follow_current(struct rm_phase_follow *f)
{
    while (f->nopen > 0) {
        struct rm_pf_open *o = &f->open[f->nopen - 1];
        if (f->check_pids && o->pid > 0 && kill((pid_t)o->pid, 0) < 0 && errno == ESRCH) {
            forget(f, f->nopen - 1); /* its writer died without a phase_exit */
            continue;
        }
        return o->path;
    }
    return NULL;
}
