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

/* The RunLog ts form of a CLOCK_REALTIME instant, or null when ns is 0. */
json_t *rm_jts_or_null(int64_t ns);

/* Writes j as one compact line (reals with 15 significant digits) and a newline, replacing
 * path atomically (rm_write_file_atomic). 0, or -1 with errno. */
int rm_json_save_atomic(const char *path, const json_t *j);
/* The same through the temp file tmp (rm_write_file_atomic_via; NULL: the usual one). */
int rm_json_save_atomic_via(const char *path, const char *tmp, const json_t *j);
/* The same without the fsyncs (rm_write_file_replace_via: not durable until the next
 * rm_json_save_atomic_via of path). */
int rm_json_save_replace_via(const char *path, const char *tmp, const json_t *j);
/* The text those write: j as one compact line (reals with 15 significant digits) and a
 * newline, NUL-terminated, *len bytes without the NUL; malloc'ed. NULL (ENOMEM) on failure. */
char *rm_json_line(const json_t *j, size_t *len);

/* qsort comparator for an array of const char * (plain strcmp order). */
int rm_cmp_cstr(const void *a, const void *b);

#endif
