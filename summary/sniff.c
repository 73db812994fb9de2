#include "summary/sniff.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "model/dmon_text.h"
#include "model/streams.h"
#include "summary/smi_apps.h"

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
    static const char *const words[] = {"nvidia", "nvml",   "gpu",         "cuda",
                                        "driver", "device", "valid field", "nvsmi"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t k = strlen(words[w]);
        for (size_t i = 0; i + k <= n; i++)
            if (!strncasecmp(s + i, words[w], k)) return true;
    }
    return false;
}

/* A header or data row: 3 or more fields (split at commas, else at blanks), at least half
 * of them numbers or field names, or fewer that all are. */
static bool row_like_nvsmi(const char *s, size_t n)
{
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
            bool ok = numberish(f, fn) || fieldish(f, fn);
            /* Split at blanks, a row is dmon's: a GPU index or a date first. */
            if (sep == ' ' && !fields && !numberish(f, fn)) return false;
            fields++;
            good += ok;
        }
        p = e + 1;
    }
    /* A one-field row: a number ("100.5", --query-gpu=power.draw,noheader) or a name. */
    return (fields >= 3 && 2 * good >= fields) || (fields && good == fields);
}

/* dmon's or pmon's header or units line: after any -o D/T columns (Date, Time; YYYYMMDD,
 * HH:MM:SS), the first column is gpu (its units line: Idx). */
static bool smi_header(const char *s, size_t n)
{
    struct rm_dmon_line l;
    int k = rm_dmon_classify(s, n, &l);
    if (k != RM_DMON_HEADER && k != RM_DMON_UNITS) return false;
    static const char *const dt[] = {"Date", "Time", "YYYYMMDD", "HH:MM:SS"};
    for (size_t i = 0; i < l.n; i++) {
        bool skip = false;
        for (size_t d = 0; d < sizeof dt / sizeof dt[0]; d++)
            skip |= l.tok[i].len == strlen(dt[d]) && !memcmp(l.tok[i].s, dt[d], l.tok[i].len);
        if (!skip)
            return l.tok[i].len == 3 && !memcmp(l.tok[i].s, k == RM_DMON_HEADER ? "gpu" : "Idx", 3);
    }
    return false;
}

/* first: the file's first line that is not blank, the only place nvidia-smi's own one-line
 * error (naming NVIDIA, NVML, a GPU, CUDA or the driver) stands. A '#' line is dmon's or
 * pmon's header ("# gpu ..."), or its units ("# Idx ..."), never a Markdown heading. */
static bool line_like_nvsmi(const char *s, size_t n, bool first)
{
    trim(&s, &n);
    if (!n) return false;
    if (s[0] == '#') return smi_header(s, n);
    /* nvidia-smi's own banner: its default table ("| NVIDIA-SMI 580.159.04 ..."), a `-q`
     * report ("====NVSMI LOG===="), its errors ("NVIDIA-SMI has failed ..."). */
    if (memmem(s, n, "NVIDIA-SMI", 10) || memmem(s, n, "NVSMI LOG", 9)) return true;
    /* A line of code or markup (a comment or list item naming a GPU) is no error message. */
    if (first && (isalpha((unsigned char)s[0]) || s[0] == '=') && names_nvidia(s, n)) return true;
    return row_like_nvsmi(s, n);
}

/* buf less a UTF-8 byte order mark. */
static void skip_bom(const char **buf, size_t *len)
{
    if (*len >= 3 && !memcmp(*buf, "\xef\xbb\xbf", 3)) *buf += 3, *len -= 3;
}

enum rm_sniff rm_sniff_text(const char *buf, size_t len)
{
    skip_bom(&buf, &len);
    const unsigned char *u = (const unsigned char *)buf;
    size_t i = 0;
    while (i < len && isspace(u[i]))
        i++;
    if (i == len) return RM_SNIFF_EMPTY;
    if (is_binary(u, len)) return RM_SNIFF_BINARY;
    /* Only the first lines: nvidia-smi's and runmon's files are rows of one shape from the
     * start (a cut-off first row, a notice or two may come first), while a page of prose or
     * Markdown can hold a line of numbers anywhere. */
    enum { LOOK = 5 };
    const char *p = buf + i, *end = buf + len;
    size_t seen = 0;
    while (p < end && seen < LOOK) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (line_like_nvsmi(p, n, seen == 0)) return RM_SNIFF_NVSMI;
        const char *t = p;
        trim(&t, &n);
        seen += n > 0;
        p = nl ? nl + 1 : end;
    }
    return RM_SNIFF_TEXT;
}

/* The kind a header line names: pmon's ('#', gpu and pid), the per-process queries' (CSV);
 * 0 for a line that is no header, -1 for another header. */
static int header_kind(const char *s, size_t n)
{
    if (s[0] == '#') {
        struct rm_dmon_line l;
        if (rm_dmon_classify(s, n, &l) != RM_DMON_HEADER) return 0;
        return rm_dmon_find(&l, "pid") >= 0 ? RM_INPUT_PMON_TEXT : -1;
    }
    enum { MAXF = 32 };
    const char *f[MAXF];
    size_t len[MAXF], nf = 0;
    const char *p = s, *end = s + n;
    while (p <= end && nf < MAXF) {
        const char *e = memchr(p, ',', (size_t)(end - p));
        if (!e) e = end;
        const char *x = p;
        size_t xn = (size_t)(e - p);
        trim(&x, &xn);
        f[nf] = x;
        len[nf++] = xn;
        p = e + 1;
    }
    if (nf < 2) return 0;
    int k = rm_smi_apps_header_kind(f, len, nf);
    return k == 1 ? RM_INPUT_COMPUTE_APPS : k == 2 ? RM_INPUT_ACCOUNTED_APPS : 0;
}

int rm_sniff_apps_kind(const char *buf, size_t len)
{
    skip_bom(&buf, &len);
    const char *p = buf, *end = buf + len;
    size_t seen = 0;
    while (p < end && seen < 5) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *s = p;
        size_t n = (size_t)((nl ? nl : end) - p);
        p = nl ? nl + 1 : end;
        trim(&s, &n);
        if (!n) continue;
        seen++;
        int k = header_kind(s, n);
        if (k) return k;
    }
    return -1;
}

/* The first 64 KiB of path (malloc'd, *got bytes), or NULL: the head both sniffers judge. */
static char *read_head(const char *path, size_t *got)
{
    enum { HEAD = 64 * 1024 };
    char *buf = malloc(HEAD + 1);
    ssize_t n = buf ? rm_read_head(AT_FDCWD, path, buf, HEAD + 1) : -1;
    if (n < 0) {
        free(buf);
        return NULL;
    }
    *got = (size_t)n;
    return buf;
}

enum rm_sniff rm_sniff_named_file(const char *path, int *kind)
{
    struct stat st;
    size_t got;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return RM_SNIFF_EMPTY;
    char *buf = read_head(path, &got);
    if (!buf) return RM_SNIFF_EMPTY;
    enum rm_sniff r = rm_sniff_text(buf, got);
    int k = r == RM_SNIFF_NVSMI ? rm_sniff_apps_kind(buf, got) : -1;
    if (k >= 0) *kind = k;
    free(buf);
    return r;
}

enum rm_sniff rm_sniff_file(const char *path)
{
    size_t got;
    char *buf = read_head(path, &got);
    if (!buf) return RM_SNIFF_EMPTY;
    enum rm_sniff r = rm_sniff_text(buf, got);
    free(buf);
    return r;
}
