/* The recorder of `runmon record` (record/recorder.h): the session's life cycle, its
 * threads, and the main thread's signal loop. */
#include "record/recorder.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/streams.h"
#include "monitor/apps_collector.h"
#include "monitor/child.h"
#include "monitor/collector.h"
#include "monitor/cpu_sampler.h"
#include "monitor/gpu_collectors.h"
#include "monitor/latest.h"
#include "monitor/phase_follow.h"
#include "monitor/port.h"
#include "record/status.h"
#include "report/output.h"
#include "report/prom.h"
#include "runlog/runlog.h"
#include "sink/session.h"
#include "sink/sink.h"
#include "summary/summary.h"

/* The state of one session, shared by its threads through the ports it hands out. */
struct rm_recorder {
    struct rm_record_opts opts;
    struct rm_session sess;
    struct rm_runlog *log;
    struct rm_sink *sink; /* NULL when the sink could not be opened */
    /* Guards sess and latest against the workers and the writers of session.json. */
    pthread_mutex_t lock;
    atomic_int stop;
    atomic_int workload_pid; /* 0 until the command runs; read by the CPU sampler */
    struct rm_latest latest; /* the latest values, for the Prometheus export */
    struct rm_port port;     /* what every worker gets instead of this struct */
    /* The run log followed for the open phase and the completed ones: read by the main
     * thread only (the exporter and the status line). */
    struct rm_phase_follow phases;
    struct rm_status status; /* the live line on a terminal (off unless stderr is a tty) */
};

/* "runmon record: WHAT WHY" on stderr, WHY escaped: it may quote nvidia-smi or a file. */
static void say(const char *what, const char *why)
{
    fputs("runmon record: ", stderr);
    fputs(what, stderr);
    rm_fput_safe(stderr, why);
    fputc('\n', stderr);
}

static void recorder_event(void *owner, const char *name, json_t *data)
{
    struct rm_recorder *r = owner;
    rm_status_event(&r->status, name, data);
    if (r->log && rm_runlog_event(r->log, name, data) < 0 && !r->opts.quiet)
        fprintf(stderr, "runmon record: run log: %s\n", rm_runlog_errmsg());
    json_decref(data);
}

static void recorder_set_health(void *owner, int collector, enum rm_health h,
                                const char *last_error, int count_failure)
{
    struct rm_recorder *r = owner;
    pthread_mutex_lock(&r->lock);
    struct rm_collector_health *c = &r->sess.collectors[collector];
    c->health = h;
    if (last_error) snprintf(c->last_error, sizeof c->last_error, "%s", last_error);
    if (count_failure) c->failure_event_count++;
    pthread_mutex_unlock(&r->lock);
}

/* The port every worker of this session gets. */
static void port_init(struct rm_recorder *r)
{
    r->port = (struct rm_port){.owner = r,
                               .event = recorder_event,
                               .set_health = recorder_set_health,
                               .lock = &r->lock,
                               .sess = &r->sess,
                               .latest = &r->latest,
                               .stop = &r->stop,
                               .workload_pid = &r->workload_pid,
                               .interval_s = r->opts.interval_s,
                               .quiet = r->opts.quiet};
}

struct supervisor {
    struct rm_recorder *rec;
    struct rm_collector cols[3];
    int ncols;
    struct rm_gpu_ctx gpu;
    struct rm_dmon_ctx dmon;
    struct rm_apps_ctx apps;
    int have_apps;
    char lms[32], dsec[16], psec[16], query[2200];
    rm_wakeup wake;
    pthread_t thread;
    int started;
};

static void *supervisor_main(void *arg)
{
    struct supervisor *s = arg;
    pthread_setname_np(pthread_self(), "rm-collectors"); /* for top -H and the bench */
    rm_collectors_run(s->cols, s->ncols, &s->wake);
    return NULL;
}

static void collector_setup(struct rm_collector *c, struct rm_recorder *rec, const char *name,
                            int id, int64_t interval_ns)
{
    memset(c, 0, sizeof *c);
    rm_child_init(&c->child);
    c->epfd = c->watched[0] = c->watched[1] = c->watched[2] = -1;
    c->name = name;
    c->id = id;
    c->port = &rec->port;
    c->stale_ns = rm_stale_after_ns(interval_ns);
}

/* The per-process collector: pmon takes whole seconds, 1 to 10. */
static int start_apps(struct supervisor *s, struct rm_recorder *rec, char *err, size_t errlen)
{
    if (rm_apps_ctx_init(&s->apps, &rec->port, rec->opts.proc_root) < 0) {
        snprintf(err, errlen, "cannot write in %s: %s", rec->sess.dir, strerror(errno));
        return -1;
    }
    s->have_apps = 1;
    rm_sink_attach(rec->sink, &s->apps.out);
    int d = (int)llround(rec->opts.interval_s);
    d = d < 1 ? 1 : d > 10 ? 10 : d;
    snprintf(s->psec, sizeof s->psec, "%d", d);
    struct rm_collector *a = &s->cols[s->ncols++];
    collector_setup(a, rec, "apps", RM_COL_APPS, (int64_t)d * RM_NS_PER_SEC);
    const char *aargv[] = {rec->opts.nvidia_smi, "pmon", "-s", "mu", "-d", s->psec, NULL};
    memcpy(a->argv, aargv, sizeof aargv);
    a->on_line = rm_apps_on_line;
    a->on_flush = rm_apps_on_flush;
    a->ctx = &s->apps;
    return 0;
}

/* Takes the inventory, opens gpu.csv and dmon.csv and starts the supervisor thread.
 * Returns 0 (also when there is no nvidia-smi: a normal case), -1 on a fatal error. */
static int start_gpu(struct supervisor *s, struct rm_recorder *rec, char *err, size_t errlen)
{
    struct rm_session *sess = &rec->sess;
    const char *smi = rec->opts.nvidia_smi;
    char why[512];
    int spawn_errno = 0;
    if (rm_gpu_inventory(smi, sess, 15000, why, sizeof why, &spawn_errno) < 0) {
        if (spawn_errno == ENOENT) {
            for (int id = 0; id < RM_COL_COUNT; id++) {
                if (id != RM_COL_GPU && id != RM_COL_DMON &&
                    (id != RM_COL_APPS || rec->opts.no_apps))
                    continue;
                json_t *d = json_object();
                json_object_set_new(d, "collector", json_string(rm_stream_defs[id].name));
                json_object_set_new(d, "reason", json_string(why));
                recorder_event(rec, "collector_unavailable", d);
                recorder_set_health(rec, id, RM_HEALTH_UNAVAILABLE, why, 0);
            }
            if (!rec->opts.quiet) say("no GPU collectors: ", why);
            return 0;
        }
        json_t *d = json_object();
        json_object_set_new(d, "reason", rm_jstr(why));
        recorder_event(rec, "inventory_failed", d);
        if (!rec->opts.quiet) say("GPU inventory failed: ", why);
    }
    s->rec = rec;
    if (rm_gpu_ctx_init(&s->gpu, &rec->port, rec->opts.gpu_fields, err, errlen) < 0) return -1;
    rm_dmon_ctx_init(&s->dmon, &rec->port);
    if (rm_stream_open(&s->gpu.out, sess->dir, RM_STREAM_GPU) < 0 ||
        rm_stream_open(&s->dmon.out, sess->dir, RM_STREAM_DMON) < 0) {
        snprintf(err, errlen, "cannot write in %s: %s", sess->dir, strerror(errno));
        return -1;
    }
    rm_sink_attach(rec->sink, &s->gpu.out);
    rm_sink_attach(rec->sink, &s->dmon.out);
    int64_t interval_ns = (int64_t)llround(rec->opts.interval_s * 1e9);
    rm_stream_batch(&s->gpu.out, interval_ns); /* dmon and pmon sample once a second */
    snprintf(s->query, sizeof s->query, "--query-gpu=%s", rec->opts.gpu_fields);
    snprintf(s->lms, sizeof s->lms, "%lld", (long long)(interval_ns / RM_NS_PER_MS));
    snprintf(s->dsec, sizeof s->dsec, "%d", sess->dmon_interval_s);

    struct rm_collector *g = &s->cols[0];
    collector_setup(g, rec, "gpu", RM_COL_GPU, interval_ns);
    const char *gargv[] = {smi, s->query, "--format=csv,noheader,nounits", "-lms", s->lms, NULL};
    memcpy(g->argv, gargv, sizeof gargv);
    g->on_line = rm_gpu_on_line;
    g->on_flush = rm_gpu_on_flush;
    g->ctx = &s->gpu;

    struct rm_collector *d = &s->cols[1];
    collector_setup(d, rec, "dmon", RM_COL_DMON, (int64_t)sess->dmon_interval_s * RM_NS_PER_SEC);
    const char *dargv[] = {smi, "dmon", "-s", rec->opts.dmon_metrics, "-d", s->dsec, NULL};
    memcpy(d->argv, dargv, sizeof dargv);
    d->on_line = rm_dmon_on_line;
    d->on_flush = rm_dmon_on_flush;
    d->ctx = &s->dmon;
    s->ncols = 2;
    if (!rec->opts.no_apps && start_apps(s, rec, err, errlen) < 0) return -1;

    if (rm_wakeup_open(&s->wake) < 0 || pthread_create(&s->thread, NULL, supervisor_main, s) != 0) {
        snprintf(err, errlen, "cannot start the collector thread: %s", strerror(errno));
        return -1;
    }
    s->started = 1;
    return 0;
}

static void stop_gpu(struct supervisor *s)
{
    if (!s->started) return;
    rm_wakeup_signal(&s->wake);
    pthread_join(s->thread, NULL);
    rm_wakeup_close(&s->wake);
    rm_stream_close(&s->gpu.out);
    rm_stream_close(&s->dmon.out);
    if (s->have_apps) rm_apps_ctx_fini(&s->apps);
    rm_gpu_ctx_fini(&s->gpu);
    s->started = 0;
}

/* Creates DIR/<id>/ and fills the session's identity. */
static int open_session(struct rm_recorder *rec, char *err, size_t errlen)
{
    struct rm_session *s = &rec->sess;
    s->pid = getpid();
    s->started_ns = rm_now_realtime_ns();
    if (gethostname(s->host, sizeof s->host) < 0) snprintf(s->host, sizeof s->host, "unknown");
    s->host[sizeof s->host - 1] = '\0';
    rm_session_make_id(s->id, sizeof s->id, s->started_ns, s->host, s->pid);
    if (snprintf(s->dir, sizeof s->dir, "%s/%s", rec->opts.output_dir, s->id) >=
        (int)sizeof s->dir) {
        snprintf(err, errlen, "output path is too long");
        return -1;
    }
    if (rm_mkdir_p(s->dir) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", s->dir, strerror(errno));
        return -1;
    }
    struct stat st; /* never write through a link planted at the session's name */
    if (lstat(s->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: the session folder is not a directory of the sink", s->dir);
        return -1;
    }
    s->status = "running";
    s->exit_code = -1;
    s->command = rec->opts.command;
    s->interval_s = rec->opts.interval_s;
    s->gpu_fields = rec->opts.no_gpu ? NULL : rec->opts.gpu_fields;
    s->dmon_metrics = rec->opts.no_gpu ? NULL : rec->opts.dmon_metrics;
    s->dmon_interval_s = (int)llround(rec->opts.interval_s);
    if (s->dmon_interval_s < 1) s->dmon_interval_s = 1;
    s->warn_pct = rec->opts.warn_pct;
    s->crit_pct = rec->opts.crit_pct;
    for (int i = 0; i < RM_COL_COUNT; i++)
        s->collectors[i].name = rm_stream_defs[i].name;
    if (rec->opts.no_gpu)
        s->collectors[RM_COL_GPU].health = s->collectors[RM_COL_DMON].health = RM_HEALTH_DISABLED;
    if (rec->opts.no_gpu || rec->opts.no_apps)
        s->collectors[RM_COL_APPS].health = RM_HEALTH_DISABLED;
    if (!rec->opts.command) s->collectors[RM_COL_PROC].health = RM_HEALTH_DISABLED;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/runlog.jsonl", s->dir);
    rec->log = rm_runlog_open(path);
    if (!rec->log) {
        snprintf(err, errlen, "cannot open %s: %s", path, rm_runlog_errmsg());
        return -1;
    }
    return 0;
}

static void save_session(struct rm_recorder *rec)
{
    pthread_mutex_lock(&rec->lock);
    int rc = rm_session_save(&rec->sess);
    pthread_mutex_unlock(&rec->lock);
    if (rc < 0 && !rec->opts.quiet)
        fprintf(stderr, "runmon record: cannot write %s/session.json: %s\n", rec->sess.dir,
                strerror(errno));
}

/* summary.json in the session folder, and the text summary on stderr unless --quiet.
 * Sealed segments come from the manifest's aggregates (no rescan). */
static void write_summary(struct rm_recorder *rec, int have_sink)
{
    struct rm_summary_opts so = {.interval_s = rec->opts.interval_s};
    json_t *sum = NULL;
    char err[1024] = "";
    int rc = have_sink ? rm_sink_summary(rec->opts.output_dir, rec->sess.id, 0, &so, &sum, err,
                                         sizeof err)
                       : rm_summary_session_dir(rec->sess.dir, &so, &sum, err, sizeof err);
    if (rc != 0 || !sum) {
        if (!rec->opts.quiet) say("no summary: ", err[0] ? err : "no data");
        json_decref(sum);
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/summary.json", rec->sess.dir);
    if (!mem || rm_summary_print_json(mem, sum) < 0 || fclose(mem) != 0 ||
        rm_write_file_atomic(path, buf, len) < 0) {
        if (!rec->opts.quiet)
            fprintf(stderr, "runmon record: cannot write %s: %s\n", path, strerror(errno));
    }
    free(buf);
    if (!rec->opts.quiet) rm_summary_print_text(stderr, sum);
    json_decref(sum);
}

/* Runs the workload: its stdio and process group are runmon's own, so a terminal sees it
 * as usual, and no pdeathsig: killing runmon must not kill the work. */
static int spawn_workload(struct rm_recorder *rec, rm_child *w)
{
    char e1[PATH_MAX + 32], e2[256], e3[PATH_MAX + 32];
    snprintf(e1, sizeof e1, "RUNMON_RUNLOG=%s/runlog.jsonl", rec->sess.dir);
    snprintf(e2, sizeof e2, "RUNMON_SESSION_ID=%s", rec->sess.id);
    snprintf(e3, sizeof e3, "RUNMON_SESSION_DIR=%s", rec->sess.dir);
    const char *env[] = {e1, e2, e3, NULL};
    rm_child_opts o = {.inherit_stdin = true, .env_add = env};
    return rm_child_spawn(w, (const char *const *)rec->opts.command, &o);
}

/* Signals are read from a signalfd by the main thread; SIGUSR1 (the CPU sampler's wakeup)
 * stays blocked here and is unblocked by that thread alone. Returns the fd, or -1. */
static int block_signals(void)
{
    /* Our own output must never kill us: a full pipe or a file-size limit become errors. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    sigaddset(&handled, SIGCHLD);
    sigaddset(&handled, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &handled, NULL);
    sigset_t sfd_set = handled;
    sigdelset(&sfd_set, SIGUSR1);
    return signalfd(-1, &sfd_set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The workers of one session. */
struct workers {
    struct supervisor sup;
    struct rm_cpu_sampler cpu;
    struct rm_prom prom; /* --prom-textfile */
};

/* The sink, the CPU sampler, the GPU collectors and the exporter, in that order. 0, or -1
 * with the reason printed. */
static int start_workers(struct rm_recorder *rec, struct workers *w)
{
    char err[PATH_MAX * 2 + 512] = "";
    const struct rm_record_opts *o = &rec->opts;
    struct rm_sink_config sc = {.dir = o->output_dir,
                                .flush_s = o->flush_s,
                                .rollover_mb = o->rollover_mb,
                                .retention_files = o->retention_files,
                                .retention_total_mb = o->retention_total_mb};
    rec->sink = rm_sink_open(&sc, &rec->port, err, sizeof err);
    if (!rec->sink && !o->quiet) fprintf(stderr, "runmon record: no sink manifest: %s\n", err);
    if (rm_cpu_sampler_open(&w->cpu, &rec->port, o->proc_root, o->per_cpu, o->command != NULL, err,
                            sizeof err) < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
        return -1;
    }
    rm_sink_attach(rec->sink, &w->cpu.cpu);
    if (w->cpu.proc.buf) rm_sink_attach(rec->sink, &w->cpu.proc);
    /* see rm_stream_batch: fewer write()s at short intervals */
    int64_t interval_ns = (int64_t)llround(o->interval_s * 1e9);
    rm_stream_batch(&w->cpu.cpu, interval_ns);
    if (w->cpu.proc.buf) rm_stream_batch(&w->cpu.proc, interval_ns);
    if (rm_sink_start(rec->sink) < 0)
        fprintf(stderr, "runmon record: cannot start the sink thread\n");
    if (!o->no_gpu && start_gpu(&w->sup, rec, err, sizeof err) < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
        return -1;
    }
    save_session(rec);
    struct rm_prom_config pc = {.path = o->prom_textfile,
                                .flush_s = o->flush_s,
                                .have_command = o->command != NULL,
                                .phases = &rec->phases};
    if (rm_prom_open(&w->prom, &pc, &rec->port) < 0) {
        fprintf(stderr, "runmon record: --prom-textfile: out of memory\n");
        return -1;
    }
    if (rm_cpu_sampler_start(&w->cpu) < 0) {
        fprintf(stderr, "runmon record: cannot start the CPU sampler\n");
        return -1;
    }
    return 0;
}

/* Runs the command (if any) and waits for its end, a signal or --duration, passing signals
 * on to the command. Returns the session's exit status. */
static int run_until_done(struct rm_recorder *rec, int sfd, struct rm_prom *prom)
{
    rm_child work;
    rm_child_init(&work);
    int have_work = 0, status = 0;
    if (rec->opts.command) {
        int e = spawn_workload(rec, &work);
        if (e) {
            fprintf(stderr, "runmon record: %s\n", work.errmsg);
            status = e == ENOENT ? 127 : 126;
        } else {
            have_work = 1;
            atomic_store(&rec->workload_pid, work.pid);
        }
    }
    int64_t deadline = rec->opts.duration_s > 0
                           ? rm_now_monotonic_ns() + (int64_t)llround(rec->opts.duration_s * 1e9)
                           : 0;
    int stopping = !rec->opts.command ? 0 : !have_work;
    while (!stopping) {
        int timeout = 1000;
        if (deadline) {
            int64_t left = deadline - rm_now_monotonic_ns();
            if (left <= 0) break;
            timeout = (int)(left / RM_NS_PER_MS) + 1;
            if (timeout > 1000) timeout = 1000;
        }
        timeout = rm_prom_timeout_ms(prom, timeout);
        timeout = rm_status_timeout_ms(&rec->status, timeout);
        struct pollfd p[2] = {{.fd = sfd, .events = POLLIN},
                              {.fd = rm_status_fd(&rec->status), .events = POLLIN}};
        poll(p, 2, timeout);
        rm_prom_poll(prom);
        rm_status_poll(&rec->status);
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == sizeof si) {
            int sig = (int)si.ssi_signo;
            if (sig == SIGCHLD) continue;
            if (have_work) {
                /* A terminal's Ctrl-C already reached the command (same process group);
                 * a kill() aimed at runmon is passed on. */
                if (si.ssi_code != SI_KERNEL) kill(work.pid, sig);
            } else {
                stopping = 1;
            }
        }
        if (have_work && rm_child_try_reap(&work) == 1) {
            status = rm_exit_code_from_status(work.wstatus);
            have_work = 0;
            stopping = 1;
        }
    }
    if (have_work) /* only when the loop broke on an error: never leave the work unwatched */
        rm_child_release(&work);
    atomic_store(&rec->workload_pid, 0);
    return status;
}

/* Stops the workers, records the session's end and writes its summary. */
static void finish_session(struct rm_recorder *rec, struct workers *w, int status)
{
    atomic_store(&rec->stop, 1);
    stop_gpu(&w->sup);
    if (w->cpu.procfs) rm_cpu_sampler_stop(&w->cpu);
    rm_status_close(&rec->status); /* the events so far, and the status line cleared */
    struct rm_session *s = &rec->sess;
    s->ended_ns = rm_now_realtime_ns();
    s->status = status == 0 ? "completed" : "failed";
    if (rec->opts.command)
        s->exit_code = status;
    else
        s->exit_code = status == 0 ? -1 : status;
    json_t *d = json_object();
    json_object_set_new(d, "status", json_string(s->status));
    json_object_set_new(d, "exit_code",
                        s->exit_code >= 0 ? json_integer(s->exit_code) : json_null());
    json_object_set_new(d, "duration_s",
                        json_real(rm_ns_to_seconds_ms(s->ended_ns - s->started_ns)));
    recorder_event(rec, "session_end", d);
    save_session(rec);
    int have_sink = rec->sink != NULL;
    rm_prom_close(&w->prom); /* the final status, no sample series */
    rm_phase_follow_fini(&rec->phases);
    rm_sink_close(rec->sink); /* the final manifest, with the session's status */
    rec->sink = NULL;
    rm_runlog_close(rec->log);
    rec->log = NULL;
    if (s->id[0]) write_summary(rec, have_sink);
}

int rm_record_run(const struct rm_record_opts *opts)
{
    struct rm_recorder *rec = calloc(1, sizeof *rec);
    struct workers *w = calloc(1, sizeof *w);
    if (!rec || !w) {
        fprintf(stderr, "runmon record: out of memory\n");
        free(rec);
        free(w);
        return 1;
    }
    rec->opts = *opts;
    pthread_mutex_init(&rec->lock, NULL);
    port_init(rec);
    json_object_seed(0); /* before any thread exists */
    rm_fileio_set_private(opts->private_files);
    int status = 2, sfd = block_signals();
    char err[PATH_MAX * 2 + 512] = "";
    if (sfd < 0) {
        fprintf(stderr, "runmon record: signalfd: %s\n", strerror(errno));
        status = 1;
    } else if (open_session(rec, err, sizeof err) < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
    } else {
        char runlog[PATH_MAX + 16];
        snprintf(runlog, sizeof runlog, "%s/runlog.jsonl", rec->sess.dir);
        rm_phase_follow_init(&rec->phases, runlog, 1);
        json_t *d = json_object();
        json_object_set_new(d, "session_id", json_string(rec->sess.id));
        json_object_set_new(d, "host", rm_jstr(rec->sess.host));
        json_object_set_new(d, "interval_s", json_real(rec->opts.interval_s));
        recorder_event(rec, "session_start", d);
        if (!rec->opts.quiet)
            fprintf(stderr, "runmon record: session %s in %s\n", rec->sess.id, rec->sess.dir);
        save_session(rec);
        /* Started before the workers, so their first events (unavailable) have a line. */
        rm_status_init(&rec->status, &rec->port, &rec->phases, rm_status_wanted(rec->opts.quiet));
        if (start_workers(rec, w) == 0) status = run_until_done(rec, sfd, &w->prom);
        finish_session(rec, w, status);
    }
    if (sfd >= 0) close(sfd);
    pthread_mutex_destroy(&rec->lock);
    free(w);
    free(rec);
    return status;
}
