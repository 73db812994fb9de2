/* `runmon report`: write the HTML dashboard of a recorded session. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "cli/cmd_report_sweep.h"
#include "model/objective.h"
#include "report/report.h"
#include "sink/sink.h"
#include "sweep/sweep_judge.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: runmon report [PATH] [--session ID] [-o FILE]\n"
        "       runmon report SESSION SESSION... [-o FILE]\n"
        "       runmon report --sweep NAME [SINK...] [-o FILE]\n"
        "                     [--objective METRIC:min|max[:best]]... [--cost COST]\n"
        "                     [--target METRIC<=V|METRIC>=V]\n\n"
        "Write a self-contained HTML report of a recorded session: timelines of GPU\n"
        "utilization, VRAM, power and temperature, host CPU and memory and the command's\n"
        "RSS on one time axis, with the run's phases, alerts and collector outages marked,\n"
        "plus the summary's cards and per-GPU and per-phase tables. The page needs no\n"
        "network and opens in any browser.\n\n"
        "PATH is a session folder, or a sink directory holding sessions: then --session ID\n"
        "picks PATH/ID, else PATH/latest (the newest session). Without PATH: the\n"
        "current folder when it is a sink or a session folder, else ./runmon.\n\n"
        "Several runs on one page: with two or more PATHs (session folders, or sinks for\n"
        "their latest session), or with --sweep NAME (the sessions of that sweep in the\n"
        "SINKs, found as PATH is without one), the page compares them: the sweep table (sorted by "
        "a click on\n"
        "a column), bars per run (peak VRAM against the GPU's total, energy, duration, mean\n"
        "utilization), the runs' VRAM, utilization and power on one time axis from each\n"
        "run's start (a legend naming each run by its parameters; a click hides a run),\n"
        "and each phase's time, VRAM peak and energy per run. Up to 50 runs are drawn, in\n"
        "10 colours x 5 dash styles; more get the table and the bars only. Parameters are\n"
        "those recorded (--param), else the command-line arguments that differ.\n\n"
        "options:\n"
        "  --session ID   the session to report in a sink directory (latest: where\n"
        "                 PATH/latest points; or any unique end of an id, as a\n"
        "                 listing cut to fit shows it)\n"
        "  --sweep NAME   compare the runs of sweep NAME in the SINKs given (default: as PATH)\n"
        "  --objective METRIC:min|max[:best]  comparing runs: judge them by the metric's last\n"
        "                 (or best) value (repeatable; default: the run logs' objective lines)\n"
        "  --cost duration|energy|vram|gpu_hours  comparing runs: the Pareto front's cost\n"
        "                 (default energy)\n"
        "  --target METRIC<=V|METRIC>=V  comparing runs: the time and energy each run took to\n"
        "                 reach it\n"
        "  -o FILE        where to write (default: <session folder>/report.html; comparing\n"
        "                 runs: ./sweep.html); written through a temporary file renamed\n"
        "                 into place\n"
        "  -h, --help     this text\n\n"
        "The path written is printed on stdout.\n"
        "exit status: 0 success, 1 the report cannot be written, 2 a usage error, a bad\n"
        "path or a session without data.\n");
}

enum { OPT_SESSION = 256, OPT_SWEEP };

int rm_cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"session", required_argument, NULL, OPT_SESSION},
        {"sweep", required_argument, NULL, OPT_SWEEP},
        {"objective", required_argument, NULL, RM_JUDGE_OBJECTIVE},
        {"cost", required_argument, NULL, RM_JUDGE_COST},
        {"target", required_argument, NULL, RM_JUDGE_TARGET},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outfile = NULL, *session_id = NULL, *sweep = NULL;
    const char *objectives[RM_OBJECTIVES_MAX];
    struct rm_judge_opts judge = {.objectives = objectives};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case 'o':
            outfile = optarg;
            break;
        case OPT_SESSION:
            session_id = optarg;
            break;
        case OPT_SWEEP:
            sweep = optarg;
            break;
        case RM_JUDGE_OBJECTIVE:
        case RM_JUDGE_COST:
        case RM_JUDGE_TARGET:
            if (rm_judge_opt(&judge, c, optarg, "report")) return 2;
            break;
        default:
            if (optopt && optopt < 256)
                fprintf(stderr, "runmon report: bad option -%c (see 'runmon report --help')\n",
                        optopt);
            else
                fprintf(stderr, "runmon report: bad option '%s' (see 'runmon report --help')\n",
                        argv[optind - 1]);
            return 2;
        }
    }
    if (outfile && !*outfile) {
        fprintf(stderr, "runmon report: -o needs a file name\n");
        return 2;
    }
    if (rm_judge_opts_done(&judge, "report")) return 2;
    if (!sweep && argc - optind <= 1 && (judge.n_objectives || judge.cost || judge.target)) {
        fputs("runmon report: --objective, --cost and --target compare runs: with --sweep or "
              "several PATHs\n",
              stderr);
        return 2;
    }
    if (sweep || argc - optind > 1) {
        if (session_id) {
            fprintf(stderr, "runmon report: --session picks one session: not with --sweep or "
                            "several PATHs\n");
            return 2;
        }
        if (sweep && !*sweep) {
            fprintf(stderr, "runmon report: --sweep needs a name\n");
            return 2;
        }
        if (optind == argc) { /* --sweep without SINK: the sink found as for one session */
            char serr[1024];
            const char *found = rm_default_sink_path(0, serr, sizeof serr);
            if (!found) {
                fputs("runmon report: ", stderr);
                rm_fput_safe(stderr, serr);
                fputc('\n', stderr);
                return 2;
            }
            char *one[] = {(char *)found};
            return rm_report_sweep_main(sweep, one, 1, outfile, &judge);
        }
        return rm_report_sweep_main(sweep, argv + optind, (size_t)(argc - optind), outfile, &judge);
    }
    char dir[4096], err[1024] = "", def[4200];
    const char *path = optind < argc ? argv[optind] : rm_default_sink_path(1, err, sizeof err);
    if (!path) {
        fputs("runmon report: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    int rc = rm_select_session("report", path, session_id, dir, sizeof dir, err, sizeof err);
    if (rc) {
        fputs("runmon report: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return rc;
    }
    char *html = NULL;
    size_t len = 0;
    rc = rm_report_build(dir, NULL, &html, &len, err, sizeof err);
    if (rc) {
        fputs("runmon report: ", stderr);
        rm_fput_safe(stderr, err[0] ? err : "failed");
        fputc('\n', stderr);
        return rc;
    }
    /* In the session folder: the folder's own mode bits, so a private session stays so. */
    mode_t mode = 0644;
    struct stat st;
    int in_session = !outfile;
    if (!outfile) {
        snprintf(def, sizeof def, "%s/report.html", dir);
        outfile = def;
        if (stat(dir, &st) == 0) mode = st.st_mode & 0666;
    }
    return rm_report_write_page(outfile, html, len, in_session ? (int)mode : -1);
}
