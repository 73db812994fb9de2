/* `runmon report` comparing runs: rows from session folders (or a sweep), the page written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "cli/cmd_report_sweep.h"
#include "report/sweep_page.h"
#include "sink/sink.h"

static int fail(const char *msg)
{
    fputs("runmon report: ", stderr);
    rm_fput_safe(stderr, msg);
    fputc('\n', stderr);
    return 2;
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
    if (rm_write_file_atomic(outfile, html, len)) {
        fputs("runmon report: writing ", stderr);
        rm_fput_safe(stderr, outfile);
        fprintf(stderr, ": %s\n", strerror(errno));
        free(html);
        return 1;
    }
    free(html);
    rm_fput_safe(stdout, outfile);
    putchar('\n');
    return fflush(stdout) ? 1 : 0;
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

int rm_report_sweep_main(const char *sweep, char *const *paths, size_t npaths, const char *outfile)
{
    if (sweep) return fail("--sweep needs the sweep loader (not in this build yet)");
    return from_paths(paths, npaths, outfile);
}
