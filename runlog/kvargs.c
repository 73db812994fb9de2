#include "runlog/kvargs.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runlog/runlog.h"

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* strtod in the C locale whatever the program's LC_NUMERIC says: "1.5" must mean 1.5. */
static double strtod_c(const char *s, char **end)
{
    pthread_once(&c_locale_once, c_locale_init);
    return c_locale ? strtod_l(s, end, c_locale) : strtod(s, end);
}

/* A printable, bounded copy of user text for a one-line message. */
static const char *shown(const char *s, char *buf, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 4 < n; i++)
        buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (s[i])
        memcpy(buf + i, "...", 4);
    else
        buf[i] = '\0';
    return buf;
}

__attribute__((format(printf, 2, 3))) static int fail(int err, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rm_runlog_seterr("%s", msg);
    errno = err;
    return -1;
}

bool rm_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + len;
    while (s < end) {
        unsigned c = *s;
        if (c < 0x80) {
            s++;
            continue;
        }
        int n;
        unsigned cp, min;
        if ((c & 0xE0) == 0xC0)
            n = 1, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            n = 2, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            n = 3, cp = c & 0x07, min = 0x10000;
        else
            return false;
        if (end - s <= n) return false;
        for (int i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80) return false;
            cp = cp << 6 | (s[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        s += n + 1;
    }
    return true;
}

int rm_text_check(const char *s, const char *what)
{
    if (!s || !*s) return fail(EINVAL, "empty %s", what);
    size_t len = strlen(s);
    if (!rm_utf8_valid(s, len)) return fail(EINVAL, "%s is not valid UTF-8", what);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        /* C0, DEL, and the C1 range U+0080..U+009F (encoded C2 80..C2 9F). */
        if (c < 0x20 || c == 0x7f || (c == 0xC2 && (unsigned char)s[i + 1] <= 0x9F))
            return fail(EINVAL, "%s contains a control character", what);
    }
    return 0;
}

bool rm_is_json_number(const char *s)
{
    const char *p = s;
    if (*p == '-') p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

int rm_parse_seconds(const char *s, double *out)
{
    char b[72];
    if (!s || !*s) return fail(EINVAL, "empty SECONDS");
    const char *u = (*s == '-' || *s == '+') ? s + 1 : s;
    if (!strcasecmp(u, "nan") || !strcasecmp(u, "inf") || !strcasecmp(u, "infinity"))
        return fail(EINVAL, "SECONDS '%s' is not a finite number", shown(s, b, sizeof b));
    if (*s == '-' && rm_is_json_number(s))
        return fail(EINVAL, "SECONDS '%s' is negative", shown(s, b, sizeof b));
    if (!rm_is_json_number(s))
        return fail(EINVAL, "SECONDS '%s' is not a number", shown(s, b, sizeof b));
    double v = strtod_c(s, NULL);
    if (!isfinite(v))
        return fail(EINVAL, "SECONDS '%s' is not a finite number", shown(s, b, sizeof b));
    *out = v;
    return 0;
}

json_t *rm_number_or_string(const char *v)
{
    if (rm_is_json_number(v)) {
        if (!strpbrk(v, ".eE")) {
            errno = 0;
            long long i = strtoll(v, NULL, 10);
            if (errno != ERANGE) return json_integer(i);
            /* Too big for int64: kept exactly, as a string, rather than rounded. */
        } else {
            double d = strtod_c(v, NULL);
            if (isfinite(d)) return json_real(d);
        }
    }
    return json_string(v);
}

/* VALUE of KEY=VALUE: a number, true/false/null, or a string. */
static json_t *typed_value(const char *v)
{
    if (!strcmp(v, "true")) return json_true();
    if (!strcmp(v, "false")) return json_false();
    if (!strcmp(v, "null")) return json_null();
    return rm_number_or_string(v);
}

int rm_kv_parse(const char *arg, char **key, json_t **value)
{
    char b[72];
    const char *eq = strchr(arg, '=');
    if (!eq)
        return fail(EINVAL, "argument '%s' has no '=' (expected KEY=VALUE or KEY:=JSON)",
                    shown(arg, b, sizeof b));
    bool raw = eq > arg && eq[-1] == ':';
    size_t klen = (size_t)((raw ? eq - 1 : eq) - arg);
    char *k = strndup(arg, klen);
    if (!k) return fail(ENOMEM, "out of memory");
    if (rm_text_check(k, "key") < 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s in argument '%s'", rm_runlog_errmsg(),
                 shown(arg, b, sizeof b));
        free(k);
        return fail(EINVAL, "%s", msg);
    }
    const char *v = eq + 1;
    json_t *j;
    if (raw) {
        json_error_t jerr;
        j = json_loads(v, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
        if (!j) {
            char kb[72];
            rm_runlog_seterr("invalid JSON for key '%s': %s", shown(k, kb, sizeof kb), jerr.text);
            free(k);
            errno = EINVAL;
            return -1;
        }
    } else {
        if (!rm_utf8_valid(v, strlen(v))) {
            int rc = fail(EINVAL, "value of key '%s' is not valid UTF-8", shown(k, b, sizeof b));
            free(k);
            return rc;
        }
        j = typed_value(v);
        if (!j) {
            free(k);
            return fail(ENOMEM, "out of memory");
        }
    }
    *key = k;
    *value = j;
    return 0;
}

int rm_kv_set(json_t *obj, const char *arg)
{
    char *k;
    json_t *v;
    if (rm_kv_parse(arg, &k, &v) < 0) return -1;
    int rc = json_object_set_new(obj, k, v);
    free(k);
    if (rc < 0) return fail(ENOMEM, "out of memory");
    return 0;
}

json_t *rm_kv_object(int n, const char *const *args)
{
    json_t *obj = json_object();
    if (!obj) {
        fail(ENOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (rm_kv_set(obj, args[i]) < 0) {
            int e = errno;
            json_decref(obj);
            errno = e;
            return NULL;
        }
    }
    return obj;
}
