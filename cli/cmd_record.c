/* `runmon record`: its options. The recording itself is record/recorder.c. */
#include "cli/cmd_record.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "monitor/gpu_collectors.h"
#include "monitor/io_sampler.h"
#include "record/http.h"
#include "record/recorder.h"
#include "runlog/kvargs.h"
#include "sink/sink.h"

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
        "                            DIR/<session-id>/. A missing DIR is created, but not\n"
        "                            the folders above it: a DIR whose parent is missing is\n"
        "                            refused (exit 2), nothing created\n"
        "      --parents             create the missing folders above DIR as well, and say\n"
        "                            which were created\n"
        "  -i, --interval SECONDS    sampling interval, 0.1 to 3600 (default 1)\n"
        "      --gpu-fields LIST     nvidia-smi --query-gpu fields (default:\n"
        "                            " RM_DEFAULT_GPU_FIELDS ",\n"
        "                            then those of clocks.max.sm,\n"
        "                            clocks_event_reasons.active, power.draw.instant,\n"
        "                            power.draw.average, enforced.power.limit\n"
        "                            the driver offers, asked once at the start)\n"
        "      --dmon-metrics GROUPS nvidia-smi dmon -s groups (default " RM_DEFAULT_DMON_METRICS
        ": power/temperature,\n"
        "                            utilization, clocks, framebuffer memory)\n"
        "      --no-gpu              do not run nvidia-smi at all\n"
        "      --no-apps             no per-process GPU collector (nvidia-smi pmon ->\n"
        "                            apps.csv; on by default with the GPU collectors)\n"
        "      --all-gpus            record every GPU nvidia-smi shows; by default only those\n"
        "                            the job was given: CUDA_VISIBLE_DEVICES, else\n"
        "                            SLURM_STEP_GPUS, SLURM_JOB_GPUS, NVIDIA_VISIBLE_DEVICES\n"
        "                            (session.json's gpu_selection says which decided)\n"
        "      --per-cpu             also write one cpu.csv row per CPU\n"
        "      --io-interval SECONDS the I/O sampler's period, 0.1 to 3600 (default 1):\n"
        "                            disks, network, pressure stalls and the command's\n"
        "                            read/write bytes into io.csv\n"
        "      --io-net-lo           io.csv also counts the loopback interface (lo)\n"
        "      --no-io               no I/O sampler (no io.csv)\n"
        "      --nvidia-smi PATH     the nvidia-smi to run (default: nvidia-smi on PATH)\n"
        "      --warning-threshold PCT   GPU memory use that raises a warning event (default %g)\n"
        "      --critical-threshold PCT  ... a critical event (default %g)\n"
        "      --duration SECONDS    stop after this long (without a COMMAND)\n"
        "      --prom-textfile PATH  keep PATH (e.g. DIR/runmon.prom for node_exporter's\n"
        "                            textfile collector) rewritten with the latest values;\n"
        "                            at the end only the session's final status stays\n"
        "      --pushgateway URL     push the run's figures to a Prometheus Pushgateway at URL\n"
        "                            (http://HOST:9091) when it ends: one group per sweep\n"
        "                            configuration (job=runmon, sweep, the --param values;\n"
        "                            without --sweep, the host), replaced at each push;\n"
        "                            --param keys that make one label (a-b, a_b) or an\n"
        "                            empty value are refused\n"
        "      --push-interval S     also push the current figures every S seconds (1 to\n"
        "                            86400) while recording\n"
        "      --influx URL          stream the gpu, cpu, proc and apps rows as InfluxDB line\n"
        "                            protocol to URL (http://HOST:8086/write?db=NAME; 1.x\n"
        "                            write API), at most one request a second\n"
        "      --influx-file PATH    append the same lines to PATH (for Telegraf or\n"
        "                            'influx -import')\n"
        "                            A server that fails or hangs never stops or slows the\n"
        "                            recording: requests time out (5 s), are retried with\n"
        "                            back-off and reported in the run log; the end waits at\n"
        "                            most 5 s for them. Credentials in a URL are never shown\n"
        "      --flush-seconds S     fdatasync the active files and update the session's\n"
        "                            state.json and the sink's sink.json at least every S\n"
        "                            seconds (default 10); the last two reach the disk\n"
        "                            (fsync) at least every 30 s, and at a session's start\n"
        "                            and end and a segment's sealing or pruning\n"
        "      --rollover-mb MB      seal the active file at this size and start the next\n"
        "                            (default 64; fractions allowed; 0: never)\n"
        "      --retention-files N   sealed segments kept per stream in the sink, oldest\n"
        "                            pruned first (default 8; 0: keep all)\n"
        "      --retention-total-mb MB  bytes of segments kept in the whole sink (default\n"
        "                            512; 0: no limit)\n"
        "      --telemetry-sink-dir, --telemetry-flush-seconds, --telemetry-rollover-mb,\n"
        "      --telemetry-retention-files, --telemetry-retention-total-mb: the same\n"
        "      --kill-grace S        after a stop signal, what is left of the command gets\n"
        "                            SIGKILL this many seconds later (default %g; 0 to 3600)\n"
        "      --private             files only the user can read: 0600 files, 0700 folders\n"
        "                            (the session folder and everything runmon writes in it,\n"
        "                            index.jsonl, sink.json, .manifest.lock, and the sink\n"
        "                            directory when runmon creates it). Default: the umask\n"
        "                            decides,\n"
        "                            0644 and 0755 under umask 022; a file runmon replaces\n"
        "                            keeps its mode. --prom-textfile stays 0644 (read by\n"
        "                            node_exporter)\n"
        "      --sweep NAME          the session belongs to sweep NAME (default: $RUNMON_SWEEP;\n"
        "                            in a SLURM array job slurm-<array job id>, the task id\n"
        "                            its parameter array_task);\n"
        "                            'runmon sessions --summary --sweep NAME' compares its runs\n"
        "      --param KEY=VALUE     a parameter of this run (repeatable), kept in session.json\n"
        "                            and the sink's index: a VALUE that is a finite JSON number\n"
        "                            is kept as a number, anything else as a string. KEY and\n"
        "                            VALUE at most 1 KiB, no control characters, each KEY once\n"
        "  -q, --quiet               print no summary, no notes and no status line\n"
        "  -h, --help                this text\n"
        "\n"
        "The command runs in a process group of its own (on a terminal, the foreground\n"
        "one, as a shell runs a job). SIGINT, SIGTERM or SIGHUP to runmon is passed on to\n"
        "that group and to every process the command started, including those that left\n"
        "the group (setsid); what is still running --kill-grace seconds later gets SIGKILL,\n"
        "and so does everything at a second signal. A command stopped that way, or killed\n"
        "by SIGINT, SIGTERM or SIGHUP (a terminal's Ctrl-C), is 'interrupted', and its exit\n"
        "status (130 for SIGINT) is runmon's.\n"
        "\n"
        "The command gets RUNMON_RUNLOG, RUNMON_SESSION_ID and RUNMON_SESSION_DIR, so\n"
        "'runmon log' and 'runmon phase' inside it need no --file. RUNMON_PROC_ROOT\n"
        "(default /proc) points the CPU sampler at another /proc tree.\n"
        "\n"
        "On a terminal (stderr a tty, no -q), a status line on stderr is rewritten once a\n"
        "second: elapsed time, the open phase, mean GPU utilization, VRAM in use and its peak,\n"
        "each collector's state; degraded, recovered and unavailable collectors and VRAM\n"
        "warnings and critical crossings get lines of their own as they happen.\n",
        RM_DEFAULT_WARN_PCT, RM_DEFAULT_CRIT_PCT, RM_DEFAULT_KILL_GRACE_S);
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

/* Option codes beyond the short ones. */
enum {
    OPT_FIELDS = 256,
    OPT_DMON,
    OPT_NOGPU,
    OPT_NOAPPS,
    OPT_PERCPU,
    OPT_SMI,
    OPT_WARN,
    OPT_CRIT,
    OPT_DURATION,
    OPT_FLUSH_S,
    OPT_ROLLOVER,
    OPT_RET_FILES,
    OPT_RET_TOTAL,
    OPT_PRIVATE,
    OPT_KILL_GRACE
};
enum { OPT_PROM = 300 }; /* --prom-textfile */
enum { OPT_PARENTS = 310 };
enum { OPT_SWEEP = 320, OPT_PARAM };
enum { OPT_PUSHGW = 330, OPT_PUSH_INTERVAL, OPT_INFLUX, OPT_INFLUX_FILE, OPT_ALL_GPUS };
enum { OPT_NO_IO = 340, OPT_IO_INTERVAL, OPT_IO_NET_LO };
static int want_parents; /* --parents: create the folders above -o DIR too */
static const struct option longopts[] = {
    {"output", required_argument, 0, 'o'},
    {"parents", no_argument, 0, OPT_PARENTS},
    {"interval", required_argument, 0, 'i'},
    {"gpu-fields", required_argument, 0, OPT_FIELDS},
    {"dmon-metrics", required_argument, 0, OPT_DMON},
    {"no-gpu", no_argument, 0, OPT_NOGPU},
    {"no-apps", no_argument, 0, OPT_NOAPPS},
    {"all-gpus", no_argument, 0, OPT_ALL_GPUS},
    {"per-cpu", no_argument, 0, OPT_PERCPU},
    {"no-io", no_argument, 0, OPT_NO_IO},
    {"io-interval", required_argument, 0, OPT_IO_INTERVAL},
    {"io-net-lo", no_argument, 0, OPT_IO_NET_LO},
    {"nvidia-smi", required_argument, 0, OPT_SMI},
    {"warning-threshold", required_argument, 0, OPT_WARN},
    {"critical-threshold", required_argument, 0, OPT_CRIT},
    {"duration", required_argument, 0, OPT_DURATION},
    {"prom-textfile", required_argument, 0, OPT_PROM},
    {"pushgateway", required_argument, 0, OPT_PUSHGW},
    {"push-interval", required_argument, 0, OPT_PUSH_INTERVAL},
    {"influx", required_argument, 0, OPT_INFLUX},
    {"influx-file", required_argument, 0, OPT_INFLUX_FILE},
    {"telemetry-sink-dir", required_argument, 0, 'o'},
    {"flush-seconds", required_argument, 0, OPT_FLUSH_S},
    {"telemetry-flush-seconds", required_argument, 0, OPT_FLUSH_S},
    {"rollover-mb", required_argument, 0, OPT_ROLLOVER},
    {"telemetry-rollover-mb", required_argument, 0, OPT_ROLLOVER},
    {"retention-files", required_argument, 0, OPT_RET_FILES},
    {"telemetry-retention-files", required_argument, 0, OPT_RET_FILES},
    {"retention-total-mb", required_argument, 0, OPT_RET_TOTAL},
    {"telemetry-retention-total-mb", required_argument, 0, OPT_RET_TOTAL},
    {"private", no_argument, 0, OPT_PRIVATE},
    {"kill-grace", required_argument, 0, OPT_KILL_GRACE},
    {"sweep", required_argument, 0, OPT_SWEEP},
    {"param", required_argument, 0, OPT_PARAM},
    {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* --param KEY=VALUE, gathered here; its JSON text goes to the session (opts.params_json). */
static json_t *params;
static char *params_text;

#define PARAM_MAX 1024 /* bytes of a KEY, a VALUE or a sweep name */

/* What the user gave, quoted safely: escaped, cut at 64 bytes. */
static void say_given(const char *what, const char *s)
{
    char cut[68];
    snprintf(cut, sizeof cut, "%.64s%s", s, strlen(s) > 64 ? "..." : "");
    fprintf(stderr, "runmon record: %s '", what);
    rm_fput_safe(stderr, cut);
    fputc('\'', stderr);
}

/* A sweep name, a KEY or a VALUE: at most 1 KiB of UTF-8 without control characters
 * (empty allowed for a VALUE only). 0, or -1 with the reason printed. */
static int check_text(const char *what, const char *shown, const char *part, const char *s,
                      int may_be_empty)
{
    size_t n = strlen(s);
    const char *why = !n && !may_be_empty                 ? "is empty"
                      : n > PARAM_MAX                     ? "is longer than 1 KiB"
                      : n && !rm_utf8_valid(s, n)         ? "is not UTF-8"
                      : n && rm_text_check(s, "text") < 0 ? "holds a control character"
                                                          : NULL;
    if (!why) return 0;
    say_given(what, shown);
    fprintf(stderr, ": %s %s\n", part, why);
    return -1;
}

/* A server's URL: http:// or https://, a host, no spaces or control characters. 0, or -1 with
 * the reason printed (the URL itself never: it may hold a password). */
static int check_url(const char *opt, const char *url)
{
    const char *why = NULL;
    const char *rest = !strncmp(url, "http://", 7)    ? url + 7
                       : !strncmp(url, "https://", 8) ? url + 8
                                                      : NULL;
    if (!rest)
        why = "must start with http:// or https://";
    else if (!*rest || strchr("/?#", *rest))
        why = "has no host";
    else
        for (const char *p = url; *p && !why; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                why = "holds a space, a control character or a non-ASCII byte (percent-encode "
                      "it)";
    if (!why) return 0;
    char shown[512];
    rm_http_shown_url(url, shown, sizeof shown);
    fprintf(stderr, "runmon record: %s: the URL '", opt);
    rm_fput_safe(stderr, shown);
    fprintf(stderr, "' %s\n", why);
    return -1;
}

static int add_param(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq) {
        say_given("--param", arg);
        fputs(": expected KEY=VALUE\n", stderr);
        return -1;
    }
    char *key = strndup(arg, (size_t)(eq - arg));
    if (!key) return -1;
    int rc = -1;
    if (check_text("--param", arg, "the key", key, 0) == 0 &&
        check_text("--param", arg, "the value", eq + 1, 1) == 0) {
        if (!params) params = json_object();
        if (json_object_get(params, key)) {
            say_given("--param", arg);
            fputs(": the key is given twice\n", stderr);
        } else {
            json_t *v = rm_number_or_string(eq + 1);
            rc = v ? json_object_set_new(params, key, v) : -1;
        }
    }
    free(key);
    return rc;
}

/* A SLURM array is a sweep: "slurm-<array job id>", the task id its parameter array_task,
 * unless --sweep/RUNMON_SWEEP named another sweep or --param gave array_task. */
static int slurm_array_sweep(struct rm_record_opts *o)
{
    static char name[64];
    const char *job = getenv("SLURM_ARRAY_JOB_ID"), *task = getenv("SLURM_ARRAY_TASK_ID");
    if (!job || !*job || !task || !*task) return 0;
    /* A strange value is the scheduler's, not the user's mistake: said, and no sweep. */
    if (check_text("SLURM_ARRAY_JOB_ID", job, "the id", job, 0) < 0 ||
        check_text("SLURM_ARRAY_TASK_ID", task, "the id", task, 0) < 0) {
        fputs("runmon record: not recorded as a sweep\n", stderr);
        return 0;
    }
    if (!o->sweep) {
        snprintf(name, sizeof name, "slurm-%.40s", job);
        o->sweep = name;
    } else if (strncmp(o->sweep, "slurm-", 6) != 0 || strcmp(o->sweep + 6, job) != 0) {
        return 0; /* another sweep: its own parameters say which run this is */
    }
    if (!params) params = json_object();
    if (!params || json_object_get(params, "array_task")) return 0;
    json_t *v = rm_number_or_string(task);
    return v ? json_object_set_new(params, "array_task", v) : -1;
}

/* Applies one option. 0, 1 after --help (printed), or -1 with the reason printed. */
static int apply_option(int c, int argc, char **argv, struct rm_record_opts *o)
{
    (void)argc;
    switch (c) {
    case 'o':
        o->output_dir = optarg;
        break;
    case OPT_PARENTS:
        want_parents = 1;
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
    case OPT_NOAPPS:
        o->no_apps = 1;
        break;
    case OPT_ALL_GPUS:
        o->all_gpus = 1;
        break;
    case OPT_PERCPU:
        o->per_cpu = 1;
        break;
    case OPT_NO_IO:
        o->no_io = 1;
        break;
    case OPT_IO_INTERVAL:
        if (parse_seconds("--io-interval", optarg, 0.1, 3600, &o->io_interval_s) < 0) return -1;
        break;
    case OPT_IO_NET_LO:
        o->io_net_lo = 1;
        break;
    case OPT_SMI:
        o->nvidia_smi = optarg;
        break;
    case OPT_WARN:
        if (parse_seconds("--warning-threshold", optarg, 0.1, 100, &o->warn_pct) < 0) return -1;
        break;
    case OPT_CRIT:
        if (parse_seconds("--critical-threshold", optarg, 0.1, 100, &o->crit_pct) < 0) return -1;
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
    case OPT_PUSHGW:
        if (check_url("--pushgateway", optarg) < 0) return -1;
        o->pushgateway = optarg;
        break;
    case OPT_PUSH_INTERVAL:
        if (parse_seconds("--push-interval", optarg, 1, 86400, &o->push_interval_s) < 0) return -1;
        break;
    case OPT_INFLUX:
        if (check_url("--influx", optarg) < 0) return -1;
        o->influx = optarg;
        break;
    case OPT_INFLUX_FILE:
        if (!*optarg) {
            fprintf(stderr, "runmon record: --influx-file is empty\n");
            return -1;
        }
        o->influx_file = optarg;
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
    case OPT_PRIVATE:
        o->private_files = 1;
        break;
    case OPT_KILL_GRACE:
        if (parse_seconds("--kill-grace", optarg, 0, 3600, &o->kill_grace_s) < 0) return -1;
        break;
    case OPT_SWEEP:
        if (check_text("--sweep", optarg, "the name", optarg, 0) < 0) return -1;
        o->sweep = optarg;
        break;
    case OPT_PARAM:
        if (add_param(optarg) < 0) return -1;
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
    return 0;
}

/* What no single option can check: thresholds in order, the command, --duration. */
static int check_args(int argc, char **argv, struct rm_record_opts *o)
{
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
    if (o->push_interval_s > 0 && !o->pushgateway) {
        fprintf(stderr, "runmon record: --push-interval needs --pushgateway URL\n");
        return -1;
    }
    if (o->command && o->duration_s > 0) {
        fprintf(stderr, "runmon record: --duration is for recording without a COMMAND\n");
        return -1;
    }
    const char *env_sweep = getenv("RUNMON_SWEEP");
    if (!o->sweep && env_sweep && *env_sweep) {
        if (check_text("RUNMON_SWEEP", env_sweep, "the name", env_sweep, 0) < 0) return -1;
        o->sweep = env_sweep;
    }
    if (slurm_array_sweep(o) < 0) return -1;
    if (params) {
        params_text = json_dumps(params, JSON_COMPACT | JSON_REAL_PRECISION(17));
        o->params_json = params_text;
    }
    const char *root = getenv("RUNMON_PROC_ROOT");
    o->proc_root = root && *root ? root : "/proc";
    const char *sys = getenv("RUNMON_SYS_ROOT");
    o->sys_root = sys && *sys ? sys : "/sys";
    return 0;
}

static int parse_args(int argc, char **argv, struct rm_record_opts *o)
{
    *o = (struct rm_record_opts){.output_dir = "runmon",
                                 .interval_s = 1.0,
                                 .io_interval_s = RM_IO_DEFAULT_INTERVAL_S,
                                 .gpu_fields = RM_DEFAULT_GPU_FIELDS,
                                 .dmon_metrics = RM_DEFAULT_DMON_METRICS,
                                 .nvidia_smi = "nvidia-smi",
                                 .warn_pct = RM_DEFAULT_WARN_PCT,
                                 .crit_pct = RM_DEFAULT_CRIT_PCT,
                                 /* not given: the sink's default (RM_SINK_DEFAULT_FLUSH_S);
                                  * the Prometheus textfile keeps its 2 s */
                                 .flush_s = 0,
                                 .rollover_mb = RM_SINK_DEFAULT_ROLLOVER_MB,
                                 .retention_files = RM_SINK_DEFAULT_RETENTION_FILES,
                                 .retention_total_mb = RM_SINK_DEFAULT_RETENTION_TOTAL_MB,
                                 .kill_grace_s = RM_DEFAULT_KILL_GRACE_S};
    want_parents = 0;
    json_decref(params);
    params = NULL;
    free(params_text);
    params_text = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+o:i:qh", longopts, NULL)) != -1) {
        int rc = apply_option(c, argc, argv, o);
        if (rc) return rc;
    }
    return check_args(argc, argv, o);
}

/* The sink directory of -o, made before the recording starts. A missing DIR is created, but
 * only DIR itself: a typo higher up the path would otherwise become a tree of folders.
 * --parents creates the missing folders above it too and says which. 0, or -1 with the
 * reason printed and nothing created. */
static int make_output_dir(const struct rm_record_opts *o)
{
    char path[PATH_MAX];
    size_t n = strlen(o->output_dir);
    if (n == 0 || n >= sizeof path) {
        fprintf(stderr, "runmon record: -o: %s\n", n ? "the path is too long" : "empty");
        return -1;
    }
    memcpy(path, o->output_dir, n + 1);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return 0;
        fprintf(stderr, "runmon record: -o %s: %s\n", o->output_dir, strerror(ENOTDIR));
        return -1;
    }
    if (errno != ENOENT) {
        fprintf(stderr, "runmon record: -o %s: %s\n", o->output_dir, strerror(errno));
        return -1;
    }
    /* The first folder of the path that does not exist: DIR itself, or one above it. */
    size_t first = n;
    for (size_t i = 1; i < n && first == n; i++) {
        if (path[i] != '/' || path[i - 1] == '/') continue;
        path[i] = '\0';
        if (stat(path, &st) < 0) first = i;
        path[i] = '/';
    }
    rm_fileio_set_private(o->private_files); /* --private: 0700 folders */
    if (first == n) {
        if (mkdir(path, rm_dir_mode()) == 0 || errno == EEXIST) return 0;
        fprintf(stderr, "runmon record: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!want_parents) {
        path[first] = '\0';
        fprintf(stderr,
                "runmon record: -o %s: %s does not exist; runmon creates only the last folder "
                "of the path (--parents creates the ones above it too)\n",
                o->output_dir, path);
        return -1;
    }
    /* --parents: each missing folder from the first, said as it is made. */
    int made = 0;
    for (size_t i = first; i <= n; i++) {
        if (i < n && (path[i] != '/' || path[i - 1] == '/')) continue;
        path[i] = '\0';
        int rc = mkdir(path, rm_dir_mode());
        if (rc < 0 && errno != EEXIST) {
            int e = errno;
            if (made && !o->quiet) fputc('\n', stderr);
            fprintf(stderr, "runmon record: cannot create %s: %s\n", path, strerror(e));
            return -1;
        }
        if (rc == 0 && !o->quiet)
            fprintf(stderr, made++ ? ", %s" : "runmon record: created %s", path);
        if (i < n) path[i] = '/';
    }
    if (made && !o->quiet) fputc('\n', stderr);
    return 0;
}

int rm_cmd_record(int argc, char **argv)
{
    struct rm_record_opts opts;
    int pr = parse_args(argc, argv, &opts);
    /* Bad input leaves nothing behind: the exporters' checks come before -o's folder. */
    int rc = pr != 0                       ? (pr > 0 ? 0 : 2)
             : rm_record_check(&opts) < 0  ? 2
             : make_output_dir(&opts) < 0 ? 2
                                           : rm_record_run(&opts);
    json_decref(params);
    params = NULL;
    free(params_text);
    params_text = NULL;
    return rc;
}
