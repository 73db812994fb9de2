/* The recorder of `runmon record` (record/recorder.h): the session's life cycle, its
 * threads, and the main thread's signal loop. */
#include "record/recorder.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/energy.h"
#include "model/streams.h"
#include "monitor/child.h"
#include "monitor/collector.h"
#include "monitor/gpu_collectors.h"
#include "monitor/gpu_select.h"
#include "monitor/latest.h"
#include "monitor/port.h"
#include "monitor/proc_samplers.h"
#include "monitor/reaper.h"
#include "monitor/sampler_thread.h"
#include "monitor/smi_collectors.h"
#include "monitor/ticker.h"
#include "monitor/workload.h"
#include "record/end_summary.h"
#include "record/exporters.h"
#include "runlog/runlog.h"
#include "sink/liveness.h"
#include "sink/session.h"
#include "sink/sink.h"

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
    struct rm_latest latest; /* the latest values, for the exporters */
    struct rm_port port;     /* what every worker gets instead of this struct */
    /* The outputs that run while recording (record/exporters.h): the main thread's. */
    struct rm_exporters exporters;
    int claim_fd;   /* the session folder's lock while recording (sink/liveness.h) */
    int unrecorded; /* no session folder could be made: the command runs all the same */
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
    rm_exporters_event(&r->exporters, name, data);
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
                               .workload = &r->opts.workload,
                               .interval_s = r->opts.interval_s,
                               .quiet = r->opts.quiet};
}

struct supervisor {
    struct rm_recorder *rec;
    struct rm_collector cols[8];
    const struct rm_smi_collector *row[8]; /* each collector's row of rm_smi_collectors */
    void *ctx[8];                          /* and its context */
    int ncols;
    char gpu_fields_buf[1024];   /* the default fields and the probed power fields */
    char ids[RM_MAX_GPUS * 100]; /* nvidia-smi -i: the chosen GPUs' UUIDs, "" for all */
    rm_wakeup wake;
    pthread_t thread;
    int started;
    /* The one tick (monitor/ticker.h): the /proc samplers run on this thread, their slots
     * shared with the pipes' reads, when procs is set (start_gpu begins them). */
    struct rm_proc_set *procs;
    struct rm_ticker tick;
};

static void *supervisor_main(void *arg)
{
    struct supervisor *s = arg;
    pthread_setname_np(pthread_self(), "rm-collectors"); /* for top -H and the bench */
    rm_collectors_run(s->cols, s->ncols, &s->wake, s->procs ? &s->tick : NULL);
    return NULL;
}

/* What the nvidia-smi collectors start from. */
static struct rm_smi_start smi_start(const struct rm_recorder *rec)
{
    return (struct rm_smi_start){.port = &rec->port,
                                 .nvidia_smi = rec->opts.nvidia_smi,
                                 .interval_s = rec->opts.interval_s,
                                 .gpu_fields = rec->opts.gpu_fields,
                                 .dmon_metrics = rec->opts.dmon_metrics,
                                 .proc_root = rec->opts.procs.proc_root,
                                 .no_apps = rec->opts.no_apps};
}

/* Starts each row of rm_smi_collectors this run wants: its file, attached to the sink. */
static int start_smi_collectors(struct supervisor *s, struct rm_recorder *rec, char *err,
                                size_t errsz)
{
    struct rm_smi_start st = smi_start(rec);
    st.gpu_ids = s->ids; /* the job's GPUs (choose_gpus), "" for all */
    for (int i = 0; i < rm_smi_ncollectors && s->ncols < (int)(sizeof s->cols / sizeof *s->cols);
         i++) {
        const struct rm_smi_collector *e = rm_smi_collectors[i];
        if (e->wanted && !e->wanted(&st)) continue;
        void *ctx = calloc(1, e->ctx_size);
        if (!ctx) {
            snprintf(err, errsz, "out of memory");
            return -1;
        }
        struct rm_collector *c = &s->cols[s->ncols];
        s->row[s->ncols] = e;
        s->ctx[s->ncols++] = ctx;
        rm_collector_setup(c, &rec->port, e->stream, 0);
        int64_t period_ns = 0;
        if (e->start(ctx, &st, c, &period_ns, err, errsz) < 0) return -1;
        c->stale_ns = rm_stale_after_ns(period_ns);
        rm_sink_attach(rec->sink, e->out(ctx));
    }
    return 0;
}

static const char *env_lookup(const char *name)
{
    return getenv(name);
}

/* Keeps the job's GPUs only (monitor/gpu_select.h): the inventory shrinks to them and every
 * nvidia-smi child gets `-i` with their UUIDs. Warnings go to stderr and the event log. */
static void choose_gpus(struct supervisor *s, struct rm_recorder *rec)
{
    struct rm_session *sess = &rec->sess;
    static char list[65536]; /* `nvidia-smi -L`, only for MIG UUIDs; one recorder a process */
    const char *list_text = NULL;
    if (rm_gpu_select_needs_list(env_lookup, rec->opts.all_gpus) &&
        rm_smi_list(rec->opts.nvidia_smi, list, sizeof list, 15000) == 0)
        list_text = list;
    struct rm_gpu_selection sel;
    rm_gpu_select(sess->gpus, sess->ngpus, rec->opts.all_gpus, env_lookup, list_text, &sel);
    struct rm_gpu_choice *c = &sess->gpu_choice;
    snprintf(c->by, sizeof c->by, "%s", sel.by);
    snprintf(c->value, sizeof c->value, "%s", sel.value);
    c->visible = sess->ngpus;
    for (int i = 0; i < sel.nwarnings && i < RM_GPU_CHOICE_WARNINGS; i++) {
        snprintf(c->warning[c->nwarnings++], sizeof c->warning[0], "%s", sel.warning[i]);
        json_t *d = json_object();
        json_object_set_new(d, "reason", rm_jstr(sel.warning[i]));
        recorder_event(rec, "gpu_selection", d);
        if (!rec->opts.quiet) say("", sel.warning[i]);
    }
    if (rm_gpu_select_ids(&sel, sess->gpus, s->ids, sizeof s->ids) < 0) return; /* all kept */
    struct rm_gpu_info kept[RM_MAX_GPUS];
    for (int i = 0; i < sel.n; i++)
        kept[i] = sess->gpus[sel.pos[i]];
    memcpy(sess->gpus, kept, (size_t)sel.n * sizeof *kept);
    sess->ngpus = sel.n;
}

/* Takes the inventory, starts the nvidia-smi collectors (their files) and their thread.
 * Returns 0 (also when there is no nvidia-smi: a normal case), -1 on a fatal error. */
static int start_gpu(struct supervisor *s, struct rm_recorder *rec, char *err, size_t errsz)
{
    struct rm_session *sess = &rec->sess;
    const char *smi = rec->opts.nvidia_smi;
    char why[512];
    int spawn_errno = 0;
    if (rm_gpu_inventory(smi, sess, 15000, why, sizeof why, &spawn_errno) < 0) {
        if (spawn_errno == ENOENT) {
            for (int id = 0; id < RM_STREAM_COUNT; id++) {
                if (!(rm_stream_defs[id].needs & RM_NEEDS_NVIDIA_SMI) ||
                    sess->collectors[id].health == RM_HEALTH_DISABLED)
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
    } else {
        choose_gpus(s, rec);
    }
    s->rec = rec;
    /* With the default fields, the power fields this driver offers join them (probed once). */
    if (sess->ngpus > 0 && strcmp(rec->opts.gpu_fields, RM_DEFAULT_GPU_FIELDS) == 0) {
        rm_gpu_power_probe(smi, sess, 15000);
        rec->opts.gpu_fields =
            rm_gpu_fields_with_power(sess, s->gpu_fields_buf, sizeof s->gpu_fields_buf);
        sess->gpu_fields = rec->opts.gpu_fields;
    }
    if (start_smi_collectors(s, rec, err, errsz) < 0) return -1;

    if (rm_wakeup_open(&s->wake) < 0) {
        snprintf(err, errsz, "cannot start the collector thread: %s", strerror(errno));
        s->procs = NULL;
        return -1;
    }
    if (s->procs) s->tick = rm_proc_set_begin(s->procs);
    if (pthread_create(&s->thread, NULL, supervisor_main, s) != 0) {
        snprintf(err, errsz, "cannot start the collector thread: %s", strerror(errno));
        s->procs = NULL;
        return -1;
    }
    s->started = 1;
    return 0;
}

/* Stops the collectors' thread, then closes what each row opened (also after a start that
 * failed half way). */
static void stop_gpu(struct supervisor *s)
{
    if (s->started) {
        rm_wakeup_signal(&s->wake);
        pthread_join(s->thread, NULL);
        rm_wakeup_close(&s->wake);
        s->started = 0;
    }
    for (int i = 0; i < s->ncols; i++) {
        s->row[i]->stop(s->ctx[i]);
        free(s->ctx[i]);
        s->ctx[i] = NULL;
    }
    s->ncols = 0;
}

/* Whether processes are recorded as the workload: a command, --pid, --cgroup, a step. */
static bool has_workload(const struct rm_record_opts *o)
{
    return o->command || o->workload.kind != RM_WORKLOAD_CHILD;
}

/* Creates DIR/<id>/ and fills the session's identity. */
static int open_session(struct rm_recorder *rec, char *err, size_t errsz)
{
    struct rm_session *s = &rec->sess;
    s->pid = getpid();
    s->started_ns = rm_now_realtime_ns();
    rm_this_host(s->host, sizeof s->host); /* RUNMON_HOSTNAME, else gethostname */
    rm_job_from_env(&s->job, env_lookup);
    /* Inside a SLURM step, ranks slurmstepd started are outside the command's tree: the
     * step's cgroup holds them (monitor/workload.h). */
    if (rec->opts.workload.kind == RM_WORKLOAD_CHILD)
        (void)rm_workload_find_slurm_step(&rec->opts.workload, rec->opts.procs.proc_root,
                                          env_lookup);
    s->workload = rec->opts.workload;
    rm_session_make_id(s->id, sizeof s->id, s->started_ns, s->host, s->pid);
    if (snprintf(s->dir, sizeof s->dir, "%s/%s", rec->opts.output_dir, s->id) >=
        (int)sizeof s->dir) {
        snprintf(err, errsz, "output path is too long");
        return -1;
    }
    /* Listed as running by the sink before its folder exists, the folder claimed. */
    if (rm_sink_begin_session(rec->opts.output_dir, s, &rec->claim_fd) < 0) {
        if (errno == ENOTDIR)
            snprintf(err, errsz, "%s: the session folder is not a directory of the sink", s->dir);
        else
            snprintf(err, errsz, "cannot create %s: %s", s->dir, strerror(errno));
        return -1;
    }
    s->status = "running";
    s->exit_code = -1;
    s->command = rec->opts.command;
    s->sweep = rec->opts.sweep;
    s->params_json = rec->opts.params_json;
    s->interval_s = rec->opts.interval_s;
    s->gpu_fields = rec->opts.no_gpu ? NULL : rec->opts.gpu_fields;
    s->dmon_metrics = rec->opts.no_gpu ? NULL : rec->opts.dmon_metrics;
    s->dmon_interval_s = rm_dmon_interval_s(rec->opts.interval_s);
    s->warn_pct = rec->opts.warn_pct;
    s->crit_pct = rec->opts.crit_pct;
    rm_session_init_collectors(
        s, !rec->opts.no_gpu, has_workload(&rec->opts),
        rm_smi_collectors_off(&(struct rm_smi_start){.no_apps = rec->opts.no_apps}) |
            rm_proc_samplers_off(&(struct rm_proc_start){.o = &rec->opts.procs}));
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/runlog.jsonl", s->dir);
    rec->log = rm_runlog_open(path);
    if (!rec->log) /* a full disk: the events still reach the exporters; never fatal */
        fprintf(stderr, "runmon record: cannot open %s: %s; its events are not logged\n", path,
                rm_runlog_errmsg());
    return 0;
}

/* session.json; at the end (tries > 1) tried as the sink's end is (rm_sink_end_backoff).
 * 0, or -1 (said on stderr). */
static int save_session_tries(struct rm_recorder *rec, int tries)
{
    int rc = -1;
    for (int t = 0; t < tries && rc != 0; t++) {
        rm_sink_end_backoff(t);
        pthread_mutex_lock(&rec->lock);
        rc = rm_session_save(&rec->sess);
        pthread_mutex_unlock(&rec->lock);
    }
    if (rc < 0 && !rec->opts.quiet)
        fprintf(stderr, "runmon record: cannot write %s/session.json: %s\n", rec->sess.dir,
                strerror(errno));
    return rc;
}

static void save_session(struct rm_recorder *rec)
{
    (void)save_session_tries(rec, 1);
}

/* summary.json in the session folder (its write tried as the sink's end is), and the text
 * summary on stderr unless --quiet. Sealed segments come from the manifest's aggregates (no
 * rescan). -1 when summary.json could not be written, else 0 (also when there was nothing to
 * summarize). */
static int write_summary(struct rm_recorder *rec, int session_unwritten)
{
    json_t *ses = NULL, *state = rm_sink_unwritten_state(rec->sink);
    if (session_unwritten) {
        pthread_mutex_lock(&rec->lock);
        ses = rm_session_to_json(&rec->sess);
        pthread_mutex_unlock(&rec->lock);
    }
    struct rm_end_summary e = {.sink_dir = rec->sink ? rec->opts.output_dir : NULL,
                               .session_id = rec->sess.id,
                               .dir = rec->sess.dir,
                               .interval_s = rec->opts.interval_s,
                               .quiet = rec->opts.quiet,
                               .session_doc = ses,
                               .state_doc = state};
    int rc = rm_end_summary_write(&e);
    json_decref(ses);
    json_decref(state);
    return rc;
}

/* The recorded command, from its start to the end of what it left behind. Main thread only. */
struct workload {
    rm_child child;
    int running;        /* spawned and not reaped yet */
    int tty;            /* stdin is a terminal: its foreground group follows the command */
    int stop_sig;       /* SIGINT, SIGTERM or SIGHUP that stops the run; 0 while none */
    int forwarded;      /* stop_sig went to the command's processes */
    int noted;          /* the note about processes still running was printed */
    int64_t kill_at;    /* CLOCK_MONOTONIC: what is left of the command gets SIGKILL then */
    int64_t give_up_at; /* after the SIGKILL: stop waiting for a process that does not die */
};

static int is_stop_signal(int sig)
{
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* A shell gives a job the terminal only while the shell itself is in the foreground. */
static int terminal_is_ours(void)
{
    return tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* The terminal back to runmon's group, if the command's group holds it. SIGTTOU is ignored
 * (block_signals), so this works from the background group runmon is in then. Called while
 * the command's leader is unreaped, so its group id cannot belong to anyone else yet. */
static void take_terminal(const struct workload *w)
{
    if (w->tty && tcgetpgrp(STDIN_FILENO) == w->child.pgid)
        (void)tcsetpgrp(STDIN_FILENO, getpgrp());
}

static void give_terminal(const struct workload *w)
{
    if (w->tty && w->running && terminal_is_ours()) (void)tcsetpgrp(STDIN_FILENO, w->child.pgid);
}

/* Runs the command in a process group of its own (so a signal reaches all of it, and nothing
 * of runmon's), with runmon's stdio, the terminal if runmon holds it, and no pdeathsig:
 * killing runmon must not kill the work. runmon becomes a child subreaper first, so what the
 * command's tree orphans (a setsid'd grandchild) is still found at the stop (monitor/reaper.h). */
static int spawn_workload(struct rm_recorder *rec, struct workload *w)
{
    char e1[PATH_MAX + 32], e2[256], e3[PATH_MAX + 32];
    snprintf(e1, sizeof e1, "RUNMON_RUNLOG=%s/runlog.jsonl", rec->sess.dir);
    snprintf(e2, sizeof e2, "RUNMON_SESSION_ID=%s", rec->sess.id);
    snprintf(e3, sizeof e3, "RUNMON_SESSION_DIR=%s", rec->sess.dir);
    const char *env[] = {e1, e2, e3, NULL};
    if (rec->unrecorded) env[0] = NULL; /* no session to name */
    (void)rm_reaper_enable(); /* without it (kernel < 3.4), the process group is what stops */
    /* Started in the background (`runmon record ... &`), the command starts there too; a
     * `fg` later gives it the terminal (suspend). */
    w->tty = isatty(STDIN_FILENO);
    rm_child_opts o = {.new_pgrp = true,
                       .foreground = w->tty && terminal_is_ours(),
                       .inherit_stdin = true,
                       .env_add = env};
    int e = rm_child_spawn(&w->child, (const char *const *)rec->opts.command, &o);
    if (e) w->tty = 0;
    w->running = !e;
    return e;
}

/* Signals are read from a signalfd by the main thread; SIGUSR1 (the CPU sampler's wakeup)
 * stays blocked here and is unblocked by that thread alone. Returns the fd, or -1. */
static int block_signals(void)
{
    /* Our own output must never kill us: a full pipe or a file-size limit become errors. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    /* The command's group may hold the terminal: taking it back (tcsetpgrp) and an
     * exporter's line on it from a background group must not stop runmon. The command gets
     * the default. */
    signal(SIGTTOU, SIG_IGN);
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    sigaddset(&handled, SIGTSTP);
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
    struct rm_proc_set procs;    /* the /proc samplers (monitor/proc_samplers.h) */
    struct rm_ticker_thread own; /* the tick's thread without the collectors' */
};

/* The sink, the /proc samplers and the GPU collectors, in that order. 0, or -1 with the
 * reason printed. */
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
    struct rm_proc_start ps = {.port = &rec->port, .o = &o->procs, .with_command = has_workload(o)};
    int opened = rm_proc_set_open(&w->procs, &ps, err, sizeof err);
    struct rm_stream *files[RM_PROC_SET_MAX * RM_PROC_MAX_OUTS];
    int nfiles = rm_proc_set_streams(&w->procs, files, RM_PROC_SET_MAX * RM_PROC_MAX_OUTS);
    for (int i = 0; i < nfiles; i++) /* those of samplers opened before one that failed too */
        rm_sink_attach(rec->sink, files[i]);
    if (opened < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
        return -1;
    }
    if (rm_sink_start(rec->sink) < 0)
        fprintf(stderr, "runmon record: cannot start the sink thread\n");
    /* With the GPU collectors' thread, the /proc samples are taken on its tick: one thread
     * wakes for all. Without it (--no-gpu, no nvidia-smi) the tick has a thread of its own. */
    w->sup.procs = &w->procs;
    if (!o->no_gpu && start_gpu(&w->sup, rec, err, sizeof err) < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
        return -1;
    }
    if (!w->sup.started) w->sup.procs = NULL;
    save_session(rec);
    if (!w->sup.procs) {
        w->own = (struct rm_ticker_thread){
            .tick = rm_proc_set_begin(&w->procs), .stop = rec->port.stop, .name = "rm-sampler"};
        if (rm_ticker_thread_start(&w->own) < 0) {
            fprintf(stderr, "runmon record: cannot start the sampler thread\n");
            return -1;
        }
    }
    return 0;
}

/* Stops the whole process with sig (SIGTSTP, SIGTTIN, SIGTTOU) until a SIGCONT, as a job
 * stops; the kernel discards it in an orphaned process group, where nothing could continue
 * us. The signal is blocked or ignored in runmon otherwise, so only for this raise() is it
 * unblocked in this thread with its default action. */
static void stop_self(int sig)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
    sigset_t one, mask;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigaction(sig, &dfl, &old);
    pthread_sigmask(SIG_UNBLOCK, &one, &mask);
    raise(sig);
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    sigaction(sig, &old, NULL);
}

/* Job control, as for a shell's job: the command stopped (Ctrl-Z, or a read of the terminal
 * from the background), or runmon got SIGTSTP: runmon stops too, with the terminal back in its
 * own group, so the shell that started it sees it stopped; once continued (fg, bg) it gives
 * the command the terminal again if its own group is in the foreground, and continues it. */
static void suspend(struct workload *w, int sig)
{
    if (w->running && sig == SIGTSTP) killpg(w->child.pgid, SIGTSTP);
    take_terminal(w);
    stop_self(sig);
    give_terminal(w);
    if (w->running) killpg(w->child.pgid, SIGCONT);
}

/* sig to the command's process group (while its leader is unreaped: then the group id is
 * still the command's) and to every process of the command anywhere under runmon, the
 * setsid'd ones included (monitor/reaper.h). Returns how many processes the walk found. */
static int signal_command(const struct workload *w, int sig)
{
    if (w->running) killpg(w->child.pgid, sig);
    return rm_reaper_signal(sig);
}

/* A stop: SIGINT, SIGTERM or SIGHUP to runmon (forwarded), or the command died of one. The
 * grace runs from the first; a second signal to runmon ends it at once. */
static void begin_stop(struct workload *w, int sig, double grace_s)
{
    int64_t now = rm_now_monotonic_ns();
    if (w->stop_sig) {
        if (w->kill_at > now) w->kill_at = now;
        return;
    }
    w->stop_sig = sig;
    w->kill_at = now + (int64_t)llround(grace_s * 1e9);
}

/* One step of a stop: the stop signal (and SIGCONT, for a stopped process) to everything of
 * the command once, SIGKILL to what is left when the grace is over. Returns 1 when the stop
 * is over: the command reaped and none of its processes left, or SIGKILL sent
 * RM_CHILD_KILL_WAIT_MS ago to processes that do not die (uninterruptible sleep). */
static int stop_step(struct rm_recorder *rec, struct workload *w)
{
    int64_t now = rm_now_monotonic_ns();
    if (!w->forwarded) {
        w->forwarded = 1;
        signal_command(w, w->stop_sig);
        signal_command(w, SIGCONT);
    }
    if (w->give_up_at && now >= w->give_up_at) return 1;
    if (now >= w->kill_at) {
        signal_command(w, SIGKILL); /* again each step: a fork racing the first is caught */
        if (!w->give_up_at) w->give_up_at = now + (int64_t)RM_CHILD_KILL_WAIT_MS * RM_NS_PER_MS;
    }
    if (w->running) return 0;
    rm_reaper_reap(0);
    int left = signal_command(w, 0);
    if (left > 0 && !w->noted && !w->give_up_at && !rec->opts.quiet) {
        char note[192];
        w->noted = 1;
        snprintf(note, sizeof note,
                 "runmon record: %d process%s of the command still running after SIG%s; "
                 "SIGKILL in %.1f s (a second signal: now)",
                 left, left == 1 ? "" : "es", sigabbrev_np(w->stop_sig),
                 (double)(w->kill_at - now) / 1e9);
        rm_exporters_say(&rec->exporters, note);
    }
    return left <= 0;
}

/* The command's end: its exit status, and a stop if a stop signal killed it (a terminal's
 * Ctrl-C reaches the command's group, not runmon). */
static int reap_command(struct rm_recorder *rec, struct workload *w)
{
    if (rm_child_exited(&w->child) == 0) return -1;
    take_terminal(w); /* before the reap: the group id is still the command's */
    if (rm_child_try_reap(&w->child) != 1) return -1;
    w->running = 0;
    atomic_store(&rec->workload_pid, 0);
    int ws = w->child.wstatus;
    if (!w->stop_sig && WIFSIGNALED(ws) && is_stop_signal(WTERMSIG(ws)))
        begin_stop(w, WTERMSIG(ws), rec->opts.kill_grace_s);
    return rm_exit_code_from_status(ws);
}

/* --pid: a pidfd of the attached process, checked to be the one attached to (its start
 * time), so its exit wakes the loop; -1 where the kernel has none (< 5.3: then it is looked
 * at once a second) or it is gone already (*gone set). */
static int watch_attached(const struct rm_recorder *rec, int *gone)
{
    const struct rm_workload *wl = &rec->opts.workload;
    int fd = (int)syscall(SYS_pidfd_open, wl->pid, 0);
    *gone = !rm_workload_alive(wl, rec->opts.procs.proc_root);
    if (*gone && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The attached process ended: said in session.json (its exit status stays unknown). */
static void attached_ended(struct rm_recorder *rec)
{
    pthread_mutex_lock(&rec->lock);
    rec->sess.workload.ended = 1;
    pthread_mutex_unlock(&rec->lock);
    if (!rec->opts.quiet)
        fprintf(stderr,
                "runmon record: process %d exited; its exit status is unknown (runmon is not "
                "its parent)\n",
                (int)rec->opts.workload.pid);
}

/* Runs the command (if any) and waits for its end, a signal or --duration, passing signals
 * on to the command. Returns the session's exit status; *stop_sig gets the signal that
 * stopped a command (0 when none). */
static int run_until_done(struct rm_recorder *rec, int sfd, int *stop_sig)
{
    struct workload w = {0};
    rm_child_init(&w.child);
    int status = 0;
    if (rec->opts.command) {
        int e = spawn_workload(rec, &w);
        if (e) {
            fprintf(stderr, "runmon record: %s\n", w.child.errmsg);
            status = e == ENOENT ? 127 : 126;
            pthread_mutex_lock(&rec->lock); /* the sink thread reads the session */
            snprintf(rec->sess.command_error, sizeof rec->sess.command_error, "%s",
                     e == ENOENT ? "command not found" : "command could not run");
            pthread_mutex_unlock(&rec->lock);
        } else {
            atomic_store(&rec->workload_pid, w.child.pid);
        }
    }
    int64_t deadline = rec->opts.duration_s > 0
                           ? rm_now_monotonic_ns() + (int64_t)llround(rec->opts.duration_s * 1e9)
                           : 0;
    int stopping = !rec->opts.command ? 0 : !w.running;
    int pidfd_stuck = 0; /* the pidfd said exited but the reap failed (traced): poll instead */
    int attached = -1, attached_gone = 0; /* --pid: the process recorded */
    if (rec->opts.workload.kind == RM_WORKLOAD_PID) {
        attached = watch_attached(rec, &attached_gone);
        if (attached_gone) stopping = 1;
    }
    while (!stopping) {
        /* Blocks until a signal (SIGCHLD included: an exit, a stop), the command's exit (its
         * pidfd), --duration or an exporter's due time; a stop is watched closely, and a
         * command whose exit cannot be seen by its pidfd once a second. */
        int watch = w.running && w.child.pidfd >= 0 && !pidfd_stuck;
        int timeout = w.stop_sig ? 50
                      : (w.running && !watch) || (attached < 0 && !rec->opts.command &&
                                                  rec->opts.workload.kind == RM_WORKLOAD_PID)
                          ? 1000
                          : INT_MAX; /* INT_MAX: none */
        if (deadline) {
            int64_t left = deadline - rm_now_monotonic_ns();
            if (left <= 0) break;
            int64_t ms = left / RM_NS_PER_MS + 1;
            if (ms < timeout) timeout = (int)ms;
        }
        timeout = rm_exporters_timeout_ms(&rec->exporters, rm_now_monotonic_ns(), timeout);
        if (timeout == INT_MAX) timeout = -1;
        struct pollfd p[2 + RM_EXPORTERS_MAX] = {
            {.fd = sfd, .events = POLLIN},
            {.fd = watch ? w.child.pidfd : attached, .events = POLLIN}};
        int n = rm_exporters_pollfds(&rec->exporters, p + 2, RM_EXPORTERS_MAX);
        poll(p, (nfds_t)(2 + n), timeout);
        rm_exporters_poll(&rec->exporters, rm_now_monotonic_ns(), p + 2, n);
        struct signalfd_siginfo si;
        int chld = 0;
        while (read(sfd, &si, sizeof si) == sizeof si) {
            int sig = (int)si.ssi_signo;
            if (sig == SIGCHLD)
                chld = 1;
            else if (sig == SIGTSTP)
                suspend(&w, SIGTSTP);
            else if (!rec->opts.command)
                stopping = 1;
            else /* the command's group no longer gets runmon's signals: each is passed on */
                begin_stop(&w, sig, rec->opts.kill_grace_s);
        }
        if (w.running) {
            int st = rm_child_stopped(&w.child);
            if (st == SIGTSTP || st == SIGTTIN || st == SIGTTOU) suspend(&w, st);
            int code = reap_command(rec, &w);
            if (code != -1) status = code;
            if (code == -1 && (p[1].revents & POLLIN)) pidfd_stuck = 1;
        }
        if (chld) rm_reaper_reap(w.running ? w.child.pid : 0); /* orphans it adopted */
        if (rec->opts.workload.kind == RM_WORKLOAD_PID && !rec->opts.command &&
            (attached >= 0 ? (p[1].revents & POLLIN) != 0
                           : !rm_workload_alive(&rec->opts.workload, rec->opts.procs.proc_root)))
            attached_gone = 1;
        if (attached_gone) break;
        if (rec->opts.command && !w.running && !w.stop_sig) break; /* what it left runs on */
        if (w.stop_sig && stop_step(rec, &w)) break;
    }
    if (attached >= 0) close(attached);
    if (attached_gone) attached_ended(rec);
    take_terminal(&w);
    if (w.running) /* a command that does not die even of SIGKILL: never leave it unwatched */
        rm_child_release(&w.child);
    atomic_store(&rec->workload_pid, 0);
    *stop_sig = w.stop_sig;
    return status;
}

/* The session folder could not be made (a full disk, a read-only or lost sink): the command
 * is never kept from running by its monitor. It runs as it would recorded (its own process
 * group, signals passed on), without a session, and its exit status is returned. */
static int run_unrecorded(struct rm_recorder *rec, int sfd)
{
    fprintf(stderr, "runmon record: nothing of this run is recorded; the command runs all the "
                    "same\n");
    rec->unrecorded = 1;
    int stop_sig = 0;
    return run_until_done(rec, sfd, &stop_sig);
}

/* Stops the workers, records the session's end and writes its summary. */
static void finish_session(struct rm_recorder *rec, struct workers *w, int status, int stop_sig)
{
    atomic_store(&rec->stop, 1);
    stop_gpu(&w->sup);
    rm_ticker_thread_stop(&w->own);
    rm_proc_set_stop(&w->procs);
    struct rm_session *s = &rec->sess;
    pthread_mutex_lock(&rec->lock); /* the sink thread reads them */
    s->ended_ns = rm_now_realtime_ns();
    /* A command stopped by SIGINT, SIGTERM or SIGHUP was interrupted, whatever status it
     * exited with; without a command a signal is the normal end. */
    s->stop_signal = rec->opts.command ? stop_sig : 0;
    s->status = s->stop_signal ? "interrupted" : status == 0 ? "completed" : "failed";
    if (rec->opts.command)
        s->exit_code = status;
    else
        s->exit_code = status == 0 ? -1 : status;
    pthread_mutex_unlock(&rec->lock);
    /* The workers' files are complete and the status is final: each exporter's last word. */
    rm_exporters_close(&rec->exporters, rm_now_monotonic_ns());
    json_t *d = json_object();
    json_object_set_new(d, "status", json_string(s->status));
    json_object_set_new(d, "exit_code",
                        s->exit_code >= 0 ? json_integer(s->exit_code) : json_null());
    json_object_set_new(d, "signal", s->stop_signal ? json_integer(s->stop_signal) : json_null());
    if (s->workload.kind == RM_WORKLOAD_PID) { /* attached: its exit status is never known */
        json_object_set_new(d, "workload_pid", json_integer(s->workload.pid));
        json_object_set_new(d, "workload_exited", json_boolean(s->workload.ended));
        json_object_set_new(d, "exit_status_known", json_false());
    }
    json_object_set_new(d, "duration_s",
                        json_real(rm_ns_to_seconds_ms(s->ended_ns - s->started_ns)));
    recorder_event(rec, "session_end", d);
    unsigned unwritten = save_session_tries(rec, RM_SINK_END_TRIES) ? RM_SINK_UNWRITTEN_SESSION : 0;
    rm_sink_stop(rec->sink); /* the final state.json, with the session's status */
    rm_runlog_close(rec->log);
    rec->log = NULL;
    if (s->id[0] && write_summary(rec, unwritten & RM_SINK_UNWRITTEN_SESSION) < 0)
        unwritten |= RM_SINK_UNWRITTEN_SUMMARY;
    rm_sink_close(rec->sink, unwritten); /* the end in the index and the totals, once */
    rec->sink = NULL;
}

int rm_record_check(const struct rm_record_opts *opts)
{
    char err[PATH_MAX * 2 + 512] = "";
    if (rm_exporters_check(opts, err, sizeof err) == 0) return 0;
    fprintf(stderr, "runmon record: %s\n", err);
    return -1;
}

int rm_record_run(const struct rm_record_opts *opts)
{
    if (rm_record_check(opts) < 0) return 2;
    if (opts->workload.kind == RM_WORKLOAD_PID &&
        !rm_workload_alive(&opts->workload, opts->procs.proc_root)) {
        fprintf(stderr, "runmon record: --pid %d: the process exited before recording started\n",
                (int)opts->workload.pid);
        return 2;
    }
    struct rm_recorder *rec = calloc(1, sizeof *rec);
    struct workers *w = calloc(1, sizeof *w);
    if (!rec || !w) {
        fprintf(stderr, "runmon record: out of memory\n");
        free(rec);
        free(w);
        return 1;
    }
    rec->opts = *opts;
    rec->claim_fd = -1;
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
        if (rec->opts.command) status = run_unrecorded(rec, sfd);
    } else {
        json_t *d = json_object();
        json_object_set_new(d, "session_id", json_string(rec->sess.id));
        json_object_set_new(d, "host", rm_jstr(rec->sess.host));
        json_object_set_new(d, "interval_s", json_real(rec->opts.interval_s));
        recorder_event(rec, "session_start", d);
        if (!rec->opts.quiet)
            fprintf(stderr, "runmon record: session %s in %s\n", rec->sess.id, rec->sess.dir);
        save_session(rec);
        /* Opened before the workers, so their first events (unavailable) have a line. */
        int stop_sig = 0;
        if (rm_exporters_open(&rec->exporters, &rec->opts, &rec->port, err, sizeof err) < 0) {
            fprintf(stderr, "runmon record: %s\n", err);
        } else {
            /* Only the exporters read the latest values: without one the workers keep none
             * (a GPU row then parses the two values of its memory thresholds, not all). */
            if (rec->exporters.n == 0) rec->port.latest = NULL;
            if (start_workers(rec, w) == 0) status = run_until_done(rec, sfd, &stop_sig);
        }
        finish_session(rec, w, status, stop_sig);
    }
    rm_sink_end_session(rec->claim_fd, rec->sess.dir);
    if (sfd >= 0) close(sfd);
    rm_exporters_fini(&rec->exporters);
    pthread_mutex_destroy(&rec->lock);
    free(w);
    free(rec);
    return status;
}
