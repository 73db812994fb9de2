/* `runmon report --sweep NAME [SINK...]` and `runmon report S1 S2 ...`: the page that compares
 * the runs (sweep/sweep_page.h). */
#ifndef RUNMON_CLI_CMD_REPORT_SWEEP_H
#define RUNMON_CLI_CMD_REPORT_SWEEP_H

#include <stddef.h>

/* sweep: the sweep's name (paths are sinks, default '.'), or NULL (paths are sessions, two or
 * more). outfile: NULL for the default. Returns the exit status. */
/* Writes html (freed) to outfile through a temporary file (mode < 0: rm_write_file_atomic's
 * rule, else that mode) and prints the path written, escaped. Returns the exit status. */
int rm_report_write_page(const char *outfile, char *html, size_t len, int mode);

/* judge: --objective, --cost, --target: the rows judged (sweep/sweep_judge.h) before the
 * page is made from them. */
struct rm_judge_opts;
int rm_report_sweep_main(const char *sweep, char *const *paths, size_t npaths, const char *outfile,
                         const struct rm_judge_opts *judge);

#endif
