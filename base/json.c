#include "base/json.h"

#include <stdlib.h>
#include <string.h>

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
