/* Session selection: from a path the user gave (a session folder, a sink directory, a
 * folder of session folders) and an optional session id to the one session folder meant.
 * The one copy of that rule; `runmon summary`, `report` and `record` use it. */
#include "sink/sink.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/termsafe.h"
#include "model/streams.h"
#include "sink/index.h"
#include "sink/names.h"

/* runmon record's default -o: a sink in the current folder. */
#define RM_DEFAULT_SINK "runmon"

int rm_sink_is_sink_dir(const char *dir)
{
    char path[2 * PATH_MAX + 512];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    if (access(path, F_OK) == 0) return 1;
    snprintf(path, sizeof path, "%s/manifest.json", dir); /* a 0.1.0 sink */
    if (access(path, F_OK) == 0) return 1;
    snprintf(path, sizeof path, "%s/session.json", dir);
    if (access(path, F_OK) == 0) return 0; /* a session folder */
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(dp))) {
        char why[PATH_MAX + 512];
        if (!rm_valid_session_id(de->d_name) || !strcmp(de->d_name, "latest")) continue;
        snprintf(path, sizeof path, "%s/%s/session.json", dir, de->d_name);
        found = access(path, F_OK) == 0 && rm_sink_session_ok(dir, de->d_name, why, sizeof why);
    }
    closedir(dp);
    return found;
}

/* The default choice while streaming the index: the newest completed session, else the
 * newest of the others (by started_at, then id), skipping the ids in `refused`. With
 * `newest`, the newest whatever its status (a live view wants the session recording now). */
struct pick {
    bool newest;
    char best[2][RM_SESSION_ID_MAX + 1], best_start[2][64];
    char (*refused)[RM_SESSION_ID_MAX + 1];
    int nrefused;
    const char *want; /* --session ID: found in the index? */
    int found;
};

static int pick_one(void *ctx, const struct rm_index_rec *e)
{
    struct pick *p = ctx;
    const char *id = e->session_id, *start = e->started_at;
    if (p->want) {
        p->found = !strcmp(id, p->want);
        return p->found;
    }
    for (int i = 0; i < p->nrefused; i++)
        if (!strcmp(p->refused[i], id)) return 0;
    int c = p->newest || !strcmp(e->status, "completed") ? 0 : 1;
    int d = strcmp(start, p->best_start[c]);
    if (!p->best[c][0] || d > 0 || (d == 0 && strcmp(id, p->best[c]) > 0)) {
        snprintf(p->best[c], sizeof p->best[c], "%s", id);
        snprintf(p->best_start[c], sizeof p->best_start[c], "%s", start);
    }
    return 0;
}

/* --session latest: *id becomes where dir/latest points (copied into latest, of
 * RM_SESSION_ID_MAX + 1 bytes). Any other *id is left as it is. 0, or -1 with the reason in
 * err ("... not a link to a session WHERE"). */
static int resolve_latest(const char *dir, const char **id, char *latest, const char *where,
                          char *err, size_t errsz)
{
    if (!*id || strcmp(*id, "latest")) return 0;
    if (!rm_sink_read_latest(dir, latest, RM_SESSION_ID_MAX + 1)) {
        snprintf(err, errsz, "%s/latest: not a link to a session %s", dir, where);
        return -1;
    }
    *id = latest;
    return 0;
}

/* The candidates an ambiguous --session SUFFIX names. */
#define RM_SUFFIX_SHOWN 8

static bool is_session_dir(const char *dir);

/* --session SUFFIX: the ids that end with it (a listing cut to fit the terminal shows an id's
 * end after an ellipsis), each once. */
struct suffix {
    const char *want;
    size_t len;
    char ids[RM_SUFFIX_SHOWN + 1][RM_SESSION_ID_MAX + 1];
    int n; /* ids found (those past RM_SUFFIX_SHOWN are counted, not kept) */
};

static void suffix_add(struct suffix *s, const char *id)
{
    size_t n = strlen(id);
    if (n <= s->len || strcmp(id + n - s->len, s->want)) return;
    int kept = s->n < RM_SUFFIX_SHOWN + 1 ? s->n : RM_SUFFIX_SHOWN + 1;
    for (int i = 0; i < kept; i++)
        if (!strcmp(s->ids[i], id)) return;
    if (s->n < RM_SUFFIX_SHOWN + 1) snprintf(s->ids[s->n], sizeof s->ids[s->n], "%s", id);
    s->n++;
}

static int suffix_one(void *ctx, const struct rm_index_rec *e)
{
    suffix_add(ctx, e->session_id);
    return 0;
}

/* The session folders of dir whose ids end with s->want (a sink's index may have lost some). */
static void suffix_dirs(const char *dir, struct suffix *s)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    char why[PATH_MAX + 512];
    while (dp && (de = readdir(dp)))
        if (rm_valid_session_id(de->d_name) && strcmp(de->d_name, "latest") &&
            rm_sink_session_ok(dir, de->d_name, why, sizeof why)) {
            char sub[PATH_MAX + RM_SESSION_ID_MAX + 8];
            snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
            if (is_session_dir(sub)) suffix_add(s, de->d_name);
        }
    if (dp) closedir(dp);
}

/* want_id as a unique end of an id (a leading ellipsis, as the text listing shows it, is
 * skipped): 0 with the id, 1 when no id ends so, or 2 with err listing the candidates. */
static int by_suffix(const char *dir, int sink, const char *want_id, char *id, size_t idcap,
                     char *err, size_t errsz)
{
    static const char *const ellipses[] = {"\xe2\x80\xa6", "..."};
    for (size_t k = 0; k < 2; k++)
        if (!strncmp(want_id, ellipses[k], strlen(ellipses[k]))) want_id += strlen(ellipses[k]);
    if (!rm_valid_session_id(want_id)) return 1;
    struct suffix s = {.want = want_id, .len = strlen(want_id)};
    char ierr[1024];
    if (sink) rm_index_each(dir, suffix_one, &s, ierr, sizeof ierr);
    suffix_dirs(dir, &s);
    if (s.n == 0) return 1;
    if (s.n == 1) {
        snprintf(id, idcap, "%s", s.ids[0]);
        return 0;
    }
    size_t used = (size_t)snprintf(err, errsz, "--session %s: %d sessions end so:", want_id, s.n);
    for (int i = 0; i < s.n && i < RM_SUFFIX_SHOWN && used < errsz; i++)
        used += (size_t)snprintf(err + used, errsz - used, " %s", s.ids[i]);
    if (s.n > RM_SUFFIX_SHOWN && used < errsz) snprintf(err + used, errsz - used, " ...");
    if (used < errsz) snprintf(err + used, errsz - used, " (give more of the id)");
    return 2;
}

static int pick_session(const char *sink_dir, const char *want_id, bool newest, char *id,
                        size_t idcap, char *err, size_t errsz)
{
    char why[PATH_MAX + 512], latest[RM_SESSION_ID_MAX + 1];
    if (resolve_latest(sink_dir, &want_id, latest, "of the sink", err, errsz) < 0) return 2;
    char ierr[1024];
    if (want_id) {
        char path[2 * PATH_MAX + 512], whole[RM_SESSION_ID_MAX + 1];
        snprintf(path, sizeof path, "%s/%s/session.json", sink_dir, want_id);
        struct pick p = {.want = want_id};
        if (!rm_valid_session_id(want_id) ||
            (access(path, F_OK) != 0 &&
             (rm_index_each(sink_dir, pick_one, &p, ierr, sizeof ierr) != 0 || !p.found))) {
            int rc = by_suffix(sink_dir, 1, want_id, whole, sizeof whole, err, errsz);
            if (rc == 2) return 2;
            if (rc == 0) want_id = whole;
            snprintf(path, sizeof path, "%s/%s/session.json", sink_dir, want_id);
            p = (struct pick){.want = want_id};
        }
        if (!rm_valid_session_id(want_id)) {
            snprintf(err, errsz, "--session %s: not a session id", want_id);
            return 2;
        }
        if (!rm_sink_session_ok(sink_dir, want_id, why, sizeof why)) {
            snprintf(err, errsz, "%s, refused", why);
            return 2;
        }
        if (access(path, F_OK) == 0 ||
            (rm_index_each(sink_dir, pick_one, &p, ierr, sizeof ierr) == 0 && p.found)) {
            snprintf(id, idcap, "%s", want_id);
            return 0;
        }
        snprintf(err, errsz, "%s: no session '%s' (see 'runmon sessions %s')", sink_dir, want_id,
                 sink_dir);
        return 2;
    }
    /* A session folder replaced by a link is refused; the next best is looked for (rare: a
     * few passes at most). */
    char refused[8][RM_SESSION_ID_MAX + 1];
    for (int pass = 0; pass <= 8; pass++) {
        struct pick p = {.newest = newest, .refused = refused, .nrefused = pass};
        if (rm_index_each(sink_dir, pick_one, &p, ierr, sizeof ierr) < 0) {
            snprintf(err, errsz, "%s", ierr);
            return 2;
        }
        const char *best = p.best[0][0] ? p.best[0] : p.best[1];
        if (!best[0]) break;
        if (rm_sink_session_ok(sink_dir, best, why, sizeof why)) {
            snprintf(id, idcap, "%s", best);
            return 0;
        }
        if (pass < 8) snprintf(refused[pass], sizeof refused[pass], "%s", best);
    }
    snprintf(err, errsz, "%s: the sink holds no sessions", sink_dir);
    return 2;
}

int rm_sink_pick_session(const char *sink_dir, const char *want_id, char *id, size_t idcap,
                         char *err, size_t errsz)
{
    return pick_session(sink_dir, want_id, false, id, idcap, err, errsz);
}

static int sink_select(const char *sink_dir, const char *want_id, bool newest, char *out_dir,
                       size_t out_cap, char *err, size_t errsz)
{
    int rc = rm_sink_open_index(sink_dir, 0, NULL, err, errsz);
    if (rc < 0) return 2;
    if (rc == 1) {
        snprintf(err, errsz, "%s: not a runmon sink (no index.jsonl, no session folders)",
                 sink_dir);
        return 2;
    }
    char id[256];
    rc = pick_session(sink_dir, want_id, newest, id, sizeof id, err, errsz);
    if (rc) return rc;
    if ((size_t)snprintf(out_dir, out_cap, "%s/%s", sink_dir, id) >= out_cap) {
        snprintf(err, errsz, "%s/%s: path too long", sink_dir, id);
        return 2;
    }
    return 0;
}

int rm_sink_select_session(const char *sink_dir, const char *want_id, char *out_dir, size_t out_cap,
                           char *err, size_t errsz)
{
    return sink_select(sink_dir, want_id, false, out_dir, out_cap, err, errsz);
}

static bool has_file(const char *dir, const char *name)
{
    char p[4096];
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p) return false;
    return access(p, F_OK) == 0;
}

/* A session's own files: session.json, the run log, or any stream's active file. */
static bool is_session_dir(const char *dir)
{
    char name[64];
    if (has_file(dir, "session.json") || has_file(dir, "runlog.jsonl")) return true;
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        if (rm_segment_name(name, sizeof name, k, 0) == 0 && has_file(dir, name)) return true;
    return false;
}

static int select_session(const char *who, const char *path, const char *id, bool newest, char *out,
                          size_t outsz, char *err, size_t errsz)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: not a directory (give a session folder or a sink directory)",
                 path);
        return 2;
    }
    /* A sink directory: the sink's own rule (--session, else newest completed, ...), which
     * also marks sessions whose recorder died as interrupted. */
    if (!(id == NULL && is_session_dir(path)) && rm_sink_is_sink_dir(path)) {
        int rc = sink_select(path, id, newest, out, outsz, err, errsz);
        if (rc == 0) {
            const char *slash = strrchr(out, '/');
            fprintf(stderr, "runmon %s: session ", who);
            rm_fput_safe(stderr, slash ? slash + 1 : out); /* names from the sink: escaped */
            fputc('\n', stderr);
        }
        return rc;
    }
    char why[PATH_MAX + 512], latest[RM_SESSION_ID_MAX + 1];
    if (resolve_latest(path, &id, latest, "there", err, errsz) < 0) return 2;
    char whole[RM_SESSION_ID_MAX + 1];
    if (id) {
        char sub[PATH_MAX + RM_SESSION_ID_MAX + 8];
        snprintf(sub, sizeof sub, "%s/%s", path, id);
        if (!rm_valid_session_id(id) || !is_session_dir(sub)) {
            int rc = by_suffix(path, 0, id, whole, sizeof whole, err, errsz);
            if (rc == 2) return 2;
            if (rc == 0) id = whole;
        }
        if (!rm_valid_session_id(id)) {
            snprintf(err, errsz, "--session %s: not a session id", id);
            return 2;
        }
        if (!rm_sink_session_ok(path, id, why, sizeof why)) {
            snprintf(err, errsz, "%s, refused", why);
            return 2;
        }
        if ((size_t)snprintf(out, outsz, "%s/%s", path, id) >= outsz) {
            snprintf(err, errsz, "%s: path too long", path);
            return 2;
        }
        if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode) || !is_session_dir(out)) {
            snprintf(err, errsz, "%s: no session %s there", path, id);
            return 2;
        }
        return 0;
    }
    if (is_session_dir(path)) {
        snprintf(out, outsz, "%s", path);
        return 0;
    }
    /* PATH/latest: only a link to a session id of PATH (never a path out of it). */
    if (rm_sink_read_latest(path, latest, sizeof latest) &&
        rm_sink_session_ok(path, latest, why, sizeof why) &&
        (size_t)snprintf(out, outsz, "%s/%s", path, latest) < outsz && stat(out, &st) == 0 &&
        S_ISDIR(st.st_mode) && is_session_dir(out))
        return 0;
    /* No latest link: the newest session by id (ids sort by start time). */
    DIR *dp = opendir(path);
    char best[256] = "";
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp))) {
            char sub[4096];
            if (!rm_valid_session_id(e->d_name) || strlen(e->d_name) >= sizeof best ||
                !rm_sink_session_ok(path, e->d_name, why, sizeof why))
                continue;
            if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= sizeof sub) continue;
            if (strcmp(e->d_name, best) > 0 && has_file(sub, "session.json"))
                snprintf(best, sizeof best, "%s", e->d_name);
        }
        closedir(dp);
    }
    if (best[0] && (size_t)snprintf(out, outsz, "%s/%s", path, best) < outsz) return 0;
    snprintf(err, errsz, "%s: not a session folder, and no sessions in it", path);
    return 2;
}

int rm_select_session(const char *who, const char *path, const char *id, char *out, size_t outsz,
                      char *err, size_t errsz)
{
    return select_session(who, path, id, false, out, outsz, err, errsz);
}

int rm_select_live_session(const char *who, const char *path, char *out, size_t outsz, char *err,
                           size_t errsz)
{
    return select_session(who, path, NULL, true, out, outsz, err, errsz);
}

const char *rm_default_sink_path(int session_ok, char *err, size_t errsz)
{
    if ((session_ok && is_session_dir(".")) || rm_sink_is_sink_dir(".")) return ".";
    struct stat st;
    if (stat(RM_DEFAULT_SINK, &st) == 0 && S_ISDIR(st.st_mode)) return RM_DEFAULT_SINK;
    snprintf(err, errsz,
             "no sink here: the current folder is not a sink%s, and there is no ./%s (give "
             "the sink's path)",
             session_ok ? " or a session folder" : "", RM_DEFAULT_SINK);
    return NULL;
}
