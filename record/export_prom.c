/* The Prometheus textfile (`runmon record --prom-textfile PATH`): an exporter
 * (record/exporter.h). Every flush period it renders the tick's snapshot (record/snapshot.h)
 * with report/prom.h into one reused buffer and replaces PATH atomically; at the end it
 * writes the session's final status only (no sample series).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "record/exporter.h"
#include "report/prom.h"

struct prom_textfile {
    const char *path;
    int quiet;
    char *buf;
    size_t cap;
    int64_t period_ns, next_mono_ns;
    double period_s;
    int warned;
};

static int prom_wanted(const struct rm_record_opts *opts)
{
    return opts->prom_textfile != NULL;
}

/* Without --flush-seconds the file is rewritten every 2 s, whatever the sink's own default
 * (its freshness is not the sink's cost: docs/ARCHITECTURE.md, "The sink's rounds"). */
#define PROM_TEXTFILE_DEFAULT_PERIOD_S 2.0

static int prom_open(void *self, const struct rm_exporter_env *env, char *err, size_t errsz)
{
    struct prom_textfile *p = self;
    p->path = env->opts->prom_textfile;
    p->quiet = env->port->quiet;
    p->cap = 64 * 1024;
    p->buf = malloc(p->cap);
    if (!p->buf) {
        snprintf(err, errsz, "--prom-textfile: out of memory");
        return -1;
    }
    double flush_s = env->opts->flush_s > 0 ? env->opts->flush_s : PROM_TEXTFILE_DEFAULT_PERIOD_S;
    p->period_s = flush_s;
    p->period_ns = (int64_t)llround(flush_s * 1e9);
    p->next_mono_ns = env->now_mono_ns + p->period_ns;
    return 0;
}

static int64_t prom_due(const void *self)
{
    return ((const struct prom_textfile *)self)->next_mono_ns;
}

static void write_now(struct prom_textfile *p, const struct rm_snapshot *snap)
{
    struct rm_prom_input in;
    rm_snapshot_prom_input(snap, p->period_s, &in);
    long n;
    while ((n = rm_prom_render(p->buf, p->cap, &in)) < 0) {
        char *nb = p->cap < 16 * 1024 * 1024 ? realloc(p->buf, p->cap * 2) : NULL;
        if (!nb) return;
        p->buf = nb;
        p->cap *= 2;
    }
    /* 0644 even under --private: node_exporter, another user, reads it. */
    if (rm_write_file_atomic_mode(p->path, p->buf, (size_t)n, 0644) < 0) {
        if (!p->warned++ && !p->quiet)
            fprintf(stderr, "runmon record: cannot write %s: %s\n", p->path, strerror(errno));
    } else {
        p->warned = 0;
    }
}

static void prom_poll(void *self, struct rm_tick *t)
{
    struct prom_textfile *p = self;
    int64_t now = t->now_mono_ns;
    if (now < p->next_mono_ns) return;
    write_now(p, rm_tick_snapshot(t));
    /* Stay on the grid; skip slots missed while busy rather than writing in a burst. */
    p->next_mono_ns += p->period_ns;
    if (p->next_mono_ns <= now) p->next_mono_ns = now + p->period_ns;
}

static void prom_close(void *self, const struct rm_snapshot *snap)
{
    struct prom_textfile *p = self;
    write_now(p, snap); /* the final status, no sample series */
    free(p->buf);
    p->buf = NULL;
}

const struct rm_exporter_ops rm_exporter_prom_textfile = {
    .name = "prom-textfile",
    .size = sizeof(struct prom_textfile),
    .wanted = prom_wanted,
    .open = prom_open,
    .due = prom_due,
    .poll = prom_poll,
    .close = prom_close,
};
