/* `runmon summary`: summarize session folders or bare files. */
#include "cli/cmd_summary.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/termsafe.h"
#include "report/output.h"
#include "sink/job_sessions.h"
#include "sink/sink.h"
#include "summary/summary.h"

/* "runmon summary: WHAT[: WHY]" on stderr; WHAT (a file name, an error that may quote a
 * file's first line) is escaped for the terminal. */
static void complain(const char *what, const char *why)
{
    fputs("runmon summary: ", stderr);
    rm_fput_safe(stderr, what);
    if (why) fprintf(stderr, ": %s", why);
    fputc('\n', stderr);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: runmon summary [PATH ...] [OPTIONS]\n\n"
            "Summarize what the GPUs and CPUs did during a recorded run: per GPU, per phase,\n"
            "in total. PATH is a session folder (session.json, gpu.csv, dmon.csv, cpu.csv,\n"
            "proc.csv, apps.csv, runlog.jsonl), a sink directory (index.jsonl; one session\n"
            "of it, named on stderr), or a single file (its kind guessed from its name).\n"
            "Several sink directories (the nodes of one job) give one summary each plus totals\n"
            "per host.\n\n"
            "options:\n"
            "  --format text|json|csv  output format (default: text on a terminal, else json);\n"
            "                          json, and csv to a file or pipe, keep names exact; text,\n"
            "                          and csv on a terminal, escape control characters\n"
            "  -o FILE                 write there (atomically) instead of stdout\n"
            "  --phase REGEX           only phases whose path matches (PCRE2)\n"
            "  --gpu-csv FILE          an nvidia-smi --query-gpu CSV (repeatable, in time order)\n"
            "  --dmon FILE             nvidia-smi dmon output, text or runmon's dmon.csv\n"
            "  --cpu-csv FILE          a cpu.csv (or another monitor's cpu_metrics.csv)\n"
            "  --proc-csv FILE         a proc.csv\n"
            "  --apps-csv FILE         an apps.csv (per-process GPU memory)\n"
            "  --runlog FILE           a runlog.jsonl with phases and monitor events\n"
            "  --gpu-fields LIST       the --query-gpu fields of a --gpu-csv without header,\n"
            "                          comma-separated (default: session.json's gpu_fields,\n"
            "                          else the legacy list; see runmon(1))\n"
            "  --interval SEC          sampling interval for gap detection (default: from\n"
            "                          session.json, else the median sample spacing)\n"
            "  --threads N             files, and chunks of a large GPU file, scanned in\n"
            "                          parallel (default: CPU count)\n"
            "  --job ID                every session of SLURM job ID in the sink directories\n"
            "                          (session.json's job.job_id; one recorder per node):\n"
            "                          one summary each, then per host and in total\n"
            "  --session ID            in a sink directory (runmon record -o DIR): that session\n"
            "                          (default: the newest completed one, else the newest;\n"
            "                          latest: where DIR/latest points)\n"
            "  --rescan                read sealed segments again instead of using the\n"
            "                          aggregates the sink keeps (state.json)\n"
            "  -h, --help              this text\n\n"
            "exit status: 0 success, 1 a write failure, 2 a usage error or unusable input\n"
            "(missing path, a file without data).\n");
}

enum {
    OPT_FORMAT = 256,
    OPT_PHASE,
    OPT_GPU,
    OPT_DMON,
    OPT_CPU,
    OPT_PROC,
    OPT_APPS,
    OPT_RUNLOG,
    OPT_SESSION,
    OPT_RESCAN,
    OPT_INTERVAL,
    OPT_THREADS,
    OPT_GPU_FIELDS
};
enum { OPT_JOB = 340 }; /* --job */

/* dmon's own text starts with '#' or blanks; runmon's dmon.csv with a "ts," header. */
static enum rm_input_kind dmon_kind(const char *path)
{
    FILE *f = fopen(path, "r");
    int c = ' ';
    if (f) {
        while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
            ;
        fclose(f);
    }
    return c == '#' || c == EOF ? RM_INPUT_DMON_TEXT : RM_INPUT_DMON_CSV;
}

static int guess_kind(const char *path, enum rm_input_kind *kind)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 6 && !strcmp(b + n - 6, ".jsonl")) return 1; /* run log */
    if (strstr(b, "dmon"))
        *kind = dmon_kind(path);
    else if (!strncmp(b, "cpu", 3))
        *kind = RM_INPUT_CPU_CSV;
    else if (!strncmp(b, "proc", 4))
        *kind = RM_INPUT_PROC_CSV;
    else if (!strncmp(b, "apps", 4))
        *kind = RM_INPUT_APPS_CSV;
    else
        *kind = RM_INPUT_GPU_CSV;
    return 0;
}

static int write_out(const char *file, const char *format, const json_t *o)
{
    FILE *out = stdout;
    char tmp[4096];
    if (file) {
        if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", file, (long)getpid()) >= sizeof tmp) {
            fprintf(stderr, "runmon summary: %s: path too long\n", file);
            return 1;
        }
        out = fopen(tmp, "w");
        if (!out) {
            fprintf(stderr, "runmon summary: %s: %s\n", tmp, strerror(errno));
            return 1;
        }
    }
    int rc = 0;
    if (!strcmp(format, "json"))
        rc = rm_summary_print_json(out, o);
    else if (!strcmp(format, "csv"))
        rm_summary_print_csv(out, o);
    else
        rm_summary_print_text(out, o);
    if (fflush(out) || ferror(out)) rc = -1;
    if (file) {
        if (fsync(fileno(out))) rc = -1;
        if (fclose(out)) rc = -1;
        if (rc == 0 && rename(tmp, file)) rc = -1;
        if (rc) {
            fprintf(stderr, "runmon summary: writing %s: %s\n", file, strerror(errno));
            unlink(tmp);
        }
    }
    return rc ? 1 : 0;
}

/* Several PATHs: one summary each, plus combined totals per host. */
static json_t *combine(json_t *list)
{
    json_t *o = json_object(), *hosts = json_array();
    double energy = 0, peak = 0;
    json_int_t gpus = 0;
    bool has_e = false, has_p = false;
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s)
    {
        json_t *t = json_object_get(s, "totals");
        json_t *e = json_object_get(t, "energy_wh"), *p = json_object_get(s, "peak_vram_mb");
        json_t *h = json_object_get(json_object_get(s, "session"), "host");
        json_array_append_new(
            hosts, json_pack("{s:O,s:O,s:O,s:O,s:O}", "host", h ? h : json_null(), "path",
                             json_object_get(s, "path") ? json_object_get(s, "path") : json_null(),
                             "gpu_count", json_object_get(t, "gpu_count"), "energy_wh",
                             e ? e : json_null(), "peak_vram_mb", p ? p : json_null()));
        gpus += json_integer_value(json_object_get(t, "gpu_count"));
        if (json_is_number(e)) energy += json_number_value(e), has_e = true;
        if (json_is_number(p) && json_number_value(p) > peak)
            peak = json_number_value(p), has_p = true;
    }
    json_object_set_new(o, "format", json_string("runmon-summary-set"));
    json_object_set_new(o, "schema_version", json_integer(RM_SUMMARY_SCHEMA_VERSION));
    json_object_set_new(o, "summaries", json_incref(list));
    json_object_set_new(o, "hosts", hosts);
    json_object_set_new(o, "totals",
                        json_pack("{s:I,s:o,s:o}", "gpu_count", gpus, "energy_wh",
                                  has_e ? json_real(energy) : json_null(), "peak_vram_mb",
                                  has_p ? json_real(peak) : json_null()));
    return o;
}

/* What the command line asked for. */
struct summary_args {
    struct rm_summary_opts opts;
    const char *format, *outfile, *session_id;
    const char *job_id; /* --job ID: every session of that batch job in the sinks */
    int rescan;
    struct {
        int kind; /* enum rm_input_kind, or -1 for a run log */
        const char *path;
    } files[64];
    size_t nfiles;
    char **paths; /* the PATH operands */
    int npaths;
};

/* One option (getopt_long's c). Returns -1 to go on, else the exit status. */
static int take_option(struct summary_args *a, int c, char **argv)
{
    int kind = -2;
    switch (c) {
    case 'h':
        usage(stdout);
        return 0;
    case 'o':
        a->outfile = optarg;
        break;
    case OPT_FORMAT:
        a->format = optarg;
        if (strcmp(a->format, "text") && strcmp(a->format, "json") && strcmp(a->format, "csv")) {
            fprintf(stderr, "runmon summary: --format must be text, json or csv\n");
            return 2;
        }
        break;
    case OPT_PHASE:
        a->opts.phase_regex = optarg;
        break;
    case OPT_GPU:
        kind = RM_INPUT_GPU_CSV;
        break;
    case OPT_DMON:
        kind = dmon_kind(optarg);
        break;
    case OPT_CPU:
        kind = RM_INPUT_CPU_CSV;
        break;
    case OPT_PROC:
        kind = RM_INPUT_PROC_CSV;
        break;
    case OPT_APPS:
        kind = RM_INPUT_APPS_CSV;
        break;
    case OPT_RUNLOG:
        kind = -1;
        break;
    case OPT_SESSION:
        a->session_id = optarg;
        break;
    case OPT_JOB:
        a->job_id = optarg;
        break;
    case OPT_RESCAN:
        a->rescan = 1;
        break;
    case OPT_INTERVAL: {
        char *end;
        a->opts.interval_s = strtod(optarg, &end);
        if (*end || !(a->opts.interval_s > 0)) {
            fprintf(stderr, "runmon summary: --interval needs a positive number of seconds\n");
            return 2;
        }
        break;
    }
    case OPT_THREADS:
        a->opts.threads = atoi(optarg);
        break;
    case OPT_GPU_FIELDS:
        if (!optarg[0] || strlen(optarg) >= 4096) {
            fprintf(stderr, "runmon summary: --gpu-fields needs a comma-separated field list\n");
            return 2;
        }
        a->opts.gpu_fields = optarg;
        break;
    default:
        fprintf(stderr, "runmon summary: unknown or incomplete option '%s' (see --help)\n",
                argv[optind - 1]);
        return 2;
    }
    if (kind != -2) {
        if (a->nfiles == sizeof a->files / sizeof a->files[0]) {
            fprintf(stderr, "runmon summary: too many input files\n");
            return 2;
        }
        a->files[a->nfiles].kind = kind;
        a->files[a->nfiles++].path = optarg;
    }
    return -1;
}

/* Returns -1 to go on, else the exit status (0 after --help). */
static int parse_args(int argc, char **argv, struct summary_args *a)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"phase", required_argument, NULL, OPT_PHASE},
        {"gpu-csv", required_argument, NULL, OPT_GPU},
        {"dmon", required_argument, NULL, OPT_DMON},
        {"cpu-csv", required_argument, NULL, OPT_CPU},
        {"proc-csv", required_argument, NULL, OPT_PROC},
        {"apps-csv", required_argument, NULL, OPT_APPS},
        {"runlog", required_argument, NULL, OPT_RUNLOG},
        {"session", required_argument, NULL, OPT_SESSION},
        {"job", required_argument, NULL, OPT_JOB},
        {"rescan", no_argument, NULL, OPT_RESCAN},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"gpu-fields", required_argument, NULL, OPT_GPU_FIELDS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1)
        if ((rc = take_option(a, c, argv)) >= 0) return rc;
    a->paths = argv + optind;
    a->npaths = argc - optind;
    int nsinks = 0;
    for (int i = 0; i < a->npaths; i++)
        nsinks += rm_sink_is_sink_dir(a->paths[i]);
    if ((a->session_id || a->rescan || a->job_id) && nsinks == 0) {
        fprintf(stderr, "runmon summary: --session, --job and --rescan need a sink directory "
                        "(runmon record -o DIR)\n");
        return 2;
    }
    if (a->session_id && a->job_id) {
        fprintf(stderr, "runmon summary: --session and --job exclude each other\n");
        return 2;
    }
    if (a->npaths == 0 && a->nfiles == 0) {
        usage(stderr);
        return 2;
    }
    if (!a->format) a->format = !a->outfile && isatty(1) ? "text" : "json";
    return -1;
}

/* Explicit files, plus any PATH that is a plain file, make one summary (appended to list).
 * Returns 0 or the exit status. */
static int summarize_files(struct summary_args *a, json_t *list)
{
    for (int i = 0; i < a->npaths; i++) {
        struct stat st;
        if (stat(a->paths[i], &st) != 0) {
            complain(a->paths[i], strerror(errno));
            return 2;
        }
        if (S_ISDIR(st.st_mode)) continue;
        enum rm_input_kind k = RM_INPUT_GPU_CSV;
        int isrl = guess_kind(a->paths[i], &k);
        if (a->nfiles < sizeof a->files / sizeof a->files[0]) {
            a->files[a->nfiles].kind = isrl ? -1 : (int)k;
            a->files[a->nfiles++].path = a->paths[i];
        }
    }
    if (!a->nfiles) return 0;
    struct rm_summary *s = rm_summary_new(&a->opts);
    for (size_t i = 0; i < a->nfiles; i++) {
        if (access(a->files[i].path, R_OK) != 0) {
            complain(a->files[i].path, strerror(errno));
            rm_summary_free(s);
            return 2;
        }
        if (a->files[i].kind < 0)
            rm_summary_add_runlog(s, a->files[i].path);
        else
            rm_summary_add_file(s, (enum rm_input_kind)a->files[i].kind, a->files[i].path);
    }
    char err[1024] = "";
    json_t *result = NULL;
    int rc = rm_summary_build(s, &result, err, sizeof err);
    rm_summary_free(s);
    if (rc) {
        complain(err, NULL);
        return rc;
    }
    json_array_append_new(list, result);
    return 0;
}

/* --job ID: one summary per session of the job in the sink DIR (one recorder per node),
 * appended to list; *found counts them. Returns 0 or the exit status. */
static int summarize_job(const struct summary_args *a, const char *dir, json_t *list, int *found)
{
    json_t *ids = rm_sink_job_sessions(dir, a->job_id);
    if (!ids) {
        complain(dir, strerror(errno));
        return 2;
    }
    size_t i;
    json_t *id;
    int rc = 0;
    json_array_foreach(ids, i, id)
    {
        char err[1024] = "";
        json_t *result = NULL;
        rc = rm_sink_summary(dir, json_string_value(id), a->rescan, &a->opts, &result, err,
                             sizeof err);
        if (rc) {
            complain(err, NULL);
            break;
        }
        json_array_append_new(list, result);
        (*found)++;
    }
    json_decref(ids);
    return rc;
}

/* One summary per folder PATH (a session folder or a sink directory), appended to list.
 * Returns 0 or the exit status. */
static int summarize_dirs(const struct summary_args *a, json_t *list)
{
    char err[1024] = "";
    int found = 0;
    for (int i = 0; i < a->npaths; i++) {
        const char *dir = a->paths[i];
        struct stat st;
        json_t *result = NULL;
        int rc;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        if (a->job_id && rm_sink_is_sink_dir(dir)) {
            if ((rc = summarize_job(a, dir, list, &found)) != 0) return rc;
            continue;
        }
        if (rm_sink_is_sink_dir(dir)) {
            rc = rm_sink_summary(dir, a->session_id, a->rescan, &a->opts, &result, err, sizeof err);
            if (rc == 0) {
                fputs("runmon summary: ", stderr);
                rm_fput_safe(stderr, dir);
                fputs(": session ", stderr);
                rm_fput_safe(stderr, json_string_value(json_object_get(
                                         json_object_get(result, "sink"), "session_id")));
                fputc('\n', stderr);
            }
        } else {
            rc = rm_summary_session_dir(dir, &a->opts, &result, err, sizeof err);
        }
        if (rc) {
            complain(err, NULL);
            return rc;
        }
        json_array_append_new(list, result);
    }
    if (a->job_id && !found) {
        fputs("runmon summary: no session of job ", stderr);
        rm_fput_safe(stderr, a->job_id);
        fputs(" in the sink directories given\n", stderr);
        return 2;
    }
    return 0;
}

/* One summary as it is; several combined (json, text), or each in turn (csv). */
static int write_summaries(const struct summary_args *a, json_t *list)
{
    const char *format = a->format, *outfile = a->outfile;
    json_t *out;
    int rc = 0;
    if (json_array_size(list) == 1) {
        out = json_incref(json_array_get(list, 0));
        rc = write_out(outfile, format, out);
    } else {
        out = combine(list);
        if (strcmp(format, "csv")) {
            /* json: the set; text: each summary, then the per-host and totals rows. */
            rc = write_out(outfile, format, out);
        } else {
            /* csv: each summary in turn, to stdout or the file. */
            rc = 0;
            FILE *f = stdout;
            if (outfile && !(f = fopen(outfile, "w"))) {
                fprintf(stderr, "runmon summary: %s: %s\n", outfile, strerror(errno));
                rc = 1;
            }
            size_t i;
            json_t *one;
            json_array_foreach(list, i, one)
            {
                if (rc) break;
                rm_summary_print_csv(f, one);
            }
            if (f != stdout && f) fclose(f);
        }
    }
    json_decref(out);
    return rc;
}

int rm_cmd_summary(int argc, char **argv)
{
    struct summary_args a = {.opts = {.progress = true}};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    json_t *list = json_array();
    rc = summarize_files(&a, list);
    if (!rc) rc = summarize_dirs(&a, list);
    if (!rc) rc = write_summaries(&a, list);
    json_decref(list);
    return rc;
}
