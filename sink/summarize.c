/* Summarizing one session of a sink: the aggregates its state.json keeps for sealed segments
 * (their rows need not be read again, nor be on disk), the files for the rest. */
#include "sink/sink.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "model/streams.h"
#include "sink/index.h"
#include "sink/manifest.h"
#include "summary/segments.h"
#include "summary/summary.h"

/* Phase figures need rows: does the run log hold any phase? */
static int runlog_has_phases(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    int found = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            found = memmem(p, (size_t)st.st_size, "\"type\":\"phase", 13) != NULL;
            munmap(p, (size_t)st.st_size);
        }
    }
    close(fd);
    return found;
}

/* A file with at least one line after its header (the engine refuses files without data).
 * Its first 8 KiB are looked at; the byte read past them says whether there is more. */
static int has_rows(const char *path)
{
    enum { LOOK = 8192 };
    char b[LOOK + 2];
    ssize_t n = rm_read_head(AT_FDCWD, path, b, sizeof b);
    if (n <= 0) return 0;
    size_t m = (size_t)n > LOOK ? LOOK : (size_t)n;
    char *nl = memchr(b, '\n', m);
    if (!nl || n <= (nl - b) + 1) return 0;
    /* something beyond the header: at least one whole line? */
    return memchr(nl + 1, '\n', m - (size_t)(nl + 1 - b)) != NULL || (size_t)n > m;
}

static int cmp_seg_file(const void *a, const void *b)
{
    return strcmp(rm_jget_str(*(json_t *const *)a, "file"),
                  rm_jget_str(*(json_t *const *)b, "file"));
}

/* A segment file on disk, never through a symbolic link. */
static int regular_file(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* Counts of where a sink summary's data came from (summary.json's "sink" section). */
struct sources {
    json_int_t from_manifest, from_files, pruned, pruned_rows;
};

/* The sealed segments of one stream the manifest lists, in name order: their aggregate, or
 * the file when use_files (phases need rows) or the aggregate is unusable. */
static void add_listed(struct rm_summary *s, const json_t *m, const char *id, const char *sdir,
                       int k, int use_files, struct sources *src)
{
    const json_t *segs = json_object_get(m, "segments");
    size_t n = 0, i;
    json_t **list = calloc(json_array_size(segs) + 1, sizeof *list), *e;
    if (!list) return;
    json_array_foreach(segs, i, e)
    {
        if (strcmp(rm_jget_str(e, "session_id"), id) ||
            strcmp(rm_jget_str(e, "stream"), rm_stream_defs[k].name) ||
            strcmp(rm_jget_str(e, "state"), "sealed"))
            continue;
        list[n++] = e;
    }
    qsort(list, n, sizeof *list, cmp_seg_file);
    char path[PATH_MAX + 64];
    for (i = 0; i < n; i++) {
        e = list[i];
        snprintf(path, sizeof path, "%s/%s", sdir, rm_jget_str(e, "file"));
        int on_disk = regular_file(path);
        json_t *agg = json_object_get(e, "aggregate");
        if (json_is_true(json_object_get(e, "pruned"))) {
            src->pruned++;
            src->pruned_rows += json_integer_value(json_object_get(e, "rows"));
        }
        /* A kind whose aggregate is not whole (per-process figures) is read while on disk. */
        int need_rows = use_files || !rm_summary_segment_whole(rm_stream_defs[k].kind);
        if (json_is_object(agg) && (!need_rows || !on_disk)) {
            char e2[512];
            if (rm_summary_add_segment(s, agg, e2, sizeof e2) == 0) {
                src->from_manifest++;
                continue;
            }
        }
        if (on_disk && has_rows(path)) {
            rm_summary_add_file(s, rm_stream_defs[k].kind, path);
            src->from_files++;
        }
    }
    free(list);
}

/* Sealed files of one stream the manifest does not list yet (a live recorder's newest), then
 * the active file. */
static void add_unlisted(struct rm_summary *s, const json_t *m, const char *id, const char *sdir,
                         int k, struct sources *src)
{
    char **names, path[PATH_MAX + 64];
    size_t n = rm_segment_family(sdir, k, &names);
    for (size_t i = 0; i < n; i++) {
        int ix, sealed;
        if (!rm_segment_parse_name(names[i], &ix, &sealed) ||
            (sealed && rm_manifest_find_segment(m, id, names[i])))
            continue;
        snprintf(path, sizeof path, "%s/%s", sdir, names[i]);
        if (regular_file(path) && has_rows(path)) {
            rm_summary_add_file(s, rm_stream_defs[k].kind, path);
            src->from_files++;
        }
    }
    rm_segment_family_free(names, n);
}

/* summary.json's "sink" section. */
static json_t *sink_section(const json_t *m, const char *sink_dir, const char *id, int use_files,
                            const struct sources *src)
{
    json_t *se = rm_manifest_find_session(m, id);
    json_t *sk = json_object();
    json_object_set_new(sk, "sink_dir", json_string(sink_dir));
    json_object_set_new(sk, "session_id", json_string(id));
    json_object_set_new(sk, "status", json_string(rm_jget_str(se, "status")));
    json_object_set_new(sk, "segments_from_manifest", json_integer(src->from_manifest));
    json_object_set_new(sk, "files_read", json_integer(src->from_files));
    json_object_set_new(sk, "pruned_segments", json_integer(src->pruned));
    json_object_set_new(sk, "pruned_rows", json_integer(src->pruned_rows));
    json_object_set_new(sk, "rescan", json_boolean(use_files));
    json_t *ks = json_object_get(se, "sink");
    json_t *dr = json_object_get(ks, "rows_dropped");
    json_object_set_new(sk, "rows_dropped", dr ? json_incref(dr) : json_object());
    json_object_set_new(sk, "write_errors",
                        json_integer(json_integer_value(json_object_get(ks, "write_errors"))));
    const char *state = json_string_value(json_object_get(ks, "state"));
    json_object_set_new(sk, "state", json_string(state ? state : "ok"));
    return sk;
}

int rm_sink_summary(const char *sink_dir, const char *session_id, int rescan,
                    const struct rm_summary_opts *opts, json_t **out, char *err, size_t errsz)
{
    return rm_sink_summary_as(sink_dir, session_id, rescan, opts, NULL, NULL, out, err, errsz);
}

int rm_sink_summary_as(const char *sink_dir, const char *session_id, int rescan,
                       const struct rm_summary_opts *opts, const json_t *session_doc,
                       const json_t *state_doc, json_t **out, char *err, size_t errsz)
{
    *out = NULL;
    int rc = rm_sink_open_index(sink_dir, 0, NULL, err, errsz);
    if (rc < 0) return 2;
    if (rc == 1) {
        snprintf(err, errsz, "%s: not a runmon sink", sink_dir);
        return 2;
    }
    char id[256];
    rc = rm_sink_pick_session(sink_dir, session_id, id, sizeof id, err, errsz);
    if (rc) return rc;
    /* The session's own document: its entry and segments (aggregates), nothing else. */
    json_t *m = NULL;
    if (state_doc)
        m = json_deep_copy(state_doc);
    else if (rm_state_load(sink_dir, id, &m) != 0)
        m = rm_manifest_new();
    char sdir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(sdir, sizeof sdir, "%s/%s", sink_dir, id);
    struct rm_summary *s = rm_summary_new(opts);
    snprintf(path, sizeof path, "%s/session.json", sdir);
    json_t *ses = session_doc ? json_deep_copy(session_doc) : json_load_file(path, 0, NULL);
    if (json_is_object(ses)) rm_summary_set_session(s, ses);
    json_decref(ses);
    snprintf(path, sizeof path, "%s/runlog.jsonl", sdir);
    int have_runlog = access(path, F_OK) == 0;
    int use_files = rescan || (have_runlog && runlog_has_phases(path));
    struct sources src = {0};
    for (int k = 0; k < RM_STREAM_COUNT; k++) {
        add_listed(s, m, id, sdir, k, use_files, &src);
        add_unlisted(s, m, id, sdir, k, &src);
    }
    if (have_runlog) rm_summary_add_runlog(s, path);
    rc = rm_summary_build(s, out, err, errsz);
    rm_summary_free(s);
    if (rc == 0) {
        json_object_set_new(*out, "path", json_string(sdir));
        json_object_set_new(*out, "sink", sink_section(m, sink_dir, id, use_files, &src));
    }
    json_decref(m);
    return rc;
}
