#include "sink/names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "model/streams.h"

int rm_valid_session_id(const char *id)
{
    if (!id || !*id || *id == '.') return 0;
    size_t n = 0;
    for (const char *p = id; *p; p++, n++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
        if (!ok || n >= RM_SESSION_ID_MAX) return 0;
    }
    return 1;
}

int rm_valid_segment_file(const char *file, const char *stream_name)
{
    int k, sealed;
    if (!file || !rm_segment_parse_name(file, &k, &sealed)) return 0;
    return !stream_name || !strcmp(stream_name, rm_stream_defs[k].name);
}

int rm_sink_session_ok_at(int dfd, const char *sink_dir, const char *id, char *why, size_t whysz)
{
    if (!rm_valid_session_id(id)) {
        snprintf(why, whysz, "'%s' is not a session id", id ? id : "");
        return 0;
    }
    struct stat st;
    int rc;
    if (dfd >= 0) {
        rc = fstatat(dfd, id, &st, AT_SYMLINK_NOFOLLOW);
    } else {
        char path[PATH_MAX + RM_SESSION_ID_MAX + 8];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", sink_dir, id) >= sizeof path) {
            snprintf(why, whysz, "%s/%s: path too long", sink_dir, id);
            return 0;
        }
        rc = lstat(path, &st);
    }
    if (rc != 0) return 1; /* gone: nothing of it will be found */
    if (S_ISLNK(st.st_mode)) {
        snprintf(why, whysz, "%s/%s: session folder is a symbolic link", sink_dir, id);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, whysz, "%s/%s: session folder is not a directory", sink_dir, id);
        return 0;
    }
    return 1;
}

int rm_sink_session_ok(const char *sink_dir, const char *id, char *why, size_t whysz)
{
    return rm_sink_session_ok_at(-1, sink_dir, id, why, whysz);
}

int rm_sink_read_latest(const char *sink_dir, char *id, size_t idcap)
{
    char path[PATH_MAX + 16], link[RM_SESSION_ID_MAX + 2];
    if ((size_t)snprintf(path, sizeof path, "%s/latest", sink_dir) >= sizeof path) return 0;
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) return 0;
    link[n] = '\0';
    if (!rm_valid_session_id(link) || !strcmp(link, "latest") || (size_t)n >= idcap) return 0;
    memcpy(id, link, (size_t)n + 1);
    return 1;
}

int rm_sink_open_session_dir(const char *sink_dir, const char *id)
{
    if (!rm_valid_session_id(id)) {
        errno = EINVAL;
        return -1;
    }
    int dfd = open(sink_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    int sfd = openat(dfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(dfd);
    errno = e;
    return sfd;
}

static atomic_long ignored_entries;

long rm_sink_ignored_entries(void)
{
    return atomic_load(&ignored_entries);
}

/* A segment file name that fits its entry's state: a sealed entry (retention's list, or
 * "sealed" in a state file) names `<stem>-NNNNNN.csv`, an active one `<stem>.csv`. */
static int fits_state(const char *file, const char *stream, const char *state)
{
    int k, sealed;
    if (!rm_valid_segment_file(file, stream) || !rm_segment_parse_name(file, &k, &sealed)) return 0;
    return sealed == !(state && !strcmp(state, "active"));
}

int rm_sink_unlink_segment(const char *sink_dir, const char *id, const char *file)
{
    /* Retention deletes sealed segments only: never a live `<stem>.csv`, whatever a sink
     * file says. */
    if (!fits_state(file, NULL, "sealed")) {
        atomic_fetch_add(&ignored_entries, 1);
        errno = EINVAL;
        return -1;
    }
    int sfd = rm_sink_open_session_dir(sink_dir, id);
    if (sfd < 0) return errno == ENOENT ? 0 : -1;
    int rc = unlinkat(sfd, file, 0);
    int e = errno;
    close(sfd);
    if (rc != 0 && e == ENOENT) return 0;
    errno = e;
    return rc;
}

/* A name from a file, fit for one line on a terminal: control bytes become '?'. */
static const char *shown(const char *s, char *buf, size_t cap)
{
    size_t j = 0;
    for (; s && *s && j + 1 < cap; s++)
        buf[j++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[j] = '\0';
    return buf;
}

int rm_manifest_confine(json_t *m, const char *sink_dir, const char *file_name)
{
    char b1[256], b2[256];
    int dropped = 0;
    char why[PATH_MAX + 512];
    /* The id of the last entry kept (its string lives while the entry does): a session's
     * entry and segments follow each other, so its folder is looked at once for them all. */
    const char *last_ok = NULL;
    json_t *arr = json_object_get(m, "sessions");
    for (size_t i = 0; i < json_array_size(arr);) {
        const char *id = json_string_value(json_object_get(json_array_get(arr, i), "session_id"));
        if (rm_sink_session_ok(sink_dir, id, why, sizeof why)) {
            last_ok = id;
            i++;
            continue;
        }
        fprintf(stderr, "runmon: %s/%s: session entry '%s' ignored: %s\n", sink_dir, file_name,
                shown(id, b1, sizeof b1), shown(why, b2, sizeof b2));
        json_array_remove(arr, i);
        dropped++;
    }
    arr = json_object_get(m, "segments");
    for (size_t i = 0; i < json_array_size(arr);) {
        const json_t *e = json_array_get(arr, i);
        const char *id = json_string_value(json_object_get(e, "session_id"));
        const char *file = json_string_value(json_object_get(e, "file"));
        const char *stream = json_string_value(json_object_get(e, "stream"));
        const char *state = json_string_value(json_object_get(e, "state"));
        int ok = (id && last_ok && !strcmp(id, last_ok)) ||
                 rm_sink_session_ok(sink_dir, id, why, sizeof why);
        if (ok && !rm_valid_segment_file(file, stream)) {
            ok = 0;
            snprintf(why, sizeof why, "'%s' is not a segment file name of stream '%s'",
                     file ? file : "", stream ? stream : "");
        } else if (ok && !fits_state(file, stream, state)) {
            ok = 0;
            snprintf(why, sizeof why, "a%s segment is named %s",
                     state && !strcmp(state, "active") ? "n active" : " sealed",
                     state && !strcmp(state, "active") ? "<stream>.csv" : "<stream>-NNNNNN.csv");
        }
        if (ok) {
            last_ok = id;
            i++;
            continue;
        }
        fprintf(stderr, "runmon: %s/%s: segment entry '%s' of session '%s' ignored: %s\n", sink_dir,
                file_name, shown(file, b1, sizeof b1), shown(id, b2, sizeof b2),
                shown(why, why, sizeof why));
        json_array_remove(arr, i);
        dropped++;
    }
    atomic_fetch_add(&ignored_entries, dropped);
    return dropped;
}
