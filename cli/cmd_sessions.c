/* `runmon sessions DIR [--format text|json] [--rebuild]`. Opening the sink runs recovery
 * (dead recorders' sessions become "interrupted"), and rebuilds a lost manifest. The text
 * listing escapes what the sessions recorded (a command line, a host: base/termsafe.h); the
 * JSON keeps it exact. */
#include "cli/cmd_sessions.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "sink/manifest.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: runmon sessions DIR [--format text|json] [--rebuild]\n\n"
                 "List the recording sessions of a sink directory (runmon record -o DIR): id,\n"
                 "status, host, start, duration, command and bytes kept on disk.\n\n"
                 "options:\n"
                 "  --format text|json  output format (default: text on a terminal, else json)\n"
                 "  --rebuild           rebuild manifest.json from the session folders first\n"
                 "  -h, --help          this text\n\n"
                 "exit status: 0 success, 2 a usage error or no sink there.\n");
}

static double duration_s(const json_t *e)
{
    int64_t a, b;
    const char *sa = rm_jget_str(e, "started_at"), *sb = rm_jget_str(e, "ended_at");
    if (!*sa || rm_parse_ts(sa, strlen(sa), &a) != 0) return -1;
    if (!*sb)
        b = rm_now_realtime_ns();
    else if (rm_parse_ts(sb, strlen(sb), &b) != 0)
        return -1;
    return (double)(b - a) / 1e9;
}

int rm_cmd_sessions(int argc, char **argv)
{
    enum { OPT_FORMAT = 256, OPT_REBUILD };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"rebuild", no_argument, NULL, OPT_REBUILD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL;
    int rebuild = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_FORMAT:
            format = optarg;
            if (strcmp(format, "text") && strcmp(format, "json")) {
                fprintf(stderr, "runmon sessions: --format must be text or json\n");
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
    if (argc - optind != 1) {
        usage(stderr);
        return 2;
    }
    const char *dir = argv[optind];
    if (!format) format = isatty(1) ? "text" : "json";
    json_t *m = NULL;
    char err[1024];
    if (rm_sink_open_manifest(dir, rebuild, &m, err, sizeof err) < 0) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    if (!m) {
        fputs("runmon sessions: ", stderr);
        rm_fput_safe(stderr, dir);
        fputs(": not a runmon sink (no manifest.json, no sessions)\n", stderr);
        return 2;
    }
    /* Bytes kept per session: its unpruned segments. */
    json_t *out = json_array();
    size_t i, j;
    json_t *e, *seg;
    json_array_foreach(json_object_get(m, "sessions"), i, e)
    {
        json_int_t bytes = 0, segs = 0;
        json_array_foreach(json_object_get(m, "segments"), j, seg)
        {
            if (strcmp(rm_jget_str(seg, "session_id"), rm_jget_str(e, "session_id")) ||
                json_is_true(json_object_get(seg, "pruned")))
                continue;
            bytes += json_integer_value(json_object_get(seg, "bytes"));
            segs++;
        }
        double d = duration_s(e);
        json_array_append_new(
            out,
            json_pack("{s:O,s:O,s:O,s:O,s:O,s:o,s:O,s:O,s:I,s:I}", "session_id",
                      json_object_get(e, "session_id"), "status", json_object_get(e, "status"),
                      "host", json_object_get(e, "host"), "started_at",
                      json_object_get(e, "started_at"), "ended_at",
                      json_object_get(e, "ended_at") ? json_object_get(e, "ended_at") : json_null(),
                      "duration_s", d >= 0 ? json_real(d) : json_null(), "command",
                      json_object_get(e, "command") ? json_object_get(e, "command") : json_null(),
                      "exit_code",
                      json_object_get(e, "exit_code") ? json_object_get(e, "exit_code")
                                                      : json_null(),
                      "files", segs, "bytes", bytes));
    }
    if (!strcmp(format, "json")) {
        json_t *doc =
            json_pack("{s:s,s:i,s:s,s:o,s:O}", "format", "runmon-sessions", "schema_version", 1,
                      "sink_dir", dir, "sessions", out, "counters", json_object_get(m, "counters"));
        char *t = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        if (t) printf("%s\n", t);
        free(t);
        json_decref(doc);
    } else {
        printf("%-40s %-11s %-16s %-24s %10s %12s  %s\n", "SESSION", "STATUS", "HOST", "STARTED",
               "DURATION", "BYTES", "COMMAND");
        json_array_foreach(out, i, e)
        {
            /* The words escaped one by one: a newline or an escape sequence in an argument
             * must not break the row or reach the terminal. */
            char cmd[2048] = "";
            size_t used = 0, k;
            json_t *a;
            json_array_foreach(json_object_get(e, "command"), k, a)
            {
                if (k) {
                    if (used + 2 > sizeof cmd) break;
                    cmd[used++] = ' ';
                    cmd[used] = '\0';
                }
                size_t n = rm_term_escape(cmd + used, sizeof cmd - used, json_string_value(a));
                if (n >= sizeof cmd - used) break;
                used += n;
            }
            json_t *d = json_object_get(e, "duration_s");
            char dur[32] = "-";
            if (json_is_number(d)) snprintf(dur, sizeof dur, "%.1fs", json_number_value(d));
            char id[512], status[128], host[512], started[256];
            printf("%s %s %s %s %10s %12lld  %s\n",
                   rm_term_cell(id, sizeof id, rm_jget_str(e, "session_id"), 40, -1),
                   rm_term_cell(status, sizeof status, rm_jget_str(e, "status"), 11, -1),
                   rm_term_cell(host, sizeof host, rm_jget_str(e, "host"), 16, -1),
                   rm_term_cell(started, sizeof started, rm_jget_str(e, "started_at"), 24, -1), dur,
                   (long long)json_integer_value(json_object_get(e, "bytes")), cmd[0] ? cmd : "-");
        }
        json_decref(out);
    }
    json_decref(m);
    return 0;
}
