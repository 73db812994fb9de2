#include "summary/sniff.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Bytes that are not UTF-8 (a sequence cut at the end of buf is not held against it). */
static bool bad_utf8(const unsigned char *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = p[i];
        size_t n = c < 0x80             ? 0
                   : (c & 0xe0) == 0xc0 ? 1
                   : (c & 0xf0) == 0xe0 ? 2
                   : (c & 0xf8) == 0xf0 ? 3
                                        : 9;
        if (n == 9 || (n == 1 && c < 0xc2)) return true;
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len) return false;
            if ((p[i + k] & 0xc0) != 0x80) return true;
        }
        i += n + 1;
    }
    return false;
}

/* A NUL, bytes that are not UTF-8, or more than 1 in 10 control bytes (a terminal's colour
 * codes in an error message are text). */
static bool is_binary(const unsigned char *p, size_t len)
{
    if (memchr(p, 0, len)) return true;
    size_t ctl = 0;
    for (size_t i = 0; i < len; i++)
        ctl += (p[i] < 0x20 && !strchr("\t\n\r\f\v\x1b", p[i])) || p[i] == 0x7f;
    return 10 * ctl > len || bad_utf8(p, len);
}

/* s[0..n) trimmed of blanks. */
static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s))
        (*s)++, (*n)--;
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* "12", "-3.5", "45 %", "300.12 W", "[N/A]", "N/A", "2026/11/21 10:15:02.113", "-". */
static bool numberish(const char *s, size_t n)
{
    if (!n) return false;
    if ((n == 3 && !strncasecmp(s, "N/A", 3)) || (n == 5 && !strncasecmp(s, "[N/A]", 5)) ||
        (n == 1 && *s == '-'))
        return true;
    return isdigit((unsigned char)s[0]) ||
           (n > 1 && (s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]));
}

/* "utilization.gpu", "memory.used [MiB]", "clocks.current.sm", "ts", "index", "pid": a
 * lower-case name with '.' or '_' (a unit in brackets after it), or one of the short ones. */
static bool fieldish(const char *s, size_t n)
{
    static const char *const plain[] = {"ts",  "timestamp", "index", "uuid", "name",
                                        "pid", "gpu",       "host",  "cmd",  "kind"};
    size_t w = 0;
    bool dot = false;
    while (w < n && (islower((unsigned char)s[w]) || isdigit((unsigned char)s[w]) || s[w] == '.' ||
                     s[w] == '_')) {
        dot |= s[w] == '.' || s[w] == '_';
        w++;
    }
    if (!w || !islower((unsigned char)s[0])) return false;
    const char *rest = s + w;
    size_t rn = n - w;
    trim(&rest, &rn);
    if (rn && !(rest[0] == '[' && rest[rn - 1] == ']')) return false;
    if (dot) return true;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strlen(plain[i]) == w && !strncmp(s, plain[i], w)) return true;
    return false;
}

static bool names_nvidia(const char *s, size_t n)
{
    static const char *const words[] = {"nvidia", "nvml", "gpu", "cuda", "driver"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t k = strlen(words[w]);
        for (size_t i = 0; i + k <= n; i++)
            if (!strncasecmp(s + i, words[w], k)) return true;
    }
    return false;
}

static bool line_like_nvsmi(const char *s, size_t n)
{
    trim(&s, &n);
    if (!n) return false;
    if (s[0] == '#' || names_nvidia(s, n)) return true;
    char sep = memchr(s, ',', n) ? ',' : ' ';
    size_t fields = 0, good = 0;
    const char *p = s, *end = s + n;
    while (p < end) {
        const char *e = memchr(p, sep, (size_t)(end - p));
        if (!e) e = end;
        const char *f = p;
        size_t fn = (size_t)(e - p);
        trim(&f, &fn);
        if (fn || sep == ',') {
            fields++;
            good += numberish(f, fn) || fieldish(f, fn);
        }
        p = e + 1;
    }
    return fields >= 3 && 2 * good >= fields;
}

enum rm_sniff rm_sniff_text(const char *buf, size_t len)
{
    const unsigned char *u = (const unsigned char *)buf;
    size_t i = 0;
    while (i < len && isspace(u[i]))
        i++;
    if (i == len) return RM_SNIFF_EMPTY;
    if (is_binary(u, len)) return RM_SNIFF_BINARY;
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (line_like_nvsmi(p, (size_t)((nl ? nl : end) - p))) return RM_SNIFF_NVSMI;
        p = nl ? nl + 1 : end;
    }
    return RM_SNIFF_TEXT;
}

enum rm_sniff rm_sniff_file(const char *path)
{
    enum { HEAD = 64 * 1024 };
    FILE *f = fopen(path, "rb");
    if (!f) return RM_SNIFF_EMPTY;
    char *buf = malloc(HEAD);
    size_t got = buf ? fread(buf, 1, HEAD, f) : 0;
    fclose(f);
    enum rm_sniff r = buf ? rm_sniff_text(buf, got) : RM_SNIFF_EMPTY;
    free(buf);
    return r;
}
