/* `runmon record`: options, the session's life cycle, and the main thread's signal loop.
 *
 * Threads: main (signals, the workload), the supervisor (nvidia-smi collectors; it must live
 * as long as they do, because PR_SET_PDEATHSIG follows the spawning thread), and the CPU
 * sampler. Every signal runmon handles is blocked in all threads and read by the main
 * thread from a signalfd, so no handler runs in the middle of a library call.
 */
#include "monitor/cmd_record.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "monitor/child.h"
#include "monitor/collector.h"
#include "monitor/cpu_sampler.h"
#include "monitor/fileio.h"
#include "monitor/gpu_collectors.h"
#include "monitor/prom.h"
#include "monitor/recorder.h"
#include "monitor/sink.h"
#include "runlog/rm_time.h"
#include "runlog/runlog.h"
#include "summary/summary.h"

#define DEFAULT_WARN_PCT 90.0
#define DEFAULT_CRIT_PCT 98.0

void rm_recorder_event(struct rm_recorder *r, const char *name, json_t *data)
{
    if (r->log && rm_runlog_event(r->log, name, data) < 0 && !r->opts.quiet)
        fprintf(stderr, "runmon record: run log: %s\n", rm_runlog_errmsg());
    json_decref(data);
}

void rm_recorder_set_health(struct rm_recorder *r, int collector, enum rm_health h,
                            const char *last_error, int count_failure)
{
    pthread_mutex_lock(&r->lock);
    struct rm_collector_health *c = &r->sess.collectors[collector];
    c->health = h;
    if (last_error) snprintf(c->last_error, sizeof c->last_error, "%s", last_error);
    if (count_failure) c->failure_event_count++;
    pthread_mutex_unlock(&r->lock);
}

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: runmon record [OPTIONS] [-- COMMAND [ARG ...]]\n"
        "\n"
        "Record GPU and CPU use into a session folder. With a COMMAND, run it, stop when it\n"
        "exits, and exit with its status (128+N if it died of signal N). Without one, record\n"
        "until SIGINT/SIGTERM or --duration. The session's summary is written to\n"
        "summary.json and printed to stderr at the end.\n"
        "\n"
        "options:\n"
        "  -o, --output DIR          sink directory (default ./runmon); the session goes to\n"
        "                            DIR/<session-id>/\n"
        "  -i, --interval SECONDS    sampling interval, 0.1 to 3600 (default 1)\n"
        "      --gpu-fields LIST     nvidia-smi --query-gpu fields (default:\n"
        "                            " RM_DEFAULT_GPU_FIELDS ")\n"
        "      --dmon-metrics GROUPS nvidia-smi dmon -s groups (default " RM_DEFAULT_DMON_METRICS
        ": power/temperature,\n"
        "                            utilization, clocks, framebuffer memory)\n"
        "      --no-gpu              do not run nvidia-smi at all\n"
        "      --per-cpu             also write one cpu.csv row per CPU\n"
        "      --nvidia-smi PATH     the nvidia-smi to run (default: nvidia-smi on PATH)\n"
        "      --warning-threshold PCT   GPU memory use that raises a warning event (default %g)\n"
        "      --critical-threshold PCT  ... a critical event (default %g)\n"
        "      --duration SECONDS    stop after this long (without a COMMAND)\n"
        "      --prom-textfile PATH  keep PATH (e.g. DIR/runmon.prom for node_exporter's\n"
        "                            textfile collector) rewritten with the latest values\n"
        "      --flush-seconds S     fdatasync the active files and update manifest.json at\n"
        "                            least every S seconds (default 2)\n"
        "      --rollover-mb MB      seal the active file at this size and start the next\n"
        "                            (default 64; fractions allowed; 0: never)\n"
        "      --retention-files N   sealed segments kept per stream in the sink, oldest\n"
        "                            pruned first (default 8; 0: keep all)\n"
        "      --retention-total-mb MB  bytes of segments kept in the whole sink (default\n"
        "                            512; 0: no limit)\n"
        "      --telemetry-sink-dir, --telemetry-flush-seconds, --telemetry-rollover-mb,\n"
        "      --telemetry-retention-files, --telemetry-retention-total-mb: the same\n"
        "  -q, --quiet               print no summary and no notes\n"
        "  -h, --help                this text\n"
        "\n"
        "The command gets RUNMON_RUNLOG, RUNMON_SESSION_ID and RUNMON_SESSION_DIR, so\n"
        "'runmon log' and 'runmon phase' inside it need no --file. RUNMON_PROC_ROOT\n"
        "(default /proc) points the CPU sampler at another /proc tree.\n",
        DEFAULT_WARN_PCT, DEFAULT_CRIT_PCT);
}

static int parse_seconds(const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(d) || d < lo || d > hi) {
        fprintf(stderr, "runmon record: %s must be a number from %g to %g, not '%s'\n", opt, lo, hi,
                v);
        return -1;
    }
    *out = d;
    return 0;
}

static int parse_args(int argc, char **argv, struct rm_record_opts *o)
{
    enum {
        OPT_FIELDS = 256,
        OPT_DMON,
        OPT_NOGPU,
        OPT_PERCPU,
        OPT_SMI,
        OPT_WARN,
        OPT_CRIT,
        OPT_DURATION,
        OPT_FLUSH_S,
        OPT_ROLLOVER,
        OPT_RET_FILES,
        OPT_RET_TOTAL
    };
    enum { OPT_PROM = 300 }; /* --prom-textfile */
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"interval", required_argument, 0, 'i'},
        {"gpu-fields", required_argument, 0, OPT_FIELDS},
        {"dmon-metrics", required_argument, 0, OPT_DMON},
        {"no-gpu", no_argument, 0, OPT_NOGPU},
        {"per-cpu", no_argument, 0, OPT_PERCPU},
        {"nvidia-smi", required_argument, 0, OPT_SMI},
        {"warning-threshold", required_argument, 0, OPT_WARN},
        {"critical-threshold", required_argument, 0, OPT_CRIT},
        {"duration", required_argument, 0, OPT_DURATION},
        {"prom-textfile", required_argument, 0, OPT_PROM},
        {"telemetry-sink-dir", required_argument, 0, 'o'},
        {"flush-seconds", required_argument, 0, OPT_FLUSH_S},
        {"telemetry-flush-seconds", required_argument, 0, OPT_FLUSH_S},
        {"rollover-mb", required_argument, 0, OPT_ROLLOVER},
        {"telemetry-rollover-mb", required_argument, 0, OPT_ROLLOVER},
        {"retention-files", required_argument, 0, OPT_RET_FILES},
        {"telemetry-retention-files", required_argument, 0, OPT_RET_FILES},
        {"retention-total-mb", required_argument, 0, OPT_RET_TOTAL},
        {"telemetry-retention-total-mb", required_argument, 0, OPT_RET_TOTAL},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (struct rm_record_opts){.output_dir = "runmon",
                                 .interval_s = 1.0,
                                 .gpu_fields = RM_DEFAULT_GPU_FIELDS,
                                 .dmon_metrics = RM_DEFAULT_DMON_METRICS,
                                 .nvidia_smi = "nvidia-smi",
                                 .warn_pct = DEFAULT_WARN_PCT,
                                 .crit_pct = DEFAULT_CRIT_PCT,
                                 .flush_s = RM_SINK_DEFAULT_FLUSH_S,
                                 .rollover_mb = RM_SINK_DEFAULT_ROLLOVER_MB,
                                 .retention_files = RM_SINK_DEFAULT_RETENTION_FILES,
                                 .retention_total_mb = RM_SINK_DEFAULT_RETENTION_TOTAL_MB};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+o:i:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output_dir = optarg;
            break;
        case 'i':
            if (parse_seconds("--interval", optarg, 0.1, 3600, &o->interval_s) < 0) return -1;
            break;
        case OPT_FIELDS:
            o->gpu_fields = optarg;
            break;
        case OPT_DMON:
            for (const char *p = optarg; *p; p++)
                if (!strchr("pucvmetd", *p)) {
                    fprintf(stderr,
                            "runmon record: --dmon-metrics: '%c' is not a dmon group (use "
                            "letters from pucvmetd)\n",
                            *p);
                    return -1;
                }
            if (!*optarg) {
                fprintf(stderr, "runmon record: --dmon-metrics is empty\n");
                return -1;
            }
            o->dmon_metrics = optarg;
            break;
        case OPT_NOGPU:
            o->no_gpu = 1;
            break;
        case OPT_PERCPU:
            o->per_cpu = 1;
            break;
        case OPT_SMI:
            o->nvidia_smi = optarg;
            break;
        case OPT_WARN:
            if (parse_seconds("--warning-threshold", optarg, 0.1, 100, &o->warn_pct) < 0) return -1;
            break;
        case OPT_CRIT:
            if (parse_seconds("--critical-threshold", optarg, 0.1, 100, &o->crit_pct) < 0)
                return -1;
            break;
        case OPT_DURATION:
            if (parse_seconds("--duration", optarg, 0.001, 1e9, &o->duration_s) < 0) return -1;
            break;
        case OPT_PROM:
            if (!*optarg) {
                fprintf(stderr, "runmon record: --prom-textfile is empty\n");
                return -1;
            }
            o->prom_textfile = optarg;
            break;
        case OPT_FLUSH_S:
            if (parse_seconds("--flush-seconds", optarg, 0.01, 86400, &o->flush_s) < 0) return -1;
            break;
        case OPT_ROLLOVER:
            if (parse_seconds("--rollover-mb", optarg, 0, 1048576, &o->rollover_mb) < 0) return -1;
            break;
        case OPT_RET_FILES: {
            double n;
            if (parse_seconds("--retention-files", optarg, 0, 1e6, &n) < 0) return -1;
            if (n != floor(n)) {
                fprintf(stderr, "runmon record: --retention-files must be a whole number\n");
                return -1;
            }
            o->retention_files = (int)n;
            break;
        }
        case OPT_RET_TOTAL:
            if (parse_seconds("--retention-total-mb", optarg, 0, 1e9, &o->retention_total_mb) < 0)
                return -1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 1;
        case ':':
            fprintf(stderr, "runmon record: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "runmon record: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
    }
    if (o->warn_pct > o->crit_pct) {
        fprintf(stderr,
                "runmon record: --warning-threshold (%g) is above --critical-threshold (%g)\n",
                o->warn_pct, o->crit_pct);
        return -1;
    }
    if (optind < argc) {
        if (!strcmp(argv[optind - 1], "--") || argv[optind][0] != '-') o->command = argv + optind;
        if (!o->command || !o->command[0][0]) {
            fprintf(stderr, "runmon record: expected '-- COMMAND', got '%s'\n", argv[optind]);
            return -1;
        }
    }
    if (o->command && o->duration_s > 0) {
        fprintf(stderr, "runmon record: --duration is for recording without a COMMAND\n");
        return -1;
    }
    const char *root = getenv("RUNMON_PROC_ROOT");
    o->proc_root = root && *root ? root : "/proc";
    return 0;
}

struct supervisor {
    struct rm_recorder *rec;
    struct rm_collector cols[2];
    int ncols;
    struct rm_gpu_ctx gpu;
    struct rm_dmon_ctx dmon;
    char lms[32], dsec[16], query[2200];
    rm_wakeup wake;
    pthread_t thread;
    int started;
};

static void *supervisor_main(void *arg)
{
    struct supervisor *s = arg;
    rm_collectors_run(s->cols, s->ncols, &s->wake);
    return NULL;
}

static void collector_setup(struct rm_collector *c, struct rm_recorder *rec, const char *name,
                            int id, int64_t interval_ns)
{
    memset(c, 0, sizeof *c);
    rm_child_init(&c->child);
    c->name = name;
    c->id = id;
    c->rec = rec;
    c->stale_ns = rm_stale_after_ns(interval_ns);
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
            for (int id = RM_COL_GPU; id <= RM_COL_DMON; id++) {
                json_t *d = json_object();
                json_object_set_new(d, "collector", json_string(id == RM_COL_GPU ? "gpu" : "dmon"));
                json_object_set_new(d, "reason", json_string(why));
                rm_recorder_event(rec, "collector_unavailable", d);
                rm_recorder_set_health(rec, id, RM_HEALTH_UNAVAILABLE, why, 0);
            }
            if (!rec->opts.quiet) fprintf(stderr, "runmon record: no GPU collectors: %s\n", why);
            return 0;
        }
        json_t *d = json_object();
        json_object_set_new(d, "reason", rm_jstr(why));
        rm_recorder_event(rec, "inventory_failed", d);
        if (!rec->opts.quiet) fprintf(stderr, "runmon record: GPU inventory failed: %s\n", why);
    }
    s->rec = rec;
    if (rm_gpu_ctx_init(&s->gpu, rec, rec->opts.gpu_fields, err, errlen) < 0) return -1;
    rm_dmon_ctx_init(&s->dmon, rec);
    if (rm_stream_open(&s->gpu.out, sess->dir, "gpu") < 0 ||
        rm_stream_open(&s->dmon.out, sess->dir, "dmon") < 0) {
        snprintf(err, errlen, "cannot write in %s: %s", sess->dir, strerror(errno));
        return -1;
    }
    rm_sink_attach(rec->sink, &s->gpu.out);
    rm_sink_attach(rec->sink, &s->dmon.out);
    int64_t interval_ns = (int64_t)llround(rec->opts.interval_s * 1e9);
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
    static const char *const names[] = {"gpu", "dmon", "cpu", "proc"};
    for (int i = 0; i < RM_COL_COUNT; i++)
        s->collectors[i].name = names[i];
    if (rec->opts.no_gpu)
        s->collectors[RM_COL_GPU].health = s->collectors[RM_COL_DMON].health = RM_HEALTH_DISABLED;
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
        if (!rec->opts.quiet)
            fprintf(stderr, "runmon record: no summary: %s\n", err[0] ? err : "no data");
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

int rm_cmd_record(int argc, char **argv)
{
    struct rm_recorder rec;
    memset(&rec, 0, sizeof rec);
    int pr = parse_args(argc, argv, &rec.opts);
    if (pr != 0) return pr > 0 ? 0 : 2;
    pthread_mutex_init(&rec.lock, NULL);
    json_object_seed(0); /* before any thread exists */

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
    int sfd = signalfd(-1, &sfd_set, SFD_CLOEXEC | SFD_NONBLOCK);

    char err[PATH_MAX * 2 + 512] = "";
    int status = 2;
    struct supervisor sup;
    memset(&sup, 0, sizeof sup);
    struct rm_cpu_sampler cpu;
    memset(&cpu, 0, sizeof cpu);
    struct rm_prom prom; /* --prom-textfile */
    memset(&prom, 0, sizeof prom);
    if (sfd < 0) {
        fprintf(stderr, "runmon record: signalfd: %s\n", strerror(errno));
        return 1;
    }
    if (open_session(&rec, err, sizeof err) < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
        close(sfd);
        return 2;
    }
    {
        json_t *d = json_object();
        json_object_set_new(d, "session_id", json_string(rec.sess.id));
        json_object_set_new(d, "host", rm_jstr(rec.sess.host));
        json_object_set_new(d, "interval_s", json_real(rec.opts.interval_s));
        rm_recorder_event(&rec, "session_start", d);
    }
    if (!rec.opts.quiet)
        fprintf(stderr, "runmon record: session %s in %s\n", rec.sess.id, rec.sess.dir);
    save_session(&rec);
    rec.sink = rm_sink_open(&rec, err, sizeof err);
    if (!rec.sink && !rec.opts.quiet) fprintf(stderr, "runmon record: no sink manifest: %s\n", err);
    int have_sink = rec.sink != NULL;

    if (rm_cpu_sampler_open(&cpu, &rec, rec.opts.proc_root, rec.opts.per_cpu, err, sizeof err) <
        0) {
        fprintf(stderr, "runmon record: %s\n", err);
        goto finish;
    }
    rm_sink_attach(rec.sink, &cpu.cpu);
    if (cpu.proc.buf) rm_sink_attach(rec.sink, &cpu.proc);
    if (rm_sink_start(rec.sink) < 0)
        fprintf(stderr, "runmon record: cannot start the sink thread\n");
    if (!rec.opts.no_gpu && start_gpu(&sup, &rec, err, sizeof err) < 0) {
        fprintf(stderr, "runmon record: %s\n", err);
        goto finish;
    }
    save_session(&rec);
    if (rm_prom_open(&prom, &rec) < 0) {
        fprintf(stderr, "runmon record: --prom-textfile: out of memory\n");
        goto finish;
    }
    if (rm_cpu_sampler_start(&cpu) < 0) {
        fprintf(stderr, "runmon record: cannot start the CPU sampler\n");
        goto finish;
    }

    rm_child work;
    rm_child_init(&work);
    int have_work = 0;
    status = 0;
    if (rec.opts.command) {
        int e = spawn_workload(&rec, &work);
        if (e) {
            fprintf(stderr, "runmon record: %s\n", work.errmsg);
            status = e == ENOENT ? 127 : 126;
        } else {
            have_work = 1;
            atomic_store(&rec.workload_pid, work.pid);
        }
    }
    int64_t deadline = rec.opts.duration_s > 0
                           ? rm_now_monotonic_ns() + (int64_t)llround(rec.opts.duration_s * 1e9)
                           : 0;
    int stopping = !rec.opts.command ? 0 : !have_work;
    while (!stopping) {
        int timeout = 1000;
        if (deadline) {
            int64_t left = deadline - rm_now_monotonic_ns();
            if (left <= 0) break;
            timeout = (int)(left / RM_NS_PER_MS) + 1;
            if (timeout > 1000) timeout = 1000;
        }
        timeout = rm_prom_timeout_ms(&prom, timeout);
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        poll(&p, 1, timeout);
        rm_prom_poll(&prom);
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
    atomic_store(&rec.workload_pid, 0);

finish:
    atomic_store(&rec.stop, 1);
    stop_gpu(&sup);
    if (cpu.procfs) rm_cpu_sampler_stop(&cpu);
    rec.sess.ended_ns = rm_now_realtime_ns();
    if (rec.opts.command) {
        rec.sess.exit_code = status;
        rec.sess.status = status == 0 ? "completed" : "failed";
    } else {
        rec.sess.status = status == 0 ? "completed" : "failed";
        rec.sess.exit_code = status == 0 ? -1 : status;
    }
    {
        json_t *d = json_object();
        json_object_set_new(d, "status", json_string(rec.sess.status));
        json_object_set_new(d, "exit_code",
                            rec.sess.exit_code >= 0 ? json_integer(rec.sess.exit_code)
                                                    : json_null());
        json_object_set_new(
            d, "duration_s",
            json_real(rm_ns_to_seconds_ms(rec.sess.ended_ns - rec.sess.started_ns)));
        rm_recorder_event(&rec, "session_end", d);
    }
    save_session(&rec);
    rm_prom_close(&prom);    /* the last values and the final status */
    rm_sink_close(rec.sink); /* the final manifest, with the session's status */
    rec.sink = NULL;
    rm_runlog_close(rec.log);
    rec.log = NULL;
    if (rec.sess.id[0]) write_summary(&rec, have_sink);
    rec.log = NULL;
    close(sfd);
    pthread_mutex_destroy(&rec.lock);
    return status;
}
