/* `runmon report` comparing runs: rows from session folders (or a sweep), the page written. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "cli/cmd_report_sweep.h"
#include "sink/index.h"
#include "sink/sink.h"
#include "sweep/sweep_judge.h"
#include "sweep/sweep_page.h"
#include "sweep/sweep_rows.h"

static const struct rm_judge_opts *judge_opts; /* set by rm_report_sweep_main */
static int judge_rows(json_t *rows);

static int fail(const char *msg)
{
    fputs("runmon report: ", stderr);
    rm_fput_safe(stderr, msg);
    fputc('\n', stderr);
    return 2;
}

int rm_report_write_page(const char *outfile, char *html, size_t len, int mode)
{
    if (mode < 0 ? rm_write_file_atomic(outfile, html, len)
                 : rm_write_file_atomic_mode(outfile, html, len, (mode_t)mode)) {
        fputs("runmon report: writing ", stderr);
        rm_fput_safe(stderr, outfile);
        fprintf(stderr, ": %s\n", strerror(errno));
        free(html);
        return 1;
    }
    free(html);
    /* The path may hold a session folder's or a sweep's name, which came from the sink. */
    rm_fput_safe(stdout, outfile);
    putchar('\n');
    return fflush(stdout) ? 1 : 0;
}

static int write_page(const json_t *rows, const struct rm_sweep_page_opts *opts,
                      const char *outfile)
{
    char err[1024] = "";
    char *html = NULL;
    size_t len = 0;
    int rc = rm_sweep_page_build(rows, opts, &html, &len, err, sizeof err);
    if (rc) {
        fail(err[0] ? err : "failed");
        return rc;
    }
    return rm_report_write_page(outfile, html, len, -1);
}

/* Session folders (each a folder, or a sink's latest) compared on one page. */
static int from_paths(char *const *paths, size_t n, const char *outfile)
{
    char **dirs = calloc(n, sizeof *dirs);
    char err[1024] = "";
    int rc = 0;
    if (!dirs) return 1;
    for (size_t i = 0; i < n && !rc; i++) {
        char dir[4096];
        rc = rm_select_session("report", paths[i], NULL, dir, sizeof dir, err, sizeof err);
        if (rc)
            fail(err);
        else if (!(dirs[i] = strdup(dir)))
            rc = 1;
    }
    json_t *names = NULL, *rows = NULL;
    struct rm_sweep_page_opts opts = {0};
    if (!rc) {
        rows = rm_sweep_rows_from_dirs((const char *const *)dirs, n, &names, &opts.params_inferred,
                                       &opts.n_hosts, err, sizeof err);
        if (!rows) rc = fail(err);
    }
    if (!rc) rc = judge_rows(rows);
    if (!rc) {
        opts.param_names = names;
        rc = write_page(rows, &opts, outfile ? outfile : "sweep.html");
    }
    json_decref(rows);
    json_decref(names);
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    return rc;
}

/* The default file of --sweep NAME: SINK/sweep-NAME.html, the name's bytes other than
 * letters, digits, '.', '-' and '_' written as '_'. */
static void default_out(char *buf, size_t cap, const char *sink, const char *name)
{
    int n = snprintf(buf, cap, "%s/sweep-", sink);
    size_t k = n > 0 && (size_t)n < cap ? (size_t)n : 0;
    for (const char *c = name; *c && k + 6 < cap; c++) {
        unsigned char u = (unsigned char)*c;
        bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                  u == '.' || u == '-' || u == '_';
        buf[k++] = ok ? (char)u : '_';
    }
    snprintf(buf + k, cap - k, ".html");
}

/* The runs of sweep NAME in the sinks given (default '.'). */
static int from_sweep(const char *name, char *const *sinks, size_t n, const char *outfile)
{
    static const char *const here[] = {"."};
    const char *const *list = n ? (const char *const *)sinks : here;
    size_t nl = n ? n : 1;
    struct rm_sweep s;
    char err[1024] = "";
    if (rm_sinks_open(list, nl, 0, err, sizeof err) ||
        rm_sweep_load(list, nl, name, &s, err, sizeof err))
        return fail(err);
    size_t i;
    json_t *note;
    json_array_foreach(s.notes, i, note)
    {
        fputs("runmon report: note: ", stderr);
        rm_fput_safe(stderr, json_string_value(note));
        fputc('\n', stderr);
    }
    int rc = 0;
    if (json_array_size(s.rows)) rc = judge_rows(s.rows);
    if (rc) {
    } else if (!json_array_size(s.rows)) {
        fputs("runmon report: no sessions in sweep '", stderr);
        rm_fput_safe(stderr, name);
        fputs("'\n", stderr);
        rc = 2;
    } else {
        struct rm_sweep_page_opts opts = {.name = name,
                                          .param_names = s.param_names,
                                          .params_inferred = s.params_inferred,
                                          .n_hosts = s.n_hosts > 0 ? (size_t)s.n_hosts : 1};
        char def[4400];
        default_out(def, sizeof def, list[0], name);
        rc = write_page(s.rows, &opts, outfile ? outfile : def);
    }
    rm_sweep_free(&s);
    return rc;
}

/* The rows judged by --objective/--cost/--target (or the run logs' objectives): each row
 * carries its objectives, cost and target for the page. Returns 0, or the exit status 2. */
static int judge_rows(json_t *rows)
{
    json_t *doc = NULL;
    char err[1024];
    if (rm_judge_rows(rows, judge_opts, &doc, err, sizeof err) < 0) {
        fputs("runmon report: ", stderr);
        rm_fput_safe(stderr, err);
        fputc('\n', stderr);
        return 2;
    }
    json_decref(doc);
    return 0;
}

int rm_report_sweep_main(const char *sweep, char *const *paths, size_t npaths, const char *outfile,
                         const struct rm_judge_opts *judge)
{
    static const struct rm_judge_opts none = {0};
    judge_opts = judge ? judge : &none;
    if (sweep) return from_sweep(sweep, paths, npaths, outfile);
    return from_paths(paths, npaths, outfile);
}
