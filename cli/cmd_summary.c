/* `runmon summary`: summarize session folders or bare files. */
#include "cli/cmd_summary.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "model/figures.h"
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
            "Without PATH: the current folder when it is a sink or a session folder, else\n"
            "./runmon (record's default sink).\n"
            "Several sink directories (the nodes of one job) give one summary each plus totals\n"
            "per host; several sessions (runmon summary SINK/2026*) one section each, with no\n"
            "totals across them. Files of a sink's root (sink.json, index.jsonl) are skipped.\n\n"
            "options:\n"
            "  --format text|json|csv  output format (default: text on a terminal, else json);\n"
            "                          json, and csv to a file or pipe, keep names exact; text,\n"
            "                          and csv on a terminal, escape control characters\n"
            "  --csv-safe              CSV for a spreadsheet (implies --format csv): a cell\n"
            "                          starting with = + - @, a tab or CR that is not a plain\n"
            "                          number (-1.5) gets a leading ' so it is never run as a\n"
            "                          formula (changes those cells' bytes)\n"
            "  -o FILE                 write there instead of stdout: a file atomically, a\n"
            "                          device or FIFO (/dev/null) in place\n"
            "  --phase REGEX           only phases whose path matches (PCRE2)\n");
    for (int k = 0; k < RM_STREAM_COUNT; k++) { /* one --OPTION FILE per stream */
        char opt[64];
        snprintf(opt, sizeof opt, "--%s FILE", rm_stream_defs[k].option);
        fprintf(out, "  %-24s%s\n", opt, rm_stream_defs[k].option_help);
    }
    fprintf(out,
            "  --runlog FILE           a runlog.jsonl with phases and monitor events\n"
            "  --gpu-fields LIST       the --query-gpu fields of a --gpu-csv without header,\n"
            "                          comma-separated (default: session.json's gpu_fields,\n"
            "                          else the legacy list; see runmon(1))\n"
            "  --interval SEC          sampling interval for gap detection (default: from\n"
            "                          session.json, else the median sample spacing); dmon\n"
            "                          files use it rounded to whole seconds, at least 1\n"
            "  --threads N             files, and chunks of a large GPU file, scanned in\n"
            "                          parallel (default: CPU count)\n"
            "  --job ID                every session of SLURM job ID in the sink directories\n"
            "                          (session.json's job.job_id; one recorder per node):\n"
            "                          one summary each, then per host and in total\n"
            "  --session ID            in a sink directory (runmon record -o DIR): that session\n"
            "                          (default: the newest completed one, else the newest;\n"
            "                          latest: where DIR/latest points; or any unique\n"
            "                          end of an id, as a listing cut to fit shows it)\n"
            "  --rescan                read sealed segments again instead of using the\n"
            "                          aggregates the sink keeps (state.json)\n"
            "  -h, --help              this text\n\n"
            "exit status: 0 success, 1 a write failure, 2 a usage error or unusable input\n"
            "(missing path, a file without data).\n");
}

enum {
    OPT_FORMAT = 256,
    OPT_PHASE,
    OPT_RUNLOG,
    OPT_SESSION,
    OPT_RESCAN,
    OPT_INTERVAL,
    OPT_THREADS,
    OPT_GPU_FIELDS,
    OPT_STREAM = 512 /* + a stream (model/streams.h): its --OPTION FILE */
};
enum { OPT_JOB = 340, OPT_CSV_SAFE }; /* --job, --csv-safe */

/* The kind of a file of stream. Where its kinds are told apart by the first non-blank
 * character (dmon's own text starts with '#', runmon's dmon.csv with a "ts," header), that is
 * read; other files are not opened here (a pipe keeps its bytes). */
static enum rm_input_kind file_kind(int stream, const char *path)
{
    int c = ' ';
    FILE *f = rm_stream_sniffed(stream) ? fopen(path, "r") : NULL;
    if (f) {
        while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
            ;
        fclose(f);
    }
    return rm_input_of_stream(stream, c);
}

static int guess_kind(const char *path, enum rm_input_kind *kind)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 6 && !strcmp(b + n - 6, ".jsonl")) return 1; /* run log */
    *kind = file_kind(rm_stream_guess(b), path);
    return 0;
}

/* Where a summary goes: stdout, a special file written in place, or a temporary file that
 * replaces file once written whole. */
struct out_file {
    const char *file;
    FILE *out;
    char tmp[4096];
    int in_place;
};

static int open_out(struct out_file *f, const char *file)
{
    FILE *out = stdout;
    char *tmp = f->tmp;
    f->file = file;
    int in_place = f->in_place = file && rm_path_is_special(file);
    if (in_place) {
        /* /dev/null, a terminal, a FIFO: written in place, never replaced by a file. */
        out = fopen(file, "w");
        if (!out) {
            fprintf(stderr, "runmon summary: %s: %s\n", file, strerror(errno));
            return 1;
        }
    } else if (file) {
        if ((size_t)snprintf(tmp, sizeof f->tmp, "%s.tmp.%ld", file, (long)getpid()) >=
            sizeof f->tmp) {
            fprintf(stderr, "runmon summary: %s: path too long\n", file);
            return 1;
        }
        out = fopen(tmp, "w");
        if (!out) {
            fprintf(stderr, "runmon summary: %s: %s\n", tmp, strerror(errno));
            return 1;
        }
    }
    f->out = out;
    return 0;
}

/* Finishes what open_out began: rc nonzero (a write failed) or failed (nothing worth
 * keeping) leaves file as it was. Returns 0 or 1. */
static int close_out(struct out_file *f, int rc, bool failed)
{
    FILE *out = f->out;
    const char *file = f->file, *tmp = f->tmp;
    int in_place = f->in_place;
    if (fflush(out) || ferror(out)) rc = -1;
    if (failed) {
        if (file) fclose(out);
        if (file && !in_place) unlink(tmp);
        return rc ? 1 : 0;
    }
    if (in_place) {
        if (fclose(out)) rc = -1;
        if (rc) fprintf(stderr, "runmon summary: writing %s: %s\n", file, strerror(errno));
    } else if (file) {
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

static int write_out(const char *file, const char *format, bool csv_safe, const json_t *o)
{
    struct out_file f;
    if (open_out(&f, file)) return 1;
    int rc = 0;
    if (!strcmp(format, "json"))
        rc = rm_summary_print_json(f.out, o);
    else if (!strcmp(format, "csv"))
        rm_summary_print_csv(f.out, o, csv_safe);
    else
        rm_summary_print_text(f.out, o);
    return close_out(&f, rc, false);
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
        json_t *e = json_object_get(t, RM_FIG_KEY(ENERGY)),
               *p = json_object_get(s, RM_RUN_KEY(PEAK_VRAM));
        json_t *h = json_object_get(json_object_get(s, "session"), "host");
        json_array_append_new(
            hosts, json_pack("{s:O,s:O,s:O,s:O,s:O}", "host", h ? h : json_null(), "path",
                             json_object_get(s, "path") ? json_object_get(s, "path") : json_null(),
                             "gpu_count", json_object_get(t, "gpu_count"), RM_FIG_KEY(ENERGY),
                             e ? e : json_null(), RM_RUN_KEY(PEAK_VRAM), p ? p : json_null()));
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
                        json_pack("{s:I,s:o,s:o}", "gpu_count", gpus, RM_FIG_KEY(ENERGY),
                                  has_e ? json_real(energy) : json_null(), RM_RUN_KEY(PEAK_VRAM),
                                  has_p ? json_real(peak) : json_null()));
    return o;
}

/* Several sessions (not only sink directories): one summary each, and no totals across them
 * (they are separate runs, maybe of the same GPUs). */
static json_t *sessions_set(json_t *list)
{
    return json_pack("{s:s,s:i,s:O}", "format", "runmon-summary-sessions", "schema_version",
                     RM_SUMMARY_SCHEMA_VERSION, "sessions", list);
}

/* True when every summary of list is a sink directory's (a "sink" section): the nodes of one
 * job, whose totals per host mean something. */
static bool all_from_sinks(const json_t *list)
{
    size_t i;
    const json_t *s;
    json_array_foreach(list, i, s)
    {
        if (!json_object_get(s, "sink")) return false;
    }
    return true;
}

/* What the command line asked for. */
struct summary_args {
    struct rm_summary_opts opts;
    const char *format, *outfile, *session_id;
    const char *job_id; /* --job ID: every session of that batch job in the sinks */
    int rescan;
    bool csv_safe; /* --csv-safe: CSV for a spreadsheet (report/output.h) */
    struct {
        int kind; /* enum rm_input_kind, or -1 for a run log */
        const char *path;
    } files[64];
    size_t nfiles;
    char **paths; /* the PATH operands */
    int npaths;
    char **kept; /* paths less a sink root's files and repeats (freed by the caller) */
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
    case OPT_RUNLOG:
        kind = -1;
        break;
    case OPT_SESSION:
        a->session_id = optarg;
        break;
    case OPT_JOB:
        a->job_id = optarg;
        break;
    case OPT_CSV_SAFE:
        a->csv_safe = true;
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
        if (c >= OPT_STREAM && c < OPT_STREAM + RM_STREAM_COUNT) {
            kind = (int)file_kind(c - OPT_STREAM, optarg);
            break;
        }
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
    static const struct option fixed[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"phase", required_argument, NULL, OPT_PHASE},
        {"runlog", required_argument, NULL, OPT_RUNLOG},
        {"session", required_argument, NULL, OPT_SESSION},
        {"job", required_argument, NULL, OPT_JOB},
        {"csv-safe", no_argument, NULL, OPT_CSV_SAFE},
        {"rescan", no_argument, NULL, OPT_RESCAN},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"gpu-fields", required_argument, NULL, OPT_GPU_FIELDS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct option longopts[RM_STREAM_COUNT + sizeof fixed / sizeof fixed[0]];
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        longopts[k] =
            (struct option){rm_stream_defs[k].option, required_argument, NULL, OPT_STREAM + k};
    memcpy(longopts + RM_STREAM_COUNT, fixed, sizeof fixed);
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1)
        if ((rc = take_option(a, c, argv)) >= 0) return rc;
    a->paths = argv + optind;
    a->npaths = argc - optind;
    if (a->npaths == 0 && a->nfiles == 0) {
        static char *def[1];
        char err[512];
        if (!(def[0] = (char *)rm_default_sink_path(1, err, sizeof err))) {
            fprintf(stderr, "runmon summary: %s\n", err);
            return 2;
        }
        a->paths = def;
        a->npaths = 1;
    }
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
    if (a->csv_safe && a->format && strcmp(a->format, "csv")) {
        fprintf(stderr, "runmon summary: --csv-safe writes CSV; it goes with --format csv only\n");
        return 2;
    }
    if (a->csv_safe) a->format = "csv";
    if (!a->format) a->format = !a->outfile && isatty(1) ? "text" : "json";
    return -1;
}

/* True when path is a file in the root of a sink: its folder holds the sink's index
 * (index.jsonl, sink.json, or a 0.1.0 manifest.json). A folder that merely holds session
 * folders (fixtures, a copy) is no sink root: a data file there is read. */
static bool in_sink_root(const char *path)
{
    static const char *const marks[] = {"index.jsonl", "sink.json", "manifest.json"};
    const char *slash = strrchr(path, '/');
    int dlen = !slash ? 1 : slash == path ? 1 : (int)(slash - path);
    const char *dir = !slash ? "." : slash == path ? "/" : path;
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof p, "%.*s/%s", dlen, dir, marks[i]) < sizeof p &&
            access(p, F_OK) == 0)
            return true;
    }
    return false;
}

/* `runmon summary SINK/<glob>`: the files of a sink's root (sink.json, index.jsonl, lock and temp
 * files) are no data and are skipped (said on stderr); a folder met twice (SINK/latest and the
 * session it points to) is read once. Returns 0, or 2 when nothing is left. */
static int drop_sink_files(struct summary_args *a)
{
    a->kept = calloc((size_t)a->npaths + 1, sizeof *a->kept);
    char **real = calloc((size_t)a->npaths + 1, sizeof *real); /* the kept folders' */
    if (!a->kept || !real) {
        free(real);
        fprintf(stderr, "runmon summary: out of memory\n");
        return 2;
    }
    int n = 0, nreal = 0, skipped = 0;
    for (int i = 0; i < a->npaths; i++) {
        const char *p = a->paths[i];
        struct stat st;
        if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (in_sink_root(p)) {
                fputs(skipped++ ? ", " : "runmon summary: skipped ", stderr);
                rm_fput_safe(stderr, p);
                continue;
            }
        }
        char *r = stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? realpath(p, NULL) : NULL;
        bool seen = false;
        for (int k = 0; r && k < nreal && !seen; k++)
            seen = !strcmp(real[k], r);
        if (seen) {
            free(r);
            continue;
        }
        if (r) real[nreal++] = r;
        a->kept[n++] = a->paths[i];
    }
    for (int k = 0; k < nreal; k++)
        free(real[k]);
    free(real);
    if (skipped) fputs(" (files of a sink's root, not sessions)\n", stderr);
    a->paths = a->kept;
    a->npaths = n;
    if (n == 0 && a->nfiles == 0) {
        fprintf(stderr, "runmon summary: nothing to summarize\n");
        return 2;
    }
    return 0;
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
        enum rm_input_kind k = 0;
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
            rm_summary_add_named_file(s, (enum rm_input_kind)a->files[i].kind, a->files[i].path);
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

/* One summary as it is; several: sink directories combined with totals per host, sessions
 * one section each (json, text); each in turn (csv). */
static int write_summaries(const struct summary_args *a, json_t *list)
{
    const char *format = a->format, *outfile = a->outfile;
    json_t *out;
    int rc = 0;
    if (json_array_size(list) == 1) {
        out = json_incref(json_array_get(list, 0));
        rc = write_out(outfile, format, a->csv_safe, out);
    } else {
        out = all_from_sinks(list) ? combine(list) : sessions_set(list);
        if (strcmp(format, "csv")) {
            /* json: the set; text: each summary, then (sinks) the per-host and totals rows. */
            rc = write_out(outfile, format, a->csv_safe, out);
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
                rm_summary_print_csv(f, one, a->csv_safe);
            }
            if (f != stdout && f) fclose(f);
        }
    }
    json_decref(out);
    return rc;
}

/* One session folder: written as it is built, the phase rows one at a time (JSON, text and
 * CSV: report/output.h), so 10,000 phase rows never sit in memory as JSON. The bytes are
 * those write_summaries would write. */
static bool streams(const struct summary_args *a)
{
    struct stat st;
    return a->npaths == 1 && a->nfiles == 0 && stat(a->paths[0], &st) == 0 && S_ISDIR(st.st_mode) &&
           !rm_sink_is_sink_dir(a->paths[0]);
}

static int stream_session(struct summary_args *a)
{
    struct out_file f;
    if (open_out(&f, a->outfile)) return 1;
    bool json = !strcmp(a->format, "json");
    struct rm_json_stream js = {.out = f.out};
    /* The first line's path: rm_summary_session_dir sets "path" to it after the build. */
    struct rm_text_stream ts = {.out = f.out,
                                .csv = !strcmp(a->format, "csv"),
                                .csv_safe = a->csv_safe,
                                .path = a->paths[0]};
    struct rm_summary_opts opts = a->opts;
    opts.phase_row = json ? rm_summary_stream_row : rm_summary_text_row;
    opts.phase_row_ctx = json ? (void *)&js : (void *)&ts;
    char err[1024] = "";
    json_t *result = NULL;
    int rc = rm_summary_session_dir(a->paths[0], &opts, &result, err, sizeof err);
    if (rc) {
        if (!json) rm_summary_text_end(&ts, NULL); /* frees what it held */
        close_out(&f, 0, true);
        complain(err, NULL);
        return rc;
    }
    int wrc = json ? rm_summary_stream_end(&js, result) : rm_summary_text_end(&ts, result);
    json_decref(result);
    return close_out(&f, wrc, false);
}

int rm_cmd_summary(int argc, char **argv)
{
    struct summary_args a = {.opts = {.progress = true}};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    if (drop_sink_files(&a)) {
        free(a.kept);
        return 2;
    }
    json_t *list = json_array();
    rc = summarize_files(&a, list);
    if (!rc && streams(&a)) {
        rc = stream_session(&a);
        json_decref(list);
        free(a.kept);
        return rc;
    }
    if (!rc) rc = summarize_dirs(&a, list);
    if (!rc) rc = write_summaries(&a, list);
    json_decref(list);
    free(a.kept);
    return rc;
}
