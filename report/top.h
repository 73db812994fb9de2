/* `runmon top`: a live view of one session, built from the session folder's files only.
 *
 * The state follows the active CSV files (gpu, cpu, proc, apps) and runlog.jsonl by
 * remembered offsets (a file that shrank or whose inode changed, as on rollover, is read
 * again from its start), and re-reads session.json on every poll. The frame is plain text
 * lines, independent of any terminal library: `runmon top --once` prints it, the curses loop
 * in cli/cmd_top.c draws the same lines.
 */
#ifndef RUNMON_REPORT_TOP_H
#define RUNMON_REPORT_TOP_H

#include <stddef.h>

struct rm_top;

/* Kinds of a frame line, for a renderer that highlights (never needed to read it). */
enum rm_top_line_kind { RM_TOP_PLAIN, RM_TOP_TITLE, RM_TOP_HEAD, RM_TOP_WARN };

struct rm_top_frame {
    char **line;
    unsigned char *kind;
    size_t n, cap;
};

/* Opens the view of session folder dir (which must hold session.json). NULL with err. */
struct rm_top *rm_top_open(const char *dir, char *err, size_t errsz);
void rm_top_free(struct rm_top *t);

/* Reads what was appended since the last poll. */
void rm_top_poll(struct rm_top *t);

/* session.json's interval_s (0 when unknown) and whether status is still "running". */
double rm_top_interval(const struct rm_top *t);
int rm_top_running(const struct rm_top *t);

/* Builds the frame for a terminal width (columns, at least 40 used). utf8: the sparkline
 * may use block characters; else ASCII only. paused adds a marker to the title. The frame's
 * lines are replaced (free with rm_top_frame_free). */
void rm_top_build(struct rm_top *t, int width, int utf8, int paused, struct rm_top_frame *f);
void rm_top_frame_free(struct rm_top_frame *f);

#endif
