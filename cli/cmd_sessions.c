/* `runmon sessions DIR [--format text|json|csv] [--summary] [--sort FIELD] [--rebuild]`:
 * the options, --help, and the calls. Opening the sink runs recovery (dead recorders'
 * sessions become "interrupted"), and rebuilds a lost index; the listing and the sweep table
 * are written by report/sessions_out.h. */
#include "cli/cmd_sessions.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/termsafe.h"
#include "report/sessions_out.h"
#include "report/sessions_rows.h"
#include "sink/index.h"
#include "sink/sink.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: runmon sessions [DIR] [--format text|json|csv] [--summary] [--sort FIELD]\n"
            "                             [--rebuild]\n\n"
            "List the recording sessions of a sink directory (runmon record -o DIR): id,\n"
            "status, host, start, duration, command and bytes kept on disk. Without DIR: the\n"
            "current folder when it is a sink, else ./runmon (record's default sink).\n\n"
            "options:\n"
            "  --format text|json|csv  output format (default: text on a terminal, else json);\n"
            "                      json, and csv to a file or pipe, keep what sessions recorded\n"
            "                      exact; text, and csv on a terminal, escape control characters\n"
            "  --summary           a sweep table: one row per session with the figures of its\n"
            "                      summary.json: status, duration, exit code, GPU utilization\n"
            "                      mean, peak VRAM (the workload's own when known, marked w),\n"
            "                      GPU energy, command; '-' where a session has no summary.json\n"
            "                      (running, interrupted). Human units in text, full values in\n"
            "                      json and csv\n"
            "  --sort FIELD        start (oldest first, the default), duration, util, vram,\n"
            "                      energy (largest first, '-' last) or status (by name)\n"
            "  --rebuild           rebuild the sink's index (index.jsonl, sink.json) from the\n"
            "                      session folders first, adopting stray segment files\n"
            "  -h, --help          this text\n\n"
            "exit status: 0 success, 2 a usage error or no sink there.\n");
}

int rm_cmd_sessions(int argc, char **argv)
{
    enum { OPT_FORMAT = 256, OPT_REBUILD, OPT_SUMMARY, OPT_SORT };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"sort", required_argument, NULL, OPT_SORT},
        {"rebuild", no_argument, NULL, OPT_REBUILD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *sort_by = NULL;
    int rebuild = 0, summary = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_FORMAT:
            format = optarg;
            if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv")) {
                fprintf(stderr, "runmon sessions: --format must be text, json or csv\n");
                return 2;
            }
            break;
        case OPT_SUMMARY:
            summary = 1;
            break;
        case OPT_SORT:
            sort_by = rm_session_sort_field(optarg);
            if (!sort_by) {
                fputs("runmon sessions: unknown --sort field '", stderr);
                rm_fput_safe(stderr, optarg);
                fputs("'; one of: start, duration, util, vram, energy, status\n", stderr);
                return 2;
            }
            break;
        case OPT_REBUILD:
            rebuild = 1;
            break;
        default:
            fprintf(stderr, "runmon sessions: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind > 1) {
        usage(stderr);
        return 2;
    }
    char err[1024];
    const char *dir = optind < argc ? argv[optind] : rm_default_sink_path(0, err, sizeof err);
    if (!dir) {
        fprintf(stderr, "runmon sessions: %s\n", err);
        return 2;
    }
    if (!format) format = isatty(1) ? "text" : "json";
    int orc = rm_sink_open_index(dir, rebuild, NULL, err, sizeof err);
    if (orc < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    if (orc == 1) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, dir);
        fputs(": not a runmon sink (no index.jsonl, no sessions)\n", stderr);
        return 2;
    }
    struct rm_sessions_opts o = {
        .dir = dir,
        .format = !strcmp(format, "csv")    ? RM_SESSIONS_CSV
                  : !strcmp(format, "json") ? RM_SESSIONS_JSON
                                            : RM_SESSIONS_TEXT,
        .sweep = summary,
        .sort_by = sort_by,
        /* CSV on a terminal is read by a person there: escaped as the text output is. */
        .csv_escape = isatty(STDOUT_FILENO),
    };
    if (rm_sessions_print(stdout, &o, err, sizeof err) < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    return 0;
}
