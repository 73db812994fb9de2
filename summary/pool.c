/* The worker threads that scan the summary's files: whole files, and large GPU files in
 * chunks, all of one queue; then the chunks folded back in order. */
#include "summary/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "summary/chunks.h"
#include "summary/scan.h"
#include "summary/segagg.h"

/* One piece of work: a whole file, or one chunk of a file. */
struct work {
    struct file_agg *f;
    bool part;
};

struct pool {
    struct rm_summary *s;
    struct work *w;
    size_t n;
    atomic_size_t next;
    atomic_size_t done;
};

static void setup_job(struct rm_summary *s, struct file_agg *f)
{
    f->rl = &s->rl;
    f->gpu_fields = s->gpu_fields[0] ? s->gpu_fields : NULL;
    f->gpu_fields_src = s->gpu_fields_src;
    f->gpu_count = (int)json_array_size(json_object_get(s->session, "gpus"));
}

static void *worker(void *arg)
{
    struct pool *pl = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&pl->next, 1);
        if (i >= pl->n) break;
        struct work *w = &pl->w[i];
        if (w->part)
            rm_scan_part(w->f, &pl->s->progress);
        else if (w->f->path) {
            setup_job(pl->s, w->f);
            rm_scan_file(w->f, pl->s->interval_ns, &pl->s->progress);
        } else {
            rm_segment_resolve_phases(w->f, &pl->s->rl);
        }
        atomic_fetch_add(&pl->done, 1);
    }
    return NULL;
}

void rm_summary_run_jobs(struct rm_summary *s)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = s->opts.threads > 0 ? (size_t)s->opts.threads : ncpu > 0 ? (size_t)ncpu : 1;
    uint64_t total = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        struct stat st;
        if (s->jobs[i]->path && stat(s->jobs[i]->path, &st) == 0) total += (uint64_t)st.st_size;
    }
    /* Large GPU files in chunks, so that one file uses every thread. */
    uint64_t chunk = rm_chunk_bytes();
    struct file_agg ***parts = rm_xcalloc(s->njobs + 1, sizeof *parts);
    size_t *nparts = rm_xcalloc(s->njobs + 1, sizeof *nparts);
    struct pool pl = {.s = s};
    size_t cap = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        struct file_agg *f = s->jobs[i];
        if (f->path && chunk && rm_chunkable(f->kind)) {
            setup_job(s, f);
            struct stat st;
            if (stat(f->path, &st) == 0 && (uint64_t)st.st_size >= 2 * chunk &&
                rm_scan_prepare(f, s->interval_ns) == 0) {
                nparts[i] = rm_plan_chunks(f, chunk, &parts[i]);
                if (!nparts[i]) { /* read whole after all: as a worker would start it */
                    free(f->parser);
                    f->parser = NULL;
                }
            }
        }
        size_t add = nparts[i] ? nparts[i] : 1;
        if (pl.n + add > cap) {
            cap = (pl.n + add) * 2;
            pl.w = rm_xrealloc(pl.w, cap * sizeof *pl.w);
        }
        for (size_t k = 0; k < add; k++)
            pl.w[pl.n++] = (struct work){nparts[i] ? parts[i][k] : f, nparts[i] > 0};
    }
    if (nt > pl.n) nt = pl.n;
    /* With progress wanted on a terminal, this thread only reports (once a second has
     * passed) and nt threads scan; otherwise it scans beside nt - 1 others. */
    bool report = s->opts.progress && isatty(2) && nt > 0;
    size_t nspawn = report ? nt : nt ? nt - 1 : 0;
    pthread_t *th = calloc(nspawn ? nspawn : 1, sizeof *th);
    size_t started = 0;
    for (size_t i = 0; th && i < nspawn; i++)
        if (pthread_create(&th[i], NULL, worker, &pl) == 0) started++;
    if (!report || started == 0) {
        worker(&pl);
    } else {
        int64_t t0 = rm_now_monotonic_ns();
        bool shown = false;
        while (atomic_load(&pl.done) < pl.n) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (rm_now_monotonic_ns() - t0 > RM_NS_PER_SEC) {
                uint64_t done = atomic_load(&s->progress);
                fprintf(stderr, "\rrunmon summary: %llu / %llu MiB",
                        (unsigned long long)(done >> 20), (unsigned long long)(total >> 20));
                shown = true;
            }
        }
        if (shown) fprintf(stderr, "\n");
    }
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    for (size_t i = 0; i < s->njobs; i++)
        if (nparts[i])
            rm_finish_parts(s->jobs[i], parts[i], nparts[i], s->interval_ns, &s->progress);
    free(parts);
    free(nparts);
    free(pl.w);
}
