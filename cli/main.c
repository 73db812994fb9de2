/* runmon: dispatch to the subcommands. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_log.h"
#include "cli/cmd_record.h"
#include "cli/cmd_sessions.h"
#include "cli/cmd_summary.h"
#include "cli/cmd_top.h"
#include "cli/commands.h"
#include "cli/version.h"
#include "record/end_summary.h"
#include "report/report.h"
#include "sink/index.h"

static const struct rm_command commands[] = {
    {"record", rm_cmd_record, "record GPU and CPU use beside a command, or until stopped"},
    {"summary", rm_cmd_summary, "summarize a recorded session (per GPU, per phase, totals)"},
    {"sessions", rm_cmd_sessions, "list the sessions of a sink directory (status, size)"},
    {"report", rm_cmd_report, "write an HTML report of a recorded session (charts, tables)"},
    {"top", rm_cmd_top, "a live terminal view of a running (or finished) session"},
    {"log", rm_cmd_log, "append a phase or an event to the run log"},
    {"phase", rm_cmd_phase, "run a command as a phase of the run log"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: runmon COMMAND [OPTIONS] [ARGS]\n\n"
            "Record what the GPUs and CPUs did beside a workload, and the phases of the run.\n\n"
            "commands:\n");
    for (const struct rm_command *c = commands; c->name; c++)
        fprintf(out, "  %-9s %s\n", c->name, c->summary);
    fprintf(out, "\noptions:\n"
                 "  -h, --help  this text\n"
                 "  --version   print runmon's version and the versions of the libraries it\n"
                 "              was built with (jansson, pcre2, libcsv, ncurses)\n"
                 "\n'runmon COMMAND --help' describes each command; 'man runmon-COMMAND' (for\n"
                 "example 'man runmon-record') in full, 'man runmon' the overview.\n");
}

int main(int argc, char **argv)
{
    /* Numbers in every file we write use '.' whatever the user's locale says. */
    setlocale(LC_ALL, "C");
    /* A summary the end of a session could not write is written by the next open. */
    rm_sink_set_summary_writer(rm_end_summary_catch_up);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        rm_print_version(stdout);
        return 0;
    }
    for (const struct rm_command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "runmon: unknown command '%s' (see 'runmon --help')\n", argv[1]);
    return 2;
}
