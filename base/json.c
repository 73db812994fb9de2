#include "base/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "base/fileio.h"
#include "base/rm_time.h"

json_t *rm_jstr(const char *v)
{
    json_t *j = json_string(v);
    if (j) return j;
    char *copy = strdup(v);
    if (!copy) return json_string("?");
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80) *p = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

const char *rm_jget_str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

const json_t *rm_json_at(const json_t *o, const char *path)
{
    char k[64];
    const json_t *v = o;
    while (v && *path) {
        const char *d = strchr(path, '.');
        size_t n = d ? (size_t)(d - path) : strlen(path);
        size_t c = n < sizeof k ? n : sizeof k - 1;
        memcpy(k, path, c);
        k[c] = '\0';
        v = json_object_get(v, k);
        path += n + (d ? 1 : 0);
    }
    return v;
}

void rm_json_set_at(json_t *o, const char *path, json_t *v)
{
    const char *d = strchr(path, '.');
    if (!d) {
        json_object_set_new(o, path, v);
        return;
    }
    char k[64];
    size_t n = (size_t)(d - path), c = n < sizeof k ? n : sizeof k - 1;
    memcpy(k, path, c);
    k[c] = '\0';
    json_t *in = json_object_get(o, k);
    if (!json_is_object(in)) {
        in = json_object();
        json_object_set_new(o, k, in);
    }
    rm_json_set_at(in, d + 1, v);
}

json_t *rm_jts_or_null(int64_t ns)
{
    if (!ns) return json_null();
    char buf[RM_TS_BUFSZ];
    rm_format_ts(ns, buf);
    return json_string(buf);
}

int rm_cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int rm_json_save_atomic(const char *path, const json_t *j)
{
    return rm_json_save_atomic_via(path, NULL, j);
}

int rm_json_save_atomic_via(const char *path, const char *tmp, const json_t *j)
{
    return rm_json_save_via(path, tmp, j, 1, NULL, NULL);
}

/* j as one compact line (reals with 15 significant digits) and a newline, NUL-terminated,
 * *len bytes without the NUL; malloc'ed. NULL (ENOMEM) on failure. */
static char *json_line(const json_t *j, size_t *len)
{
    char *t = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15));
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = strlen(t);
    char *t2 = realloc(t, n + 2);
    if (!t2) {
        free(t);
        errno = ENOMEM;
        return NULL;
    }
    t2[n] = '\n';
    t2[n + 1] = '\0';
    *len = n + 1;
    return t2;
}

int rm_json_save_via(const char *path, const char *tmp, const json_t *j, int durable, char **text,
                     size_t *len)
{
    size_t n;
    char *t = json_line(j, &n);
    if (!t) return -1;
    int rc = !durable ? rm_write_file_replace_via(path, tmp, t, n)
             : tmp    ? rm_write_file_atomic_via(path, tmp, t, n)
                      : rm_write_file_atomic(path, t, n);
    int e = errno;
    if (text && rc == 0) {
        *text = t;
        *len = n;
        t = NULL;
    }
    free(t);
    errno = e;
    return rc;
}

json_t *rm_str_or_null(const char *v)
{
    return v && *v ? json_string(v) : json_null();
}

json_t *rm_jnum(double v, int decimals)
{
    if (!isfinite(v)) return json_null();
    double k = pow(10, decimals);
    double r = round(v * k) / k;
    return json_real(r == 0 ? 0 : r);
}
