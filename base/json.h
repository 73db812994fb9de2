/* Small jansson helpers used by every layer that reads or writes JSON. */
#ifndef RUNMON_BASE_JSON_H
#define RUNMON_BASE_JSON_H

#include <jansson.h>
#include <stdint.h>

/* A JSON string of v; bytes that are not UTF-8 become "?" (argv and env may hold any). */
json_t *rm_jstr(const char *v);

/* A JSON string of v, or null when v is NULL or empty. */
json_t *rm_str_or_null(const char *v);

/* The string value of key k in object o, or "" when absent or not a string. Never NULL, so
 * callers can strcmp it directly. */
const char *rm_jget_str(const json_t *o, const char *k);

/* The value at a dotted path of object o ("vram_mb.peak": member peak of member vram_mb, as
 * the summary figures' keys are written: model/figures.h), or NULL when a step is missing.
 * A step of 64 bytes or more is cut to 63. */
const json_t *rm_json_at(const json_t *o, const char *path);

/* Sets v (its reference taken) at a dotted path of object o: "a.b" is member b of member a,
 * a made (an object, after o's members so far) on its first use; the summary's figures are
 * so written in their rows' order. A step of 64 bytes or more is cut to 63. */
void rm_json_set_at(json_t *o, const char *path, json_t *v);

/* A number rounded to `decimals` places, as the summary writes its figures; null when not
 * finite, and 0 for a -0 (no "-0.0"). */
json_t *rm_jnum(double v, int decimals);

/* The RunLog ts form of a CLOCK_REALTIME instant, or null when ns is 0. */
json_t *rm_jts_or_null(int64_t ns);

/* Writes j as one compact line (reals with 15 significant digits) and a newline, replacing
 * path atomically (rm_write_file_atomic). 0, or -1 with errno. */
int rm_json_save_atomic(const char *path, const json_t *j);
/* The same through the temp file tmp (rm_write_file_atomic_via; NULL: the usual one). */
int rm_json_save_atomic_via(const char *path, const char *tmp, const json_t *j);
/* rm_json_save_atomic_via when durable, else the same without the fsyncs
 * (rm_write_file_replace_via: not durable until the next durable save of path). With text not
 * NULL, a save that landed hands over what it wrote: *text (malloc'ed, NUL-terminated, the
 * caller frees it), *len bytes without the NUL. */
int rm_json_save_via(const char *path, const char *tmp, const json_t *j, int durable, char **text,
                     size_t *len);

/* qsort comparator for an array of const char * (plain strcmp order). */
int rm_cmp_cstr(const void *a, const void *b);

#endif
