/* Command-line values for JSON records: KEY=VALUE / KEY:=JSON arguments, SECONDS, and the
 * text checks every name, key and type goes through. Used by the RunLog CLI and by any
 * runmon module that takes such arguments. Failures set errno (EINVAL, or ENOMEM) and the
 * calling thread's message, read with rm_runlog_errmsg().
 */
#ifndef RUNMON_KVARGS_H
#define RUNMON_KVARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses one argument (split at the first '='):
 *   KEY=VALUE  a JSON number (strict JSON grammar, finite, integers within int64) becomes a
 *              number; true, false and null become themselves; anything else, the empty
 *              string included, is kept as a string ("007", "1e999", "nan" are strings).
 *   KEY:=JSON  VALUE is parsed as any JSON value (numbers must be finite).
 * KEY must pass rm_text_check. VALUE strings must be valid UTF-8 (control characters are
 * allowed: they are escaped when written). On success *key (malloc'd) and *value (a new
 * reference) belong to the caller. */
int rm_kv_parse(const char *arg, char **key, json_t **value);

/* Parses arg and sets it in obj (a later duplicate key replaces an earlier one). */
int rm_kv_set(json_t *obj, const char *arg);

/* A new object from n arguments, or NULL on the first bad one. */
json_t *rm_kv_object(int n, const char *const *args);

/* True when s is exactly one JSON number (RFC 8259 grammar, no surrounding space). */
bool rm_is_json_number(const char *s);

/* v as a JSON number when it is exactly one and finite (integers within int64; a longer
 * integer stays a string, exact), else as a string (v must be UTF-8; "true" stays a string).
 * The rule of sweep parameters (runmon record --param). A new reference. */
json_t *rm_number_or_string(const char *v);

/* Parses SECONDS: a JSON number, finite and not negative. */
int rm_parse_seconds(const char *s, double *out);

/* Checks a name, key or type: non-empty, valid UTF-8, no control characters (C0, DEL, C1).
 * `what` names it in the message ("phase name", "key", ...). */
int rm_text_check(const char *s, const char *what);

/* True when s is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
bool rm_utf8_valid(const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif
