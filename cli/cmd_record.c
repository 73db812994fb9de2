/* `runmon record`: its options. The recording itself is record/recorder.c. */
#include "cli/cmd_record.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "monitor/gpu_collectors.h"
#include "monitor/io_sampler.h"
#include "monitor/proc_samplers.h"
#include "monitor/workload.h"
#include "record/http.h"
#include "record/recorder.h"
#include "runlog/kvargs.h"
#include "sink/sink.h"

/* --help's text around the options' list (which the table below writes). */
static const char usage_head[] =
    "usage: runmon record [OPTIONS] [-- COMMAND [ARG ...]]\n"
    "\n"
    "Record GPU and CPU use into a session folder. With a COMMAND, run it, stop when it\n"
    "exits, and exit with its status (128+N if it died of signal N). Without one, record\n"
    "until SIGINT/SIGTERM or --duration. The session's summary is written to\n"
    "summary.json and printed to stderr at the end.\n"
    "\n"
    "options:\n";
static const char usage_tail[] =
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
    "warnings and critical crossings get lines of their own as they happen.\n";

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

/* ---- the options, one row each ------------------------------------------------------------
 * One table gives getopt its options, writes --help's list and applies each option; the man
 * page's OPTIONS and the bash completion are checked against it (tests/e2e/test_record_options.sh:
 * the completion reads --help). A new option is one row here (and, for a /proc sampler's, a
 * field of struct rm_proc_opts). */
struct record_option;
/* Applies a row to its value (NULL for an option without one): 0, 1 after --help (printed),
 * or -1 with the reason printed. */
typedef int apply_fn(const struct record_option *r, const char *v, struct rm_record_opts *o);

struct record_option {
    const char *name; /* --NAME */
    char short_name;  /* -C; 0: none */
    const char *arg;  /* the value's name in --help; NULL: the option takes no value */
    /* --help's text: its lines after the first are indented to the column; "%g" stands for
     * dflt. A leading space widens the gap after a long name. NULL: an alias, listed with
     * the aliases next to it ("--a, --b: the same"). */
    const char *help;
    double dflt;
    const char *same_as; /* an alias: applied as that row, and named so in its messages */
    apply_fn *apply;
    size_t at;     /* the field of struct rm_record_opts a setter sets (offsetof) */
    double lo, hi; /* a number's range */
};

static int want_parents; /* --parents: create the folders above -o DIR too */
/* --pid and --cgroup as given: checked once every option is read (monitor/workload.h). */
static const char *pid_arg, *cgroup_arg;

static void *field(const struct record_option *r, struct rm_record_opts *o)
{
    return (char *)o + r->at;
}

static int set_flag(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    (void)v;
    *(int *)field(r, o) = 1;
    return 0;
}

static int set_text(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    *(const char **)field(r, o) = v;
    return 0;
}

static int set_nonempty(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    if (!*v) {
        fprintf(stderr, "runmon record: --%s is empty\n", r->name);
        return -1;
    }
    return set_text(r, v, o);
}

static int set_number(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", r->name);
    return parse_seconds(opt, v, r->lo, r->hi, field(r, o));
}

static int set_url(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", r->name);
    return check_url(opt, v) < 0 ? -1 : set_text(r, v, o);
}

static int set_parents(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    (void)r, (void)v, (void)o;
    want_parents = 1;
    return 0;
}

static int set_dmon(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    for (const char *p = v; *p; p++)
        if (!strchr("pucvmetd", *p)) {
            fprintf(stderr,
                    "runmon record: --dmon-metrics: '%c' is not a dmon group (use "
                    "letters from pucvmetd)\n",
                    *p);
            return -1;
        }
    return set_nonempty(r, v, o);
}

static int set_whole(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    double n;
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", r->name);
    if (parse_seconds(opt, v, r->lo, r->hi, &n) < 0) return -1;
    if (n != floor(n)) {
        fprintf(stderr, "runmon record: %s must be a whole number\n", opt);
        return -1;
    }
    *(int *)field(r, o) = (int)n;
    return 0;
}

static int set_sweep(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    return check_text("--sweep", v, "the name", v, 0) < 0 ? -1 : set_text(r, v, o);
}

static int set_param(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    (void)r, (void)o;
    return add_param(v) < 0 ? -1 : 0;
}

static int set_workload(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    (void)o;
    *(r->name[0] == 'p' ? &pid_arg : &cgroup_arg) = v;
    return 0;
}

static void usage(FILE *out);

static int show_help(const struct record_option *r, const char *v, struct rm_record_opts *o)
{
    (void)r, (void)v, (void)o;
    usage(stdout);
    return 1;
}

#define AT(f) offsetof(struct rm_record_opts, f)
static const struct record_option record_options[] = {
    {"output", 'o', "DIR",
     "sink directory (default ./runmon); the session goes to\n"
     "DIR/<session-id>/. A missing DIR is created, but not\n"
     "the folders above it: a DIR whose parent is missing is\n"
     "refused (exit 2), nothing created",
     .apply = set_text, .at = AT(output_dir)},
    {"parents", 0, NULL,
     "create the missing folders above DIR as well, and say\n"
     "which were created",
     .apply = set_parents},
    {"interval", 'i', "SECONDS", "sampling interval, 0.1 to 3600 (default 1)", .apply = set_number,
     .at = AT(interval_s), .lo = 0.1, .hi = 3600},
    {"gpu-fields", 0, "LIST",
     "nvidia-smi --query-gpu fields (default:\n" RM_DEFAULT_GPU_FIELDS ",\n"
     "then those of clocks.max.sm,\n"
     "clocks_event_reasons.active, power.draw.instant,\n"
     "power.draw.average, enforced.power.limit\n"
     "the driver offers, asked once at the start)",
     .apply = set_text, .at = AT(gpu_fields)},
    {"dmon-metrics", 0, "GROUPS",
     "nvidia-smi dmon -s groups (default " RM_DEFAULT_DMON_METRICS ": power/temperature,\n"
     "utilization, clocks, framebuffer memory)",
     .apply = set_dmon, .at = AT(dmon_metrics)},
    {"no-gpu", 0, NULL, "do not run nvidia-smi at all", .apply = set_flag, .at = AT(no_gpu)},
    {"no-apps", 0, NULL,
     "no per-process GPU collector (nvidia-smi pmon ->\n"
     "apps.csv; on by default with the GPU collectors)",
     .apply = set_flag, .at = AT(no_apps)},
    {"all-gpus", 0, NULL,
     "record every GPU nvidia-smi shows; by default only those\n"
     "the job was given: CUDA_VISIBLE_DEVICES, else\n"
     "SLURM_STEP_GPUS, SLURM_JOB_GPUS, NVIDIA_VISIBLE_DEVICES\n"
     "(session.json's gpu_selection says which decided)",
     .apply = set_flag, .at = AT(all_gpus)},
    {"per-cpu", 0, NULL, "also write one cpu.csv row per CPU", .apply = set_flag,
     .at = AT(procs.per_cpu)},
    {"io-interval", 0, "SECONDS",
     "the I/O sampler's period, 0.1 to 3600 (default 1):\n"
     "disks, network, pressure stalls and the command's\n"
     "read/write bytes into io.csv",
     .apply = set_number, .at = AT(procs.io_interval_s), .lo = 0.1, .hi = 3600},
    {"io-net-lo", 0, NULL, "io.csv also counts the loopback interface (lo)", .apply = set_flag,
     .at = AT(procs.io_net_lo)},
    {"no-io", 0, NULL, "no I/O sampler (no io.csv)", .apply = set_flag, .at = AT(procs.no_io)},
    {"no-stall", 0, NULL,
     "no stall sampler (no stall.csv: held back by then\n"
     "says the workload's own stalls are unknown)",
     .apply = set_flag, .at = AT(procs.no_stall)},
    {"nvidia-smi", 0, "PATH", "the nvidia-smi to run (default: nvidia-smi on PATH)",
     .apply = set_text, .at = AT(nvidia_smi)},
    {"warning-threshold", 0, "PCT", "  GPU memory use that raises a warning event (default %g)",
     RM_DEFAULT_WARN_PCT, .apply = set_number, .at = AT(warn_pct), .lo = 0.1, .hi = 100},
    {"critical-threshold", 0, "PCT", " ... a critical event (default %g)", RM_DEFAULT_CRIT_PCT,
     .apply = set_number, .at = AT(crit_pct), .lo = 0.1, .hi = 100},
    {"duration", 0, "SECONDS", "stop after this long (without a COMMAND)", .apply = set_number,
     .at = AT(duration_s), .lo = 0.001, .hi = 1e9},
    {"prom-textfile", 0, "PATH",
     "keep PATH (e.g. DIR/runmon.prom for node_exporter's\n"
     "textfile collector) rewritten with the latest values;\n"
     "at the end only the session's final status stays",
     .apply = set_nonempty, .at = AT(prom_textfile)},
    {"pushgateway", 0, "URL",
     "push the run's figures to a Prometheus Pushgateway at URL\n"
     "(http://HOST:9091) when it ends: one group per sweep\n"
     "configuration (job=runmon, sweep, the --param values;\n"
     "without --sweep, the host), replaced at each push;\n"
     "--param keys that make one label (a-b, a_b) or an\n"
     "empty value are refused",
     .apply = set_url, .at = AT(pushgateway)},
    {"push-interval", 0, "S",
     "also push the current figures every S seconds (1 to\n"
     "86400) while recording",
     .apply = set_number, .at = AT(push_interval_s), .lo = 1, .hi = 86400},
    {"influx", 0, "URL",
     "stream the gpu, cpu, proc and apps rows as InfluxDB line\n"
     "protocol to URL (http://HOST:8086/write?db=NAME; 1.x\n"
     "write API), at most one request a second",
     .apply = set_url, .at = AT(influx)},
    {"influx-file", 0, "PATH",
     "append the same lines to PATH (for Telegraf or\n"
     "'influx -import')\n"
     "A server that fails or hangs never stops or slows the\n"
     "recording: requests time out (5 s), are retried with\n"
     "back-off and reported in the run log; the end waits at\n"
     "most 3 s for a writer that answers, 1 s in all for those\n"
     "that fail or hang. Credentials in a URL are never shown",
     .apply = set_nonempty, .at = AT(influx_file)},
    {"flush-seconds", 0, "S",
     "fdatasync the active files and update the session's\n"
     "state.json and the sink's sink.json at least every S\n"
     "seconds (default 10); the last two reach the disk\n"
     "(fsync) at least every 30 s, and at a session's start\n"
     "and end and a segment's sealing or pruning",
     .apply = set_number, .at = AT(flush_s), .lo = 0.01, .hi = 86400},
    {"rollover-mb", 0, "MB",
     "seal the active file at this size and start the next\n"
     "(default 64; fractions allowed; 0: never)",
     .apply = set_number, .at = AT(rollover_mb), .lo = 0, .hi = 1048576},
    {"retention-files", 0, "N",
     "sealed segments kept per stream in the sink, oldest\n"
     "pruned first (default 8; 0: keep all)",
     .apply = set_whole, .at = AT(retention_files), .lo = 0, .hi = 1e6},
    {"retention-total-mb", 0, "MB",
     " bytes of segments kept in the whole sink (default\n"
     "512; 0: no limit)",
     .apply = set_number, .at = AT(retention_total_mb), .lo = 0, .hi = 1e9},
    {"telemetry-sink-dir", .arg = "DIR", .same_as = "output"},
    {"telemetry-flush-seconds", .arg = "S", .same_as = "flush-seconds"},
    {"telemetry-rollover-mb", .arg = "MB", .same_as = "rollover-mb"},
    {"telemetry-retention-files", .arg = "N", .same_as = "retention-files"},
    {"telemetry-retention-total-mb", .arg = "MB", .same_as = "retention-total-mb"},
    {"kill-grace", 0, "S",
     "after a stop signal, what is left of the command gets\n"
     "SIGKILL this many seconds later (default %g; 0 to 3600)",
     RM_DEFAULT_KILL_GRACE_S, .apply = set_number, .at = AT(kill_grace_s), .lo = 0, .hi = 3600},
    {"private", 0, NULL,
     "files only the user can read: 0600 files, 0700 folders\n"
     "(the session folder and everything runmon writes in it,\n"
     "index.jsonl, sink.json, .manifest.lock, and the sink\n"
     "directory when runmon creates it). Default: the umask\n"
     "decides,\n"
     "0644 and 0755 under umask 022; a file runmon replaces\n"
     "keeps its mode. --prom-textfile stays 0644 (read by\n"
     "node_exporter)",
     .apply = set_flag, .at = AT(private_files)},
    {"sweep", 0, "NAME",
     "the session belongs to sweep NAME (default: $RUNMON_SWEEP;\n"
     "in a SLURM array job slurm-<array job id>, the task id\n"
     "its parameter array_task);\n"
     "'runmon sessions --summary --sweep NAME' compares its runs",
     .apply = set_sweep, .at = AT(sweep)},
    {"param", 0, "KEY=VALUE",
     "a parameter of this run (repeatable), kept in session.json\n"
     "and the sink's index: a VALUE that is a finite JSON number\n"
     "is kept as a number, anything else as a string. KEY and\n"
     "VALUE at most 1 KiB, no control characters, each KEY once",
     .apply = set_param},
    {"pid", 0, "PID",
     "record a running process and its tree (no COMMAND) until it exits\n"
     "or Ctrl-C; its exit status is unknown to runmon",
     .apply = set_workload},
    {"cgroup", 0, "PATH",
     "the workload is the processes of this cgroup (v1 or v2) and of the\n"
     "cgroups below it, read each tick (a container, a SLURM step)",
     .apply = set_workload},
    {"quiet", 'q', NULL, "print no summary, no notes and no status line", .apply = set_flag,
     .at = AT(quiet)},
    {"help", 'h', NULL, "this text", .apply = show_help},
};
#undef AT
enum { NOPTIONS = (int)(sizeof record_options / sizeof *record_options) };
enum { HELP_COL = 28, HELP_WIDTH = 80, ALIAS_INDENT = 6, LONG_ONLY = 256 };

/* A row's help: its lines after the first at the column, "%g" as its default. */
static void put_help(FILE *out, const struct record_option *r)
{
    for (const char *p = r->help; *p; p++) {
        if (p[0] == '%' && p[1] == 'g') {
            fprintf(out, "%g", r->dflt);
            p++;
        } else {
            fputc(*p, out);
            if (*p == '\n') fprintf(out, "%*s", HELP_COL, "");
        }
    }
    fputc('\n', out);
}

/* The aliases from row i on: "--a, --b, ...: the same", wrapped at the width. */
static void put_aliases(FILE *out, int i)
{
    int col = fprintf(out, "%*s", ALIAS_INDENT, "");
    for (; i < NOPTIONS && !record_options[i].help; i++) {
        int last = i + 1 == NOPTIONS || record_options[i + 1].help;
        int len = 2 + (int)strlen(record_options[i].name) + (last ? 10 : 1);
        if (col > ALIAS_INDENT && col + 1 + len > HELP_WIDTH)
            col = fprintf(out, "\n%*s", ALIAS_INDENT, "") - 1;
        else if (col > ALIAS_INDENT)
            col += fprintf(out, " ");
        col += fprintf(out, "--%s%s", record_options[i].name, last ? ": the same" : ",");
    }
    fputc('\n', out);
}

static void usage(FILE *out)
{
    fputs(usage_head, out);
    for (int i = 0; i < NOPTIONS; i++) {
        const struct record_option *r = &record_options[i];
        if (!r->help) {
            if (i == 0 || record_options[i - 1].help) put_aliases(out, i);
            continue;
        }
        char lead[96];
        int n = r->short_name ? snprintf(lead, sizeof lead, "  -%c, --%s", r->short_name, r->name)
                              : snprintf(lead, sizeof lead, "      --%s", r->name);
        if (r->arg) n += snprintf(lead + n, sizeof lead - (size_t)n, " %s", r->arg);
        fprintf(out, "%s%*s", lead, n < HELP_COL ? HELP_COL - n : 1, "");
        put_help(out, r);
    }
    fputs(usage_tail, out);
}

/* getopt's view of the table: the short options (+ first: stop at the command) and the long
 * ones, each returning its short letter or LONG_ONLY + its row. */
static void getopt_tables(char *shorts, size_t len, struct option *longs)
{
    size_t n = 0;
    shorts[n++] = '+';
    for (int i = 0; i < NOPTIONS; i++) {
        const struct record_option *r = &record_options[i];
        longs[i] = (struct option){r->name, r->arg ? required_argument : no_argument, 0,
                                   r->short_name ? r->short_name : LONG_ONLY + i};
        if (r->short_name && n + 3 < len) {
            shorts[n++] = r->short_name;
            if (r->arg) shorts[n++] = ':';
        }
    }
    shorts[n] = '\0';
    longs[NOPTIONS] = (struct option){0, 0, 0, 0};
}

/* The row getopt's c names, an alias as the row it stands for; NULL: none. */
static const struct record_option *option_row(int c)
{
    const struct record_option *r = NULL;
    for (int i = 0; i < NOPTIONS && !r; i++)
        if (c == LONG_ONLY + i || (c < LONG_ONLY && c == record_options[i].short_name))
            r = &record_options[i];
    for (int i = 0; r && r->same_as && i < NOPTIONS; i++)
        if (!strcmp(record_options[i].name, r->same_as)) r = &record_options[i];
    return r;
}

/* Applies one option. 0, 1 after --help (printed), or -1 with the reason printed. */
static int apply_option(int c, char **argv, struct rm_record_opts *o)
{
    const struct record_option *r = c == ':' || c == '?' ? NULL : option_row(c);
    if (r && r->apply) return r->apply(r, r->arg ? optarg : NULL, o);
    if (c == ':')
        fprintf(stderr, "runmon record: %s needs a value\n", argv[optind - 1]);
    else
        fprintf(stderr, "runmon record: unknown option '%s' (see --help)\n", argv[optind - 1]);
    return -1;
}

/* --pid or --cgroup: who the workload is, checked before anything is made. 0, or -1 with the
 * reason printed. */
static int check_workload(struct rm_record_opts *o)
{
    char err[PATH_MAX + 256];
    const char *why = pid_arg && cgroup_arg ? "--pid and --cgroup: give one of them"
                      : pid_arg && o->command
                          ? "--pid records a running process: give no COMMAND with it"
                          : NULL;
    if (!why && pid_arg &&
        rm_workload_attach_pid(&o->workload, o->procs.proc_root, pid_arg, err, sizeof err) < 0)
        why = err;
    if (!why && cgroup_arg &&
        rm_workload_attach_cgroup(&o->workload, cgroup_arg, err, sizeof err) < 0)
        why = err;
    if (!why) return 0;
    fputs("runmon record: ", stderr);
    rm_fput_safe(stderr, why);
    fputc('\n', stderr);
    return -1;
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
    o->procs.proc_root = root && *root ? root : "/proc";
    const char *sys = getenv("RUNMON_SYS_ROOT");
    o->procs.sys_root = sys && *sys ? sys : "/sys";
    return check_workload(o);
}

static int parse_args(int argc, char **argv, struct rm_record_opts *o)
{
    *o = (struct rm_record_opts){.output_dir = "runmon",
                                 .interval_s = 1.0,
                                 .procs = {.io_interval_s = RM_IO_DEFAULT_INTERVAL_S},
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
    pid_arg = cgroup_arg = NULL;
    json_decref(params);
    params = NULL;
    free(params_text);
    params_text = NULL;
    optind = 1;
    opterr = 0;
    char shorts[2 + 2 * NOPTIONS];
    struct option longopts[NOPTIONS + 1];
    getopt_tables(shorts, sizeof shorts, longopts);
    int c;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        int rc = apply_option(c, argv, o);
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
    int rc = pr != 0                      ? (pr > 0 ? 0 : 2)
             : rm_record_check(&opts) < 0 ? 2
             : make_output_dir(&opts) < 0 ? 2
                                          : rm_record_run(&opts);
    json_decref(params);
    params = NULL;
    free(params_text);
    params_text = NULL;
    return rc;
}
