/* The summary object (its inputs) and the whole summary of a session folder. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "summary/inputs.h"
#include "summary/segagg.h"
#include "summary/segments.h"
#include "summary/sniff.h"
#include "summary/summary_internal.h"

/* ---- the summary object ----------------------------------------------------------- */

struct rm_summary *rm_summary_new(const struct rm_summary_opts *opts)
{
    struct rm_summary *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (opts) s->opts = *opts;
    rm_runlog_init(&s->rl);
    return s;
}

void rm_summary_free(struct rm_summary *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->njobs; i++)
        rm_file_agg_free(s->jobs[i]);
    free(s->jobs);
    for (size_t i = 0; i < s->nrunlogs; i++)
        free(s->runlogs[i]);
    free(s->runlogs);
    json_decref(s->session);
    if (s->md) pcre2_match_data_free(s->md);
    if (s->re) pcre2_code_free(s->re);
    rm_runlog_free(&s->rl);
    free(s);
}

/* Appends a new job (a file, or a segment when path is NULL) to s. */
static struct file_agg *push_job(struct rm_summary *s, enum rm_input_kind kind, const char *path)
{
    struct file_agg *f = rm_xcalloc(1, sizeof *f);
    rm_file_agg_init(f, kind, path);
    if (s->njobs == s->capjobs) {
        s->capjobs = s->capjobs ? s->capjobs * 2 : 8;
        s->jobs = rm_xrealloc(s->jobs, s->capjobs * sizeof *s->jobs);
    }
    s->jobs[s->njobs++] = f;
    return f;
}

static int add_file(struct rm_summary *s, enum rm_input_kind kind, const char *path, bool strict)
{
    if ((int)kind < 0 || kind >= RM_INPUT_COUNT || !path) return -1;
    push_job(s, kind, path)->strict = strict;
    return 0;
}

int rm_summary_add_file(struct rm_summary *s, enum rm_input_kind kind, const char *path)
{
    return add_file(s, kind, path, true);
}

int rm_summary_add_named_file(struct rm_summary *s, enum rm_input_kind kind, const char *path)
{
    int k = (int)kind;
    enum rm_sniff what = path ? rm_sniff_named_file(path, &k) : RM_SNIFF_EMPTY;
    if (add_file(s, (enum rm_input_kind)k, path, true)) return -1;
    s->jobs[s->njobs - 1]->sniffed = (int)what;
    return 0;
}

int rm_summary_add_runlog(struct rm_summary *s, const char *path)
{
    s->runlogs = rm_xrealloc(s->runlogs, (s->nrunlogs + 1) * sizeof *s->runlogs);
    s->runlogs[s->nrunlogs] = rm_xstrdup(path);
    s->nrunlogs++;
    s->runlog_strict = true;
    return 0;
}

int rm_summary_add_segment(struct rm_summary *s, const json_t *seg, char *err, size_t errsz)
{
    struct file_agg tmp;
    if (rm_file_agg_from_json(&tmp, seg, err, errsz)) {
        free(tmp.gpus.s);
        free(tmp.path);
        json_decref(tmp.seg_phases);
        return -1;
    }
    struct file_agg *f = push_job(s, tmp.kind, NULL);
    free(f->path);
    *f = tmp;
    return 0;
}

void rm_summary_set_session(struct rm_summary *s, json_t *session)
{
    json_decref(s->session);
    s->session = json_incref(session);
}

/* ---- a session folder ------------------------------------------------------------- */

/* Every file of one stream, oldest first. */
static void add_family(struct rm_summary *s, const char *dir, int stream, size_t *found)
{
    char **names, path[4096];
    size_t n = rm_segment_family(dir, stream, &names);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        add_file(s, rm_stream_defs[stream].kind, path, false);
        (*found)++;
    }
    rm_segment_family_free(names, n);
}

int rm_summary_session_dir(const char *dir, const struct rm_summary_opts *opts, json_t **out,
                           char *err, size_t errsz)
{
    *out = NULL;
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, errsz, "%s: %s", dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: not a directory", dir);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    int is_sink = access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/manifest.json", dir); /* a 0.1.0 sink */
    if (is_sink || access(path, F_OK) == 0) {
        snprintf(err, errsz, "%s: sink directories (index.jsonl) are not supported yet", dir);
        return 2;
    }
    struct rm_summary *s = rm_summary_new(opts);
    if (!s) {
        snprintf(err, errsz, "out of memory");
        return 1;
    }
    size_t found = 0;
    snprintf(path, sizeof path, "%s/session.json", dir);
    if (access(path, F_OK) == 0) {
        json_error_t je;
        json_t *ses = json_load_file(path, 0, &je);
        if (!json_is_object(ses)) {
            snprintf(err, errsz, "%s: not a JSON object (line %d: %s)", path, je.line, je.text);
            json_decref(ses);
            rm_summary_free(s);
            return 2;
        }
        rm_summary_set_session(s, ses);
        json_decref(ses);
        found++;
    }
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        add_family(s, dir, k, &found);
    snprintf(path, sizeof path, "%s/runlog.jsonl", dir);
    if (access(path, F_OK) == 0) {
        rm_summary_add_runlog(s, path);
        s->runlog_strict = false;
        found++;
    }
    if (!found) {
        char names[256] = "";
        size_t used = 0;
        for (int k = 0; k < RM_STREAM_COUNT && used < sizeof names; k++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s.csv, ",
                                     rm_stream_defs[k].stem);
        snprintf(err, errsz, "%s: not a runmon session (no session.json, %sor runlog.jsonl)", dir,
                 names);
        rm_summary_free(s);
        return 2;
    }
    int rc = rm_summary_build(s, out, err, errsz);
    if (rc == 0) json_object_set_new(*out, "path", json_string(dir));
    rm_summary_free(s);
    return rc;
}

bool rm_summary_segment_whole(enum rm_input_kind k)
{
    return rm_input_reader(k)->segment_whole;
}
