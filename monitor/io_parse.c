#include "monitor/io_parse.h"

#include <string.h>

/* The next line of [*s, end): sets [*ls, *le) and moves *s past its '\n'. 0 at the end. */
static int next_line(const char **s, const char *end, const char **ls, const char **le)
{
    if (*s >= end) return 0;
    const char *nl = memchr(*s, '\n', (size_t)(end - *s));
    *ls = *s;
    *le = nl ? nl : end;
    *s = nl ? nl + 1 : end;
    return 1;
}

static void skip_blanks(const char **p, const char *end)
{
    while (*p < end && (**p == ' ' || **p == '\t'))
        (*p)++;
}

/* A decimal u64 at *p (after blanks); -1 when none, or when it overflows. */
static int take_u64(const char **p, const char *end, uint64_t *out)
{
    skip_blanks(p, end);
    const char *q = *p;
    uint64_t v = 0;
    while (q < end && (unsigned)(*q - '0') <= 9) {
        unsigned d = (unsigned)(*q - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
        q++;
    }
    if (q == *p) return -1;
    if (q < end && *q != ' ' && *q != '\t' && *q != '\n') return -1;
    *p = q;
    *out = v;
    return 0;
}

/* A name of non-blank characters (up to stop, when not 0): -1 when empty or too long. */
static int take_name(const char **p, const char *end, char stop, char *out)
{
    skip_blanks(p, end);
    const char *q = *p;
    while (q < end && *q != ' ' && *q != '\t' && *q != '\n' && *q != stop)
        q++;
    size_t n = (size_t)(q - *p);
    if (n == 0 || n >= RM_IO_NAME_MAX) return -1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)(*p)[i] < 0x21 || (*p)[i] == 0x7f || (*p)[i] == ',' || (*p)[i] == '"')
            return -1; /* io.csv writes names bare */
    memcpy(out, *p, n);
    out[n] = '\0';
    *p = q;
    return 0;
}

static int disk_line(const char *p, const char *end, struct rm_disk_stat *d)
{
    uint64_t major, minor, v[11];
    if (take_u64(&p, end, &major) || take_u64(&p, end, &minor) || major > 0xffffffffu ||
        minor > 0xffffffffu)
        return -1;
    if (take_name(&p, end, 0, d->name)) return -1;
    for (int i = 0; i < 11; i++)
        if (take_u64(&p, end, &v[i])) return -1;
    /* Columns after the 11th (discards, flushes, and any a later kernel adds) are ignored. */
    d->major = (unsigned)major;
    d->minor = (unsigned)minor;
    d->read_sectors = v[2];
    d->write_sectors = v[6];
    d->io_ms = v[9];
    return 0;
}

int rm_parse_diskstats(const char *buf, size_t len, struct rm_disk_stat *out, int max, int *n,
                       int *bad)
{
    const char *s = buf, *end = buf + len, *ls, *le;
    int valid = 0;
    *n = 0;
    *bad = 0;
    while (next_line(&s, end, &ls, &le)) {
        const char *p = ls;
        skip_blanks(&p, le);
        if (p == le) continue;
        struct rm_disk_stat d;
        if (disk_line(p, le, &d)) {
            (*bad)++;
            continue;
        }
        if (*n < max) out[(*n)++] = d;
        valid++;
    }
    return valid;
}

static int net_line(const char *p, const char *end, struct rm_net_stat *d)
{
    if (take_name(&p, end, ':', d->name) || p >= end || *p != ':') return -1;
    p++;
    uint64_t v[9];
    for (int i = 0; i < 9; i++)
        if (take_u64(&p, end, &v[i])) return -1;
    d->rx_bytes = v[0];
    d->tx_bytes = v[8];
    return 0;
}

int rm_parse_net_dev(const char *buf, size_t len, struct rm_net_stat *out, int max, int *n,
                     int *bad)
{
    const char *s = buf, *end = buf + len, *ls, *le;
    int valid = 0;
    *n = 0;
    *bad = 0;
    while (next_line(&s, end, &ls, &le)) {
        const char *p = ls;
        skip_blanks(&p, le);
        if (p == le) continue;
        /* The two header lines ("Inter-|   Receive ...", " face |bytes ...") have no ':'. */
        if (!memchr(p, ':', (size_t)(le - p))) continue;
        struct rm_net_stat d;
        if (net_line(p, le, &d)) {
            (*bad)++;
            continue;
        }
        if (*n < max) out[(*n)++] = d;
        valid++;
    }
    return valid;
}

/* The value of "total=" in a pressure line. */
static int pressure_total(const char *p, const char *end, uint64_t *out)
{
    static const char key[] = "total=";
    for (const char *q = p; q + sizeof key - 1 <= end; q++) {
        if (memcmp(q, key, sizeof key - 1) || (q > p && q[-1] != ' ')) continue;
        const char *v = q + sizeof key - 1;
        if (v < end && (*v == ' ' || *v == '\t')) return -1;
        return take_u64(&v, end, out);
    }
    return -1;
}

int rm_parse_pressure(const char *buf, size_t len, struct rm_pressure *out)
{
    memset(out, 0, sizeof *out);
    const char *s = buf, *end = buf + len, *ls, *le;
    while (next_line(&s, end, &ls, &le)) {
        size_t n = (size_t)(le - ls);
        uint64_t v;
        if (n > 5 && !memcmp(ls, "some ", 5) && pressure_total(ls + 5, le, &v) == 0) {
            out->have_some = 1;
            out->some_us = v;
        } else if (n > 5 && !memcmp(ls, "full ", 5) && pressure_total(ls + 5, le, &v) == 0) {
            out->have_full = 1;
            out->full_us = v;
        }
    }
    return out->have_some ? 0 : -1;
}

int rm_parse_pid_io(const char *buf, size_t len, struct rm_pid_io *out)
{
    static const char *const keys[] = {"rchar:", "wchar:", "read_bytes:", "write_bytes:"};
    uint64_t *dst[] = {&out->rchar, &out->wchar, &out->read_bytes, &out->write_bytes};
    unsigned seen = 0;
    memset(out, 0, sizeof *out);
    const char *s = buf, *end = buf + len, *ls, *le;
    while (next_line(&s, end, &ls, &le)) {
        for (int k = 0; k < 4; k++) {
            size_t kl = strlen(keys[k]);
            if ((size_t)(le - ls) <= kl || memcmp(ls, keys[k], kl)) continue;
            const char *p = ls + kl;
            if (take_u64(&p, le, dst[k]) == 0) seen |= 1u << k;
            break;
        }
    }
    return (seen & 12u) == 12u ? 0 : -1;
}
