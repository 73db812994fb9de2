/* `runmon report`: write the HTML dashboard of a recorded session. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "report/report.h"
#include "sink/sink.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: runmon report [PATH] [--session ID] [-o FILE]\n\n"
            "Write a self-contained HTML report of a recorded session: timelines of GPU\n"
            "utilization, VRAM, power and temperature, host CPU and memory and the command's\n"
            "RSS on one time axis, with the run's phases, alerts and collector outages marked,\n"
            "plus the summary's cards and per-GPU and per-phase tables. The page needs no\n"
            "network and opens in any browser.\n\n"
            "PATH is a session folder, or a sink directory holding sessions: then --session ID\n"
            "picks PATH/ID, else PATH/latest (the newest session). Without PATH: the\n"
            "current folder when it is a sink or a session folder, else ./runmon.\n\n"
            "options:\n"
            "  --session ID   the session to report in a sink directory (latest: where\n"
            "                 PATH/latest points)\n"
            "  -o FILE        where to write (default: <session folder>/report.html); written\n"
            "                 through a temporary file renamed into place\n"
            "  -h, --help     this text\n\n"
            "The path written is printed on stdout.\n"
            "exit status: 0 success, 1 the report cannot be written, 2 a usage error, a bad\n"
            "path or a session without data.\n");
}

enum { OPT_SESSION = 256 };

int rm_cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"session", required_argument, NULL, OPT_SESSION},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outfile = NULL, *session_id = NULL;
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
    if (argc - optind > 1) {
        fprintf(stderr, "runmon report: one PATH at most (see 'runmon report --help')\n");
        return 2;
    }
    if (outfile && !*outfile) {
        fprintf(stderr, "runmon report: -o needs a file name\n");
        return 2;
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
    if (in_session ? rm_write_file_atomic_mode(outfile, html, len, mode)
                   : rm_write_file_atomic(outfile, html, len)) {
        fputs("runmon report: writing ", stderr);
        rm_fput_safe(stderr, outfile);
        fprintf(stderr, ": %s\n", strerror(errno));
        free(html);
        return 1;
    }
    free(html);
    /* The path holds the session folder's name, which came from the sink: escaped. */
    rm_fput_safe(stdout, outfile);
    putchar('\n');
    return fflush(stdout) ? 1 : 0;
}
