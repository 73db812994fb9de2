/* Pure parsers for /proc text and stdio-free number formatting. No allocation, no locale,
 * no NUL terminator needed: every function takes (buffer, length). */
#include "monitor/procfs.h"

#include <math.h>
#include <string.h>

/* Unsigned decimal at *s (no sign, no spaces). Returns 0 and advances *s, or -1 if there is
 * no digit or the value overflows 64 bits. */
static int parse_u64(const char **s, const char *end, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (p >= end || (unsigned)(*p - '0') > 9) return -1;
    while (p < end && (unsigned)(*p - '0') <= 9) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
        p++;
    }
    *s = p;
    *out = v;
    return 0;
}

/* Signed decimal (a leading '-'); magnitudes beyond INT64 are rejected. */
static int parse_i64(const char **s, const char *end, int64_t *out)
{
    const char *p = *s;
    int neg = 0;
    uint64_t v;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (parse_u64(&p, end, &v) || v > (uint64_t)INT64_MAX) return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    *s = p;
    return 0;
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* The numbers after "cpu" / "cpuN" up to eol. At least the 4 columns of 2.4 kernels
 * (user nice system idle) are required; later columns default to 0; extra ones (a future
 * kernel) are ignored. */
static int parse_cpu_fields(const char *p, const char *eol, struct rm_cpu_times *t)
{
    uint64_t v[10] = {0};
    int k = 0;
    for (;;) {
        p = skip_blanks(p, eol);
        if (p >= eol) break;
        uint64_t x;
        if (parse_u64(&p, eol, &x)) return -1;
        if (p < eol && *p != ' ' && *p != '\t') return -1;
        if (k < 10) v[k] = x;
        k++;
    }
    if (k < 4) return -1;
    t->user = v[0];
    t->nice = v[1];
    t->system = v[2];
    t->idle = v[3];
    t->iowait = v[4];
    t->irq = v[5];
    t->softirq = v[6];
    t->steal = v[7];
    t->guest = v[8];
    t->guest_nice = v[9];
    return 0;
}

int rm_parse_proc_stat(const char *buf, size_t len, struct rm_cpu_times *all,
                       struct rm_cpu_times *percpu, int *cpu_ids, int max, int *n)
{
    const char *p = buf, *end = buf + len;
    int seen = 0, stored = 0;
    if (n) *n = 0;
    if (len < 4 || memcmp(p, "cpu", 3) || (p[3] != ' ' && p[3] != '\t')) return -1;
    const char *eol = line_end(p, end);
    if (parse_cpu_fields(p + 3, eol, all)) return -1;
    if (!percpu || !cpu_ids || max <= 0) return 0;
    /* The kernel prints every cpu line first; stop at the first other line (intr, ctxt). */
    for (p = eol < end ? eol + 1 : end; p + 3 < end && !memcmp(p, "cpu", 3); p = eol + 1) {
        eol = line_end(p, end);
        const char *q = p + 3;
        uint64_t id;
        if (parse_u64(&q, eol, &id) || id > INT32_MAX) return -1;
        if (stored < max) {
            if (parse_cpu_fields(q, eol, &percpu[stored])) return -1;
            cpu_ids[stored++] = (int)id;
        }
        seen++;
        if (eol >= end) break;
    }
    *n = stored;
    return seen;
}

/* "Key:   123 kB": value of the line if it starts with key (which includes the ':'). */
static int meminfo_value(const char *p, const char *eol, const char *key, size_t klen,
                         uint64_t *out)
{
    if ((size_t)(eol - p) <= klen || memcmp(p, key, klen)) return 0;
    p = skip_blanks(p + klen, eol);
    return parse_u64(&p, eol, out) ? -1 : 1;
}

int rm_parse_meminfo(const char *buf, size_t len, struct rm_mem *out)
{
    static const struct {
        const char *key;
        size_t len;
    } keys[] = {
        {"MemTotal:", 9}, {"MemFree:", 8}, {"MemAvailable:", 13}, {"Buffers:", 8}, {"Cached:", 7}};
    uint64_t val[5] = {0};
    int found[5] = {0}, nfound = 0;
    const char *p = buf, *end = buf + len;
    while (p < end && nfound < 5) {
        const char *eol = line_end(p, end);
        for (int k = 0; k < 5; k++) {
            if (found[k]) continue;
            int r = meminfo_value(p, eol, keys[k].key, keys[k].len, &val[k]);
            if (r < 0) return -1;
            if (r > 0) {
                found[k] = 1;
                nfound++;
                break;
            }
        }
        p = eol < end ? eol + 1 : end;
    }
    if (!found[0]) return -1;
    out->total_kib = val[0];
    if (found[2]) {
        out->avail_kib = val[2];
        out->avail_estimated = 0;
    } else if (found[1]) {
        /* What free(1) reported before MemAvailable existed. It overstates: not all page
         * cache is reclaimable, but it is the best those kernels offer. */
        uint64_t a = val[1] + val[3];
        a = a < val[3] ? UINT64_MAX : a;
        out->avail_kib = a + val[4] < a ? UINT64_MAX : a + val[4];
        out->avail_estimated = 1;
    } else {
        return -1;
    }
    if (out->avail_kib > out->total_kib) out->avail_kib = out->total_kib;
    return 0;
}

int rm_parse_pid_stat(const char *buf, size_t len, struct rm_pid_stat *out)
{
    const char *p = buf, *end = buf + len;
    int64_t pid;
    if (parse_i64(&p, end, &pid) || pid <= 0 || pid > INT32_MAX) return -1;
    /* comm is "(...)" and may itself contain ") ": the real end is the last ')'. */
    const char *rp = memrchr(p, ')', (size_t)(end - p));
    if (!rp || rp + 2 >= end || rp[1] != ' ') return -1;
    p = rp + 2;
    out->pid = (int32_t)pid;
    out->state = *p++;
    /* Fields from 4 (ppid) to 24 (rss), numbered as in proc(5). */
    int64_t f[25];
    for (int i = 4; i <= 24; i++) {
        if (p >= end || *p != ' ') return -1;
        p++;
        if (parse_i64(&p, end, &f[i])) {
            /* utime.. are unsigned in the kernel: allow the full u64 range there. */
            uint64_t u;
            if (parse_u64(&p, end, &u)) return -1;
            f[i] = (int64_t)(u > (uint64_t)INT64_MAX ? INT64_MAX : u);
        }
    }
    if (f[4] < 0 || f[4] > INT32_MAX) return -1;
    out->ppid = (int32_t)f[4];
    out->utime = f[14] > 0 ? (uint64_t)f[14] : 0;
    out->stime = f[15] > 0 ? (uint64_t)f[15] : 0;
    out->num_threads = f[20];
    out->starttime = f[22] > 0 ? (uint64_t)f[22] : 0;
    out->rss_pages = f[24] > 0 ? (uint64_t)f[24] : 0;
    return 0;
}

size_t rm_fmt_u64(uint64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

size_t rm_fmt_fixed2(double v, char *buf)
{
    if (!isfinite(v)) return 0;
    size_t n = 0;
    if (v < 0) {
        v = -v;
        /* -0.004 rounds to 0.00: no "-0.00". */
        if (v >= 0.005) buf[n++] = '-';
    }
    if (v >= 9e16) { /* v * 100 would overflow llround; percentages never get here */
        n += rm_fmt_u64(v >= 1.8e19 ? UINT64_MAX : (uint64_t)v, buf + n);
        memcpy(buf + n, ".00", 3);
        return n + 3;
    }
    uint64_t c = (uint64_t)llround(v * 100.0);
    n += rm_fmt_u64(c / 100, buf + n);
    buf[n++] = '.';
    buf[n++] = (char)('0' + c / 10 % 10);
    buf[n++] = (char)('0' + c % 10);
    return n;
}
