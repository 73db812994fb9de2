/* libFuzzer: run-log lines, phase matching and the window index; and the fast reader (lines
 * without a JSON tree) against the general one, line by line; metric and objective lines, the
 * run's and (read again from a file, as the summary does) each phase's. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "summary/csvread.h"
#include "summary/runlog_read.h"

/* Both readers, the same state after each line (abort() makes libFuzzer keep the input). */
struct both {
    struct rm_phase_index fast, general;
};

static void same(const struct rm_phase_index *a, const struct rm_phase_index *b)
{
    if (a->lines != b->lines || a->events != b->events || a->torn != b->torn ||
        a->garbage != b->garbage || a->bad_time != b->bad_time ||
        a->unmatched_exits != b->unmatched_exits || a->first_ns != b->first_ns ||
        a->last_ns != b->last_ns || a->nphases != b->nphases || a->other != b->other ||
        a->folded_paths != b->folded_paths || a->nwin != b->nwin || a->nopen != b->nopen)
        abort();
    for (size_t i = 0; i < a->nphases; i++) {
        const struct rm_phase *x = &a->phases[i], *y = &b->phases[i];
        if (strcmp(x->path, y->path) || x->depth != y->depth || x->count != y->count ||
            x->ok != y->ok || x->error != y->error ||
            memcmp(&x->total_s, &y->total_s, sizeof x->total_s) ||
            x->first_start_ns != y->first_start_ns || x->last_end_ns != y->last_end_ns)
            abort();
    }
    const struct rm_metrics *m = &a->metrics, *n = &b->metrics;
    if (m->lines != n->lines || m->n != n->n || m->bad_lines != n->bad_lines ||
        m->bad_values != n->bad_values || m->bad_objectives != n->bad_objectives)
        abort();
    if (a->nwin && memcmp(a->win, b->win, a->nwin * sizeof *a->win)) abort();
    if (a->nopen && memcmp(a->open, b->open, a->nopen * sizeof *a->open)) abort();
}

static void line(void *ctx, const char *s, size_t len, bool torn)
{
    struct both *b = ctx;
    rm_runlog_line(&b->fast, s, len, torn);
    rm_runlog_line(&b->general, s, len, torn);
    same(&b->fast, &b->general);
}
static void hit(void *ctx, size_t phase)
{
    *(size_t *)ctx += phase + 1;
}

/* The input as a file (a memfd): read, finished, its metric lines read again per phase, and
 * every metrics output made. A phase's count of a metric never passes the run's. */
static void phase_metrics(const uint8_t *data, size_t size)
{
    int fd = memfd_create("runlog", 0);
    if (fd < 0) return;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return;
    }
    char path[64], err[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct rm_phase_index r;
    rm_runlog_init(&r);
    r.max_phases = 8;
    if (rm_runlog_read_file(&r, path, err, sizeof err) == 0) {
        rm_runlog_finish(&r, r.last_ns, NULL, NULL);
        if (rm_runlog_phase_metrics(&r, err, sizeof err) == 0) {
            const struct rm_metrics *m = &r.metrics;
            for (size_t p = 0; p < m->nphase; p++)
                for (size_t i = 0; i < m->phase[p].n; i++)
                    if (m->phase[p].cell[i].st.count > m->run[m->phase[p].cell[i].metric].count)
                        abort();
            json_t *j = rm_metrics_json(m), *notes = json_array();
            for (size_t p = 0; p < r.nphases; p++)
                json_decref(rm_metrics_phase_json(m, p));
            rm_metrics_notes(m, notes);
            json_decref(j);
            json_decref(notes);
        }
    }
    rm_runlog_free(&r);
    close(fd);
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct both b;
    rm_runlog_init(&b.fast);
    rm_runlog_init(&b.general);
    b.fast.max_phases = b.general.max_phases = 8; /* folding too */
    b.general.general_only = true;
    rm_split_lines((const char *)data, size, 1 << 20, line, &b, NULL);
    rm_runlog_free(&b.general);
    struct rm_phase_index r = b.fast;
    rm_runlog_finish(&r, r.last_ns, NULL, NULL);
    size_t sum = 0;
    if (r.first_ns != INT64_MIN)
        for (int i = 0; i < 8; i++)
            rm_runlog_windows_at(&r, r.first_ns + (int64_t)i * 500000000LL, hit, &sum);
    rm_runlog_free(&r);
    phase_metrics(data, size);
    return 0;
}
