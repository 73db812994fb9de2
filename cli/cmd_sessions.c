/* `runmon sessions DIR... [--format text|json|csv] [--summary] [--sweep NAME] [--sort FIELD]
 * [--phase PATH]... [--group-by PARAM[,PARAM...]] [--wide] [--device-vram] [--rebuild]`:
 * the options, --help, and the calls. Opening the sink runs recovery (dead recorders'
 * sessions become "interrupted"), and rebuilds a lost index, once per command; the listing is
 * written by sweep/sessions_out.h, the sweep table by sweep/sweep_out.h. */
#include "cli/cmd_sessions.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/termsafe.h"
#include "model/objective.h"
#include "sink/index.h"
#include "sink/sink.h"
#include "sweep/sessions_out.h"
#include "sweep/sessions_rows.h"
#include "sweep/sweep_judge.h"
#include "sweep/sweep_out.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: runmon sessions [DIR] [--format text|json|csv] [--sort FIELD] [--sweep NAME]\n"
            "                             [--rebuild] [--csv-safe]\n"
            "       runmon sessions --summary [DIR...] [--sweep NAME] [--phase PATH]...\n"
            "                             [--group-by PARAM[,PARAM...]] [--wide] [--device-vram]\n"
            "                             [--objective METRIC:min|max[:best]]... [--cost COST]\n"
            "                             [--target METRIC<=V|METRIC>=V]\n\n"
            "List the recording sessions of a sink directory (runmon record -o DIR): id,\n"
            "status, host, start, duration, command and bytes kept on disk. Without DIR: the\n"
            "current folder when it is a sink, else ./runmon (record's default sink).\n\n"
            "options:\n"
            "  --format text|json|csv  output format (default: text on a terminal, else json);\n"
            "                      json, and csv to a file or pipe, keep what sessions recorded\n"
            "                      exact; text, and csv on a terminal, escape control characters\n"
            "  --csv-safe          CSV for a spreadsheet (implies --format csv): a cell starting\n"
            "                      with = + - @, a tab or CR that is not a plain number (-1.5)\n"
            "                      gets a leading ' so it is never run as a formula\n"
            "  --summary           the sweep table: one row per run: its parameters (--param,\n"
            "                      runmon.params() in the run log, else the command-line\n"
            "                      arguments that differ between the runs), status, exit code,\n"
            "                      duration, GPU model, GPU utilization mean, workload peak\n"
            "                      VRAM (the GPUs' when no run knows the workload's), framework\n"
            "                      peak when logged, GPU energy with its error bar, the time\n"
            "                      of each phase every run has, command; the best of each\n"
            "                      figure marked '*' (energy: '=' on the runs tied for the\n"
            "                      best, their bars overlapping the best run's); '-' where a\n"
            "                      session has no summary.json. Several DIRs are one\n"
            "                      sweep (a HOST column when the runs come from several hosts)\n"
            "  --sweep NAME        only the runs of sweep NAME (runmon record --sweep)\n"
            "  --phase PATH        with --summary: a column for this phase's time (repeatable;\n"
            "                      default: the top-level phases every run has)\n"
            "  --group-by PARAM[,PARAM...]  with --summary: one row per value of PARAM (per\n"
            "                      combination of the values of several), each figure's\n"
            "                      mean and std over its runs (min and max in json and csv;\n"
            "                      energy's bar: the mean of the runs' lows and highs)\n"
            "  --wide              with --summary: cut nothing (text is fitted to $COLUMNS,\n"
            "                      else 100 columns: long values cut with an ellipsis, then\n"
            "                      columns left out, a note naming them; the listing too)\n"
            "  --device-vram       with --summary: the GPUs' peak VRAM (all processes) beside\n"
            "                      the workload's\n"
            "  --objective METRIC:min|max[:best]  with --summary: a column of the metric's last\n"
            "                      (or best) value per run (repeatable; default: the run logs'\n"
            "                      objective lines), '^' on the best, '*' on the Pareto front\n"
            "                      against the cost, '~' on it within its error bar\n"
            "  --cost duration|energy|vram|gpu_hours  with --summary: the front's cost\n"
            "                      (default energy)\n"
            "  --target METRIC<=V|METRIC>=V  with --summary: the time and energy each run took\n"
            "                      to reach it (its first metric line meeting it)\n"
            "  --sort FIELD        start (oldest first, the default), duration, util, vram,\n"
            "                      energy (largest first, '-' last) or status (by name)\n"
            "  --rebuild           rebuild the sink's index (index.jsonl, sink.json) from the\n"
            "                      session folders first, adopting stray segment files\n"
            "  -h, --help          this text\n\n"
            "exit status: 0 success, 2 a usage error or no sink there.\n");
}

int rm_cmd_sessions(int argc, char **argv)
{
    enum {
        OPT_FORMAT = 256,
        OPT_REBUILD,
        OPT_SUMMARY,
        OPT_SORT,
        OPT_SWEEP,
        OPT_PHASE,
        OPT_GROUP,
        OPT_WIDE,
        OPT_DEVICE_VRAM,
        OPT_CSV_SAFE
    };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"csv-safe", no_argument, NULL, OPT_CSV_SAFE},
        {"sweep", required_argument, NULL, OPT_SWEEP},
        {"phase", required_argument, NULL, OPT_PHASE},
        {"group-by", required_argument, NULL, OPT_GROUP},
        {"wide", no_argument, NULL, OPT_WIDE},
        {"device-vram", no_argument, NULL, OPT_DEVICE_VRAM},
        {"summary", no_argument, NULL, OPT_SUMMARY},
        {"sort", required_argument, NULL, OPT_SORT},
        {"objective", required_argument, NULL, RM_JUDGE_OBJECTIVE},
        {"cost", required_argument, NULL, RM_JUDGE_COST},
        {"target", required_argument, NULL, RM_JUDGE_TARGET},
        {"rebuild", no_argument, NULL, OPT_REBUILD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *sort_by = NULL, *sweep = NULL, *group_by = NULL;
    const char *phases[24]; /* beside the other figures, as many as the table has room for */
    size_t n_phases = 0;
    const char *objectives[RM_OBJECTIVES_MAX];
    struct rm_judge_opts judge = {.objectives = objectives};
    int rebuild = 0, summary = 0, wide = 0, device_vram = 0, csv_safe = 0, c;
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
        case OPT_SWEEP:
            sweep = optarg;
            break;
        case OPT_PHASE:
            if (n_phases == sizeof phases / sizeof *phases) {
                fputs("runmon sessions: at most 24 --phase\n", stderr);
                return 2;
            }
            phases[n_phases++] = optarg;
            break;
        case RM_JUDGE_OBJECTIVE:
        case RM_JUDGE_COST:
        case RM_JUDGE_TARGET:
            if (rm_judge_opt(&judge, c, optarg, "sessions")) return 2;
            break;
        case OPT_GROUP:
            group_by = optarg;
            break;
        case OPT_WIDE:
            wide = 1;
            break;
        case OPT_DEVICE_VRAM:
            device_vram = 1;
            break;
        case OPT_CSV_SAFE:
            csv_safe = 1;
            break;
        default:
            fprintf(stderr, "runmon sessions: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (argc - optind > 1 && !summary) {
        fputs("runmon sessions: several sinks need --summary\n", stderr);
        usage(stderr);
        return 2;
    }
    if (rm_judge_opts_done(&judge, "sessions")) return 2;
    if (!summary && (judge.n_objectives || judge.cost || judge.target)) {
        fputs("runmon sessions: --objective, --cost and --target need --summary\n", stderr);
        return 2;
    }
    if (!summary && (n_phases || group_by || wide || device_vram)) {
        fputs("runmon sessions: --phase, --group-by, --wide and --device-vram need --summary\n",
              stderr);
        return 2;
    }
    if (csv_safe && format && strcmp(format, "csv")) {
        fputs("runmon sessions: --csv-safe writes CSV; it goes with --format csv only\n", stderr);
        return 2;
    }
    if (csv_safe) format = "csv";
    if (!format) format = isatty(1) ? "text" : "json";
    char err[1024];
    /* No DIR: the sink of the current folder, else ./runmon (rm_default_sink_path). */
    const char *found[1];
    const char *const *sinks = (const char *const *)argv + optind;
    size_t n_sinks = (size_t)(argc - optind);
    if (n_sinks == 0) {
        found[0] = rm_default_sink_path(0, err, sizeof err);
        if (!found[0]) {
            fprintf(stderr, "runmon sessions: %s\n", err);
            return 2;
        }
        sinks = found;
        n_sinks = 1;
    }
    if (rm_sinks_open(sinks, n_sinks, rebuild, err, sizeof err) < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    const char *cols = getenv("COLUMNS");
    int columns = cols && atoi(cols) > 0 ? atoi(cols) : 100;
    enum rm_sessions_format fmt = !strcmp(format, "csv")    ? RM_SESSIONS_CSV
                                  : !strcmp(format, "json") ? RM_SESSIONS_JSON
                                                            : RM_SESSIONS_TEXT;
    /* CSV on a terminal is read by a person there: escaped as the text output is. */
    int csv_escape = (isatty(STDOUT_FILENO) ? RM_CSV_TERM : 0) | (csv_safe ? RM_CSV_SAFE : 0);
    int rc;
    if (summary) {
        struct rm_sweep_opts o = {
            .sinks = sinks,
            .n_sinks = n_sinks,
            .format = fmt,
            .sort_by = sort_by,
            .csv_escape = csv_escape,
            .sweep_name = sweep,
            .phases = phases,
            .n_phases = n_phases,
            .judge = judge,
            .group_by = group_by,
            .wide = wide,
            .device_vram = device_vram,
            .columns = columns,
        };
        rc = rm_sweep_table_print(stdout, &o, err, sizeof err);
    } else {
        struct rm_sessions_opts o = {
            .dir = sinks[0],
            .format = fmt,
            .sort_by = sort_by,
            .csv_escape = csv_escape,
            .sweep_name = sweep,
            .columns = columns,
        };
        rc = rm_sessions_print(stdout, &o, err, sizeof err);
    }
    if (rc < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    return 0;
}
