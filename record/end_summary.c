/* The end-of-run summary: summary.json streamed into a temporary file beside it and renamed
 * over it, the text streamed to stderr from the same build. */
#include "record/end_summary.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/termsafe.h"
#include "report/output.h"
#include "sink/sink.h"
#include "summary/summary.h"

/* Each phase row to summary.json, and (first build, not quiet) to the text on stderr. */
struct tee {
    struct rm_json_stream json;
    struct rm_text_stream text;
    bool with_text;
};

static void tee_row(void *ctx, const json_t *doc, json_t *row)
{
    struct tee *t = ctx;
    if (t->with_text) rm_summary_text_row(&t->text, doc, json_incref(row));
    rm_summary_stream_row(&t->json, doc, row);
}

/* The summary built once into tmp (then renamed to path). Returns 0, 1 (nothing to summarize:
 * err says why), or -1 (a write failed, errno set). */
static int build_into(const struct rm_end_summary *e, const char *path, const char *tmp,
                      bool with_text, char *err, size_t errsz)
{
    (void)unlink(tmp); /* a stale one from a dead process: a fresh mode */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, rm_file_mode());
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        int er = errno;
        if (fd >= 0) close(fd);
        unlink(tmp);
        errno = er;
        return -1;
    }
    char sdir[PATH_MAX];
    if (e->sink_dir) snprintf(sdir, sizeof sdir, "%s/%s", e->sink_dir, e->session_id);
    struct tee t = {.json = {.out = out},
                    .text = {.out = stderr, .path = e->sink_dir ? sdir : e->dir},
                    .with_text = with_text};
    struct rm_summary_opts so = {
        .interval_s = e->interval_s, .phase_row = tee_row, .phase_row_ctx = &t};
    json_t *sum = NULL;
    int rc = e->sink_dir ? rm_sink_summary_as(e->sink_dir, e->session_id, 0, &so, e->session_doc,
                                              e->state_doc, &sum, err, errsz)
                         : rm_summary_session_dir(e->dir, &so, &sum, err, errsz);
    if (rc != 0 || !sum) {
        rm_summary_text_end(&t.text, NULL);
        fclose(out);
        unlink(tmp);
        json_decref(sum);
        return 1;
    }
    int wrc = rm_summary_stream_end(&t.json, sum);
    if (with_text) rm_summary_text_end(&t.text, sum);
    json_decref(sum);
    if (fflush(out) || ferror(out) || fsync(fileno(out))) wrc = -1;
    int er = errno;
    if (fclose(out)) wrc = -1, er = errno;
    if (wrc == 0 && rename(tmp, path)) wrc = -1, er = errno;
    if (wrc) {
        unlink(tmp);
        errno = er;
        return -1;
    }
    /* The rename made durable, as rm_write_file_atomic does. */
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

int rm_end_summary_write(const struct rm_end_summary *e)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 48], err[1024] = "";
    snprintf(path, sizeof path, "%s/summary.json", e->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int rc = -1;
    for (int t = 0; t < RM_SINK_END_TRIES && rc == -1; t++) {
        rm_sink_end_backoff(t);
        /* The text once, from the first build; a retry writes summary.json only. */
        rc = build_into(e, path, tmp, t == 0 && !e->quiet, err, sizeof err);
    }
    if (rc == 1) {
        if (!e->quiet) {
            fputs("runmon record: no summary: ", stderr);
            rm_fput_safe(stderr, err[0] ? err : "no data");
            fputc('\n', stderr);
        }
        return 0;
    }
    if (rc != 0 && !e->quiet)
        fprintf(stderr, "runmon record: cannot write %s: %s\n", path, strerror(errno));
    return rc ? -1 : 0;
}

int rm_end_summary_catch_up(const char *sink_dir, const char *session_id)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s/%s", sink_dir, session_id) >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* interval_s 0: session.json's */
    struct rm_end_summary e = {
        .sink_dir = sink_dir, .session_id = session_id, .dir = dir, .quiet = true};
    return rm_end_summary_write(&e);
}
