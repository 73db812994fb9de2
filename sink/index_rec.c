/* One index.jsonl line read without building a JSON tree: the fields a listing or a session
 * choice needs, decoded into fixed buffers. A sink of 100,000 sessions is listed in well
 * under a second this way (a jansson tree per line cost most of the time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/index.h"

struct cur {
    const char *p, *end;
};

static void ws(struct cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
        c->p++;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        v <<= 4;
        if (ch >= '0' && ch <= '9')
            v |= (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            v |= (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            v |= (unsigned)(ch - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A JSON string at c->p (the opening quote), decoded into out (cut to cap - 1 bytes; out may
 * be NULL to skip it). 0 on a malformed string. */
static int str(struct cur *c, char *out, size_t cap)
{
    if (c->p >= c->end || *c->p != '"') return 0;
    c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != '"') {
        char tmp[4];
        size_t k = 1;
        if (*c->p == '\\') {
            if (c->p + 1 >= c->end) return 0;
            char e = c->p[1];
            c->p += 2;
            switch (e) {
            case '"':
                tmp[0] = '"';
                break;
            case '\\':
                tmp[0] = '\\';
                break;
            case '/':
                tmp[0] = '/';
                break;
            case 'b':
                tmp[0] = '\b';
                break;
            case 'f':
                tmp[0] = '\f';
                break;
            case 'n':
                tmp[0] = '\n';
                break;
            case 'r':
                tmp[0] = '\r';
                break;
            case 't':
                tmp[0] = '\t';
                break;
            case 'u': {
                unsigned cp, lo;
                if (c->end - c->p < 4 || !hex4(c->p, &cp)) return 0;
                c->p += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && c->end - c->p >= 6 && c->p[0] == '\\' &&
                    c->p[1] == 'u' && hex4(c->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    c->p += 6;
                }
                k = put_utf8(tmp, cp);
                break;
            }
            default:
                return 0;
            }
        } else {
            if ((unsigned char)*c->p < 0x20) return 0;
            tmp[0] = *c->p++;
        }
        if (out && n + k < cap) {
            memcpy(out + n, tmp, k);
            n += k;
        }
    }
    if (c->p >= c->end) return 0;
    c->p++; /* closing quote */
    if (out && cap) out[n] = '\0';
    return 1;
}

/* Skips any JSON value. */
static int skip(struct cur *c, int depth)
{
    ws(c);
    if (c->p >= c->end || depth > 64) return 0;
    char ch = *c->p;
    if (ch == '"') return str(c, NULL, 0);
    if (ch == '[' || ch == '{') {
        char close = ch == '[' ? ']' : '}';
        c->p++;
        ws(c);
        if (c->p < c->end && *c->p == close) {
            c->p++;
            return 1;
        }
        for (;;) {
            if (ch == '{') {
                ws(c);
                if (!str(c, NULL, 0)) return 0;
                ws(c);
                if (c->p >= c->end || *c->p++ != ':') return 0;
            }
            if (!skip(c, depth + 1)) return 0;
            ws(c);
            if (c->p >= c->end) return 0;
            if (*c->p == ',') {
                c->p++;
                continue;
            }
            if (*c->p++ != close) return 0;
            return 1;
        }
    }
    /* number, true, false, null */
    const char *s = c->p;
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']' && *c->p != ' ')
        c->p++;
    return c->p > s;
}

static int integer(struct cur *c, long long *v, int *present)
{
    ws(c);
    const char *s = c->p;
    if (!skip(c, 0)) return 0;
    if (c->p - s == 4 && !memcmp(s, "null", 4)) {
        *present = 0;
        return 1;
    }
    char buf[32];
    size_t n = (size_t)(c->p - s);
    if (n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *e;
    *v = strtoll(buf, &e, 10);
    *present = *e == '\0';
    return 1;
}

/* A string or null value into out ("" for null; has set when a string). */
static int str_or_null(struct cur *c, char *out, size_t cap, int *has)
{
    ws(c);
    if (c->p < c->end && *c->p == '"') {
        if (has) *has = 1;
        return str(c, out, cap);
    }
    out[0] = '\0';
    if (has) *has = 0;
    return skip(c, 0);
}

int rm_index_rec_parse(const char *line, size_t len, struct rm_index_rec *r)
{
    r->session_id[0] = r->status[0] = r->host[0] = '\0';
    r->started_at[0] = r->ended_at[0] = '\0';
    r->has_ended = r->has_exit = r->supersedes = 0;
    r->exit_code = r->files = r->bytes = r->pid = r->signal = 0;
    r->command = NULL;
    r->command_len = 0;
    memset(r->raw, 0, sizeof r->raw);
    r->line = line;
    r->len = len;
    struct cur c = {line, line + len};
    ws(&c);
    if (c.p >= c.end || *c.p++ != '{') return 0;
    ws(&c);
    if (c.p < c.end && *c.p == '}') return 0;
    for (;;) {
        char key[32];
        ws(&c);
        if (!str(&c, key, sizeof key)) return 0;
        ws(&c);
        if (c.p >= c.end || *c.p++ != ':') return 0;
        ws(&c);
        const char *vstart = c.p;
        int slot = !strcmp(key, "session_id")   ? RM_REC_ID
                   : !strcmp(key, "status")     ? RM_REC_STATUS
                   : !strcmp(key, "host")       ? RM_REC_HOST
                   : !strcmp(key, "started_at") ? RM_REC_STARTED
                   : !strcmp(key, "ended_at")   ? RM_REC_ENDED
                   : !strcmp(key, "exit_code")  ? RM_REC_EXIT
                   : !strcmp(key, "unwritten")  ? RM_REC_UNWRITTEN
                   : !strcmp(key, "signal")     ? RM_REC_SIGNAL
                                                : -1;
        int ok, present = 0;
        if (!strcmp(key, "session_id"))
            ok = str_or_null(&c, r->session_id, sizeof r->session_id, NULL);
        else if (!strcmp(key, "status"))
            ok = str_or_null(&c, r->status, sizeof r->status, NULL);
        else if (!strcmp(key, "host"))
            ok = str_or_null(&c, r->host, sizeof r->host, NULL);
        else if (!strcmp(key, "started_at"))
            ok = str_or_null(&c, r->started_at, sizeof r->started_at, NULL);
        else if (!strcmp(key, "ended_at"))
            ok = str_or_null(&c, r->ended_at, sizeof r->ended_at, &r->has_ended);
        else if (!strcmp(key, "exit_code"))
            ok = integer(&c, &r->exit_code, &r->has_exit);
        else if (!strcmp(key, "signal")) {
            ok = integer(&c, &r->signal, &present);
            if (!present) r->signal = 0;
        } else if (!strcmp(key, "files"))
            ok = integer(&c, &r->files, &present);
        else if (!strcmp(key, "bytes"))
            ok = integer(&c, &r->bytes, &present);
        else if (!strcmp(key, "pid"))
            ok = integer(&c, &r->pid, &present);
        else if (!strcmp(key, "supersedes")) {
            const char *s = c.p;
            ok = skip(&c, 0);
            r->supersedes = c.p - s == 4 && !memcmp(s, "true", 4);
        } else if (!strcmp(key, "command")) {
            const char *s = c.p;
            ok = skip(&c, 0);
            if (ok && *s == '[') {
                r->command = s;
                r->command_len = (size_t)(c.p - s);
            }
        } else {
            ok = skip(&c, 0);
        }
        if (!ok) return 0;
        if (slot >= 0 && (slot != RM_REC_UNWRITTEN || (*vstart == '[' && c.p - vstart > 2))) {
            r->raw[slot].p = vstart;
            r->raw[slot].n = (size_t)(c.p - vstart);
        }
        ws(&c);
        if (c.p >= c.end) return 0;
        if (*c.p == ',') {
            c.p++;
            continue;
        }
        if (*c.p != '}') return 0;
        return r->session_id[0] != '\0';
    }
}

/* The cursor at the command array's element after *pos (past '[' or ','), or 0 at its end. */
static int next_element(const struct rm_index_rec *r, size_t pos, struct cur *c)
{
    if (!r->command || pos >= r->command_len) return 0;
    *c = (struct cur){r->command + pos, r->command + r->command_len};
    if (pos == 0) c->p++; /* '[' */
    ws(c);
    if (c->p < c->end && *c->p == ',') c->p++;
    ws(c);
    return c->p < c->end && *c->p != ']';
}

int rm_index_rec_word(const struct rm_index_rec *r, size_t *pos, char *out, size_t cap)
{
    struct cur c;
    if (!next_element(r, *pos, &c) || *c.p != '"') return 0;
    if (!str(&c, out, cap)) return 0;
    *pos = (size_t)(c.p - r->command);
    return 1;
}

int rm_index_rec_element(const struct rm_index_rec *r, size_t *pos, const char **v, size_t *n)
{
    struct cur c;
    if (!next_element(r, *pos, &c)) return 0;
    const char *s = c.p;
    if (!skip(&c, 0)) return 0;
    *v = s;
    *n = (size_t)(c.p - s);
    *pos = (size_t)(c.p - r->command);
    return 1;
}
