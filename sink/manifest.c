#include "sink/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "sink/names.h"

json_t *rm_manifest_segment_entry(const char *sid, const char *file, int stream_ix, int sealed,
                                  uint64_t rows, uint64_t bytes, int64_t first, int64_t last)
{
    json_t *seg = json_object();
    json_object_set_new(seg, "file", json_string(file));
    json_object_set_new(seg, "stream", json_string(rm_stream_defs[stream_ix].name));
    json_object_set_new(seg, "session_id", json_string(sid));
    json_object_set_new(seg, "state", json_string(sealed ? "sealed" : "active"));
    json_object_set_new(seg, "pruned", json_false());
    json_object_set_new(seg, "first_row_at", rm_jts_or_null(first));
    json_object_set_new(seg, "last_row_at", rm_jts_or_null(last));
    json_object_set_new(seg, "rows", json_integer((json_int_t)rows));
    json_object_set_new(seg, "bytes", json_integer((json_int_t)bytes));
    return seg;
}

json_t *rm_manifest_new(void)
{
    json_t *m = json_object();
    json_object_set_new(m, "format", json_string(RM_MANIFEST_FORMAT));
    json_object_set_new(m, "schema_version", json_integer(RM_MANIFEST_SCHEMA_VERSION));
    json_object_set_new(m, "updated_at", json_null());
    json_object_set_new(m, "counters", json_object());
    json_object_set_new(m, "sessions", json_array());
    json_object_set_new(m, "segments", json_array());
    rm_manifest_update_counters(m);
    return m;
}

/* rm_manifest_load, and how many entries the confinement rule dropped (sink/names.h). */
static int load_confined(const char *sink_dir, json_t **out, int *dropped, char *err, size_t errsz)
{
    *out = NULL;
    *dropped = 0;
    char path[2 * PATH_MAX + 512];
    snprintf(path, sizeof path, "%s/manifest.json", sink_dir);
    if (access(path, F_OK) != 0) return 1;
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    if (!m) {
        snprintf(err, errsz, "%s: line %d: %s", path, je.line, je.text);
        return -1;
    }
    const char *fmt = json_string_value(json_object_get(m, "format"));
    if (!fmt || strcmp(fmt, RM_MANIFEST_FORMAT) || !json_is_array(json_object_get(m, "sessions")) ||
        !json_is_array(json_object_get(m, "segments"))) {
        snprintf(err, errsz, "%s: not a runmon sink manifest", path);
        json_decref(m);
        return -1;
    }
    if (!json_is_object(json_object_get(m, "counters")))
        json_object_set_new(m, "counters", json_object());
    *dropped = rm_manifest_confine(m, sink_dir, "manifest.json");
    *out = m;
    return 0;
}

int rm_manifest_load(const char *sink_dir, json_t **out, char *err, size_t errsz)
{
    int dropped;
    return load_confined(sink_dir, out, &dropped, err, errsz);
}

int rm_manifest_save(const char *sink_dir, json_t *m)
{
    char path[2 * PATH_MAX + 512];
    if (snprintf(path, sizeof path, "%s/manifest.json", sink_dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    json_object_set_new(m, "updated_at", rm_jts_or_null(rm_now_realtime_ns()));
    rm_manifest_update_counters(m);
    return rm_json_save_atomic(path, m);
}

int rm_manifest_lock(const char *sink_dir)
{
    char path[2 * PATH_MAX + 512];
    if (snprintf(path, sizeof path, "%s/.manifest.lock", sink_dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, rm_file_mode());
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
    }
    return fd;
}

void rm_manifest_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

json_t *rm_manifest_find_session(const json_t *m, const char *session_id)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(m, "sessions"), i,
                       e) if (!strcmp(rm_jget_str(e, "session_id"), session_id)) return e;
    return NULL;
}

json_t *rm_manifest_find_segment(const json_t *m, const char *session_id, const char *file)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(m, "segments"), i, e)
    {
        if (!strcmp(rm_jget_str(e, "file"), file) &&
            !strcmp(rm_jget_str(e, "session_id"), session_id))
            return e;
    }
    return NULL;
}

json_t *rm_manifest_session_entry(const json_t *doc)
{
    json_t *e = json_deep_copy(doc);
    if (!e) return json_object();
    json_object_del(e, "format");
    json_object_del(e, "schema_version");
    json_int_t failures = 0;
    const char *last = NULL;
    const char *k;
    json_t *c;
    json_object_foreach(json_object_get(e, "collectors"), k, c)
    {
        failures += json_integer_value(json_object_get(c, "failure_event_count"));
        if (json_is_string(json_object_get(c, "last_error")))
            last = json_string_value(json_object_get(c, "last_error"));
    }
    json_object_set_new(e, "collector_failure_event_count", json_integer(failures));
    json_object_set_new(e, "last_error", last ? json_string(last) : json_null());
    return e;
}

void rm_manifest_put_session(json_t *m, json_t *entry)
{
    json_t *arr = json_object_get(m, "sessions");
    const char *id = rm_jget_str(entry, "session_id");
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) if (!strcmp(rm_jget_str(e, "session_id"), id))
    {
        json_t *old_sink = json_object_get(e, "sink");
        if (old_sink && !json_object_get(entry, "sink")) json_object_set(entry, "sink", old_sink);
        json_array_set_new(arr, i, entry);
        return;
    }
    json_array_append_new(arr, entry);
}

void rm_manifest_put_segment(json_t *m, json_t *seg)
{
    json_t *arr = json_object_get(m, "segments");
    const char *sid = rm_jget_str(seg, "session_id"), *file = rm_jget_str(seg, "file");
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        if (strcmp(rm_jget_str(e, "file"), file) || strcmp(rm_jget_str(e, "session_id"), sid))
            continue;
        if (json_is_true(json_object_get(e, "pruned"))) {
            json_object_set_new(seg, "pruned", json_true());
            json_object_set(seg, "pruned_at", json_object_get(e, "pruned_at"));
        }
        if (json_is_null(json_object_get(seg, "aggregate")) &&
            json_is_object(json_object_get(e, "aggregate")))
            json_object_set(seg, "aggregate", json_object_get(e, "aggregate"));
        json_array_set_new(arr, i, seg);
        return;
    }
    json_array_append_new(arr, seg);
}

static json_int_t jint(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

void rm_manifest_update_counters(json_t *m)
{
    json_int_t rollovers = 0, pruned = 0, pruned_bytes = 0, files = 0, bytes = 0, dropped = 0,
               werr = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(m, "segments"), i, e)
    {
        int sealed = !strcmp(rm_jget_str(e, "state"), "sealed");
        int is_pruned = json_is_true(json_object_get(e, "pruned"));
        rollovers += sealed;
        if (is_pruned) {
            pruned++;
            pruned_bytes += jint(e, "bytes");
        } else {
            files++;
            bytes += jint(e, "bytes");
        }
    }
    json_array_foreach(json_object_get(m, "sessions"), i, e)
    {
        json_t *sk = json_object_get(e, "sink");
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(sk, "rows_dropped"), k, v) dropped +=
            json_integer_value(v);
        werr += jint(sk, "write_errors");
    }
    json_t *c = json_object();
    json_object_set_new(c, "rollover_count", json_integer(rollovers));
    json_object_set_new(c, "pruned_segment_count", json_integer(pruned));
    json_object_set_new(c, "pruned_bytes", json_integer(pruned_bytes));
    json_object_set_new(c, "final_retained_files", json_integer(files));
    json_object_set_new(c, "final_retained_bytes", json_integer(bytes));
    json_object_set_new(c, "rows_dropped", json_integer(dropped));
    json_object_set_new(c, "write_errors", json_integer(werr));
    json_object_set_new(m, "counters", c);
}

/* Oldest first: by last row time, then session, then file name (numbered, so in order). */
static int seg_cmp(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(rm_jget_str(x, "last_row_at"), rm_jget_str(y, "last_row_at"));
    if (!c) c = strcmp(rm_jget_str(x, "session_id"), rm_jget_str(y, "session_id"));
    if (!c) c = strcmp(rm_jget_str(x, "file"), rm_jget_str(y, "file"));
    return c;
}

static void mark_pruned(json_t *e, json_t *chosen)
{
    json_object_set_new(e, "pruned", json_true());
    json_object_set_new(e, "pruned_at", rm_jts_or_null(rm_now_realtime_ns()));
    json_array_append(chosen, e);
}

size_t rm_manifest_plan_prune(json_t *m, int files_per_stream, uint64_t total_bytes, json_t *chosen)
{
    json_t *arr = json_object_get(m, "segments");
    size_t n = json_array_size(arr), ns = 0, before = json_array_size(chosen);
    json_t **sealed = calloc(n ? n : 1, sizeof *sealed);
    if (!sealed) return 0;
    uint64_t retained = 0;
    int per_stream[RM_STREAM_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        if (json_is_true(json_object_get(e, "pruned"))) continue;
        retained += (uint64_t)jint(e, "bytes");
        if (strcmp(rm_jget_str(e, "state"), "sealed")) continue;
        sealed[ns++] = e;
        for (int k = 0; k < RM_STREAM_COUNT; k++)
            if (!strcmp(rm_jget_str(e, "stream"), rm_stream_defs[k].name)) per_stream[k]++;
    }
    qsort(sealed, ns, sizeof *sealed, seg_cmp);
    if (files_per_stream > 0)
        for (size_t i = 0; i < ns; i++) {
            for (int k = 0; k < RM_STREAM_COUNT; k++)
                if (!strcmp(rm_jget_str(sealed[i], "stream"), rm_stream_defs[k].name) &&
                    per_stream[k] > files_per_stream) {
                    per_stream[k]--;
                    retained -= (uint64_t)jint(sealed[i], "bytes");
                    mark_pruned(sealed[i], chosen);
                }
        }
    if (total_bytes > 0)
        for (size_t i = 0; i < ns && retained > total_bytes; i++) {
            if (json_is_true(json_object_get(sealed[i], "pruned"))) continue;
            retained -= (uint64_t)jint(sealed[i], "bytes");
            mark_pruned(sealed[i], chosen);
        }
    free(sealed);
    return json_array_size(chosen) - before;
}
