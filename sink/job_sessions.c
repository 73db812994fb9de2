#include "sink/job_sessions.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when DIR/NAME/session.json belongs to job_id. */
static int of_job(const char *dir, const char *name, const char *job_id)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s/session.json", dir, name) >= (int)sizeof path) return 0;
    json_t *s = json_load_file(path, 0, NULL);
    const char *id = json_string_value(json_object_get(json_object_get(s, "job"), "job_id"));
    int match = id && !strcmp(id, job_id);
    json_decref(s);
    return match;
}

json_t *rm_sink_job_sessions(const char *sink_dir, const char *job_id)
{
    DIR *dp = opendir(sink_dir);
    if (!dp) return NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "latest")) continue;
        if (!of_job(sink_dir, e->d_name, job_id)) continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);
            if (!more) break;
            names = more;
        }
        if (!(names[n] = strdup(e->d_name))) break;
        n++;
    }
    closedir(dp);
    qsort(names, n, sizeof *names, by_name);
    json_t *ids = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(ids, json_string(names[i]));
        free(names[i]);
    }
    free(names);
    return ids;
}
