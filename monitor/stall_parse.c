#include "monitor/stall_parse.h"

#include <string.h>

/* A decimal number at *p (spaces before it skipped); -1 when there is none. */
static int number(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s == end || *s < '0' || *s > '9') return -1;
    uint64_t n = 0;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (n > (UINT64_MAX - d) / 10) return -1;
        n = n * 10 + d;
    }
    *v = n;
    *p = s;
    return 0;
}

int rm_parse_schedstat(const char *buf, size_t len, uint64_t *run_ns, uint64_t *wait_ns)
{
    const char *p = buf, *end = buf + len;
    return number(&p, end, run_ns) < 0 || number(&p, end, wait_ns) < 0 ? -1 : 0;
}

int rm_parse_task_stat(const char *buf, size_t len, struct rm_task_stat *out)
{
    memset(out, 0, sizeof *out);
    const char *close = NULL;
    for (size_t i = 0; i < len; i++)
        if (buf[i] == ')') close = buf + i;
    if (!close || (size_t)(buf + len - close) < 3 || close[1] != ' ') return -1;
    out->state = close[2];
    if (out->state == ' ' || out->state == '\n') return -1;
    /* Field 3 is the state; field 42 is 39 spaces after it. */
    const char *p = close + 2, *end = buf + len;
    int field = 3;
    while (p < end && field < 42) {
        if (*p == ' ') field++;
        p++;
    }
    if (field == 42 && number(&p, end, &out->blkio_ticks) == 0) out->have_blkio = 1;
    return 0;
}

int rm_parse_cgroup_v2(const char *buf, size_t len, char *out, size_t cap)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le - p >= 3 && !memcmp(p, "0::", 3)) {
            size_t n = (size_t)(le - p - 3);
            if (n == 0 || n >= cap) return -1;
            memcpy(out, p + 3, n);
            out[n] = 0;
            return (int)n;
        }
        p = le + 1;
    }
    return -1;
}
