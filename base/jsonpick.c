/* Some members of the JSON object in a file, the rest scanned without a tree (jsonpick.h). */
#include "base/jsonpick.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"

#define PICK_BUF 65536
#define PICK_MAX_DEPTH 2048 /* jansson's own nesting limit */

struct reader {
    int fd;
    unsigned char *buf;
    size_t pos, len;
    bool failed; /* a read error */
    bool keep;   /* the bytes taken are copied to kept too */
    char *kept;  /* a member's key or wanted value, as written */
    size_t nkept, capkept;
    const char *rows; /* the top-level member whose elements go to each, one at a time */
    void (*each)(void *ctx, json_t *row);
    void *ctx;
};

static int peek(struct reader *r)
{
    if (r->pos == r->len) {
        ssize_t n;
        do
            n = read(r->fd, r->buf, PICK_BUF);
        while (n < 0 && errno == EINTR);
        if (n <= 0) {
            r->failed |= n < 0;
            return -1;
        }
        r->pos = 0;
        r->len = (size_t)n;
    }
    return r->buf[r->pos];
}

static int take(struct reader *r)
{
    int c = peek(r);
    if (c < 0) return -1;
    r->pos++;
    if (r->keep) {
        r->kept = rm_xgrow(r->kept, &r->capkept, r->nkept + 1, 1);
        r->kept[r->nkept++] = (char)c;
    }
    return c;
}

static bool blank(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void blanks(struct reader *r)
{
    while (blank(peek(r))) {
        if (r->keep) {
            take(r);
            continue;
        }
        while (r->pos < r->len && blank(r->buf[r->pos])) /* the rest of the buffer's run */
            r->pos++;
    }
}

static bool hex(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Passes over the buffered bytes that need no look (plain string bytes, or those of a number
 * or literal), unless they are kept. */
static void pass(struct reader *r, bool in_string)
{
    if (r->keep) return;
    const unsigned char *b = r->buf;
    size_t i = r->pos, n = r->len;
    if (in_string)
        while (i < n && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20)
            i++;
    else
        while (i < n && b[i] > ' ' && !strchr(",:[]{}\"", b[i]))
            i++;
    r->pos = i;
}

/* The rest of a string whose opening quote was taken. */
static bool skip_string(struct reader *r)
{
    for (;;) {
        pass(r, true);
        int c = take(r);
        if (c < 0x20) return false; /* the end of the file, or a raw control character */
        if (c == '"') return true;
        if (c != '\\') continue;
        c = take(r);
        if (c == 'u') {
            for (int i = 0; i < 4; i++)
                if (!hex(take(r))) return false;
        } else if (c < 0 || !strchr("\"\\/bfnrt", c)) {
            return false;
        }
    }
}

/* One value: a string, a number or literal (up to the next separator), or an object or array
 * with its brackets matched. */
static bool skip_value(struct reader *r)
{
    char close[PICK_MAX_DEPTH];
    size_t depth = 0;
    for (;;) {
        blanks(r);
        int c = take(r);
        switch (c) {
        case -1:
            return false;
        case '"':
            if (!skip_string(r)) return false;
            break;
        case '{':
        case '[':
            if (depth == PICK_MAX_DEPTH) return false;
            close[depth++] = c == '{' ? '}' : ']';
            continue;
        case '}':
        case ']':
            if (!depth || close[depth - 1] != c) return false;
            depth--;
            break;
        case ',':
        case ':':
            if (!depth) return false;
            continue;
        default:
            for (pass(r, false), c = peek(r); c > ' ' && !strchr(",:[]{}\"", c);
                 pass(r, false), c = peek(r))
                take(r);
            break;
        }
        if (!depth) return true;
    }
}

/* The length of a key's member name: up to "[]." in a nested spec ("phases[].path,seconds"). */
static size_t name_len(const char *key)
{
    const char *sub = strstr(key, "[].");
    return sub ? (size_t)(sub - key) : strlen(key);
}

/* The index of the key "*" (every member not named), or n. */
static size_t wanted_star(const char *const *keys, size_t n)
{
    size_t i = 0;
    while (i < n && strcmp(keys[i], "*"))
        i++;
    return i;
}

/* The index in keys of the member key held in r->kept (with its quotes), or n. */
static size_t wanted(const struct reader *r, const char *const *keys, size_t n)
{
    const char *k = r->kept + 1;
    size_t len = r->nkept - 2;
    json_t *decoded = NULL;
    if (memchr(k, '\\', len)) { /* escapes: jansson decodes them */
        decoded = json_loadb(r->kept, r->nkept, JSON_DECODE_ANY, NULL);
        if (!json_is_string(decoded)) {
            json_decref(decoded);
            return n;
        }
        k = json_string_value(decoded);
        len = json_string_length(decoded);
    }
    size_t i = 0;
    while (i < n && !(name_len(keys[i]) == len && !memcmp(keys[i], k, len)))
        i++;
    json_decref(decoded);
    return i;
}

static bool members(struct reader *r, const char *const *keys, size_t n, json_t *out, bool top);

/* The member key held in r->kept, decoded (NULL when it is not a string). */
static json_t *kept_key(const struct reader *r)
{
    json_t *k = json_loadb(r->kept, r->nkept, JSON_DECODE_ANY, NULL);
    if (json_is_string(k)) return k;
    json_decref(k);
    return NULL;
}

/* The array of r->rows: each element parsed on its own and handed to r->each. */
static bool each_row(struct reader *r)
{
    blanks(r);
    if (take(r) != '[') return false;
    blanks(r);
    if (peek(r) == ']') return take(r) == ']';
    for (;;) {
        blanks(r);
        r->keep = true;
        r->nkept = 0;
        bool ok = skip_value(r);
        r->keep = false;
        json_t *v = ok ? json_loadb(r->kept, r->nkept, JSON_DECODE_ANY, NULL) : NULL;
        if (!v) return false;
        r->each(r->ctx, v);
        blanks(r);
        int c = take(r);
        if (c == ']') return true;
        if (c != ',') return false;
    }
}

/* A nested spec's array ("NAME[].a,b"): each element that is an object keeps only members
 * a and b (null for another element), so an array of thousands of rows costs a scan, not a
 * tree. */
static bool pick_rows(struct reader *r, const char *spec, json_t *out)
{
    char *list = rm_xstrdup(strstr(spec, "[].") + 3);
    const char *sub[32];
    size_t ns = 0;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t && ns < 32;
         t = strtok_r(NULL, ",", &save))
        sub[ns++] = t;
    bool ok = false;
    blanks(r);
    if (peek(r) != '[') { /* not an array: kept whole */
        r->keep = true;
        r->nkept = 0;
        ok = skip_value(r);
        r->keep = false;
        json_t *v = ok ? json_loadb(r->kept, r->nkept, JSON_DECODE_ANY, NULL) : NULL;
        if (v) json_object_set_new(out, "", v);
        free(list);
        return ok && v;
    }
    take(r);
    json_t *rows = json_array();
    blanks(r);
    if (peek(r) == ']') {
        take(r);
        ok = true;
    } else {
        for (;;) {
            blanks(r);
            if (peek(r) == '{') {
                json_t *o = json_object();
                json_array_append_new(rows, o);
                if (!members(r, sub, ns, o, false)) break;
            } else {
                if (!skip_value(r)) break;
                json_array_append_new(rows, json_null());
            }
            blanks(r);
            int c = take(r);
            if (c == ']') {
                ok = true;
                break;
            }
            if (c != ',') break;
        }
    }
    json_object_set_new(out, "", rows);
    free(list);
    return ok;
}

/* The members wanted of the object r reads, into out; false when it is not one object. top:
 * the file's object (whose member r->rows goes to r->each). */
static bool members(struct reader *r, const char *const *keys, size_t n, json_t *out, bool top)
{
    blanks(r);
    if (take(r) != '{') return false;
    blanks(r);
    if (peek(r) == '}') {
        take(r);
        return true;
    }
    for (;;) {
        blanks(r);
        r->keep = true;
        r->nkept = 0;
        bool key = take(r) == '"' && skip_string(r);
        r->keep = false;
        if (!key) return false;
        size_t w = wanted(r, keys, n);
        /* A member no key names: the rows handed one at a time, or kept by "*" under its own
         * name (decoded: keys[w] is not it). */
        json_t *own = NULL;
        bool rows = false;
        if (w == n || (top && r->rows)) {
            own = kept_key(r);
            if (!own) return false;
            rows = top && r->rows && !strcmp(json_string_value(own), r->rows);
            if (w == n && !rows) w = wanted_star(keys, n);
            if (rows || w == n || strcmp(keys[w], "*")) {
                json_decref(own);
                own = NULL;
            }
        }
        blanks(r);
        bool ok = take(r) == ':';
        if (!ok) {
            /* not a member */
        } else if (rows) {
            ok = each_row(r);
        } else if (w < n && strstr(keys[w], "[].")) {
            json_t *holder = json_object();
            ok = pick_rows(r, keys[w], holder);
            json_t *v = json_object_get(holder, "");
            if (ok) {
                char name[256];
                snprintf(name, sizeof name, "%.*s", (int)name_len(keys[w]), keys[w]);
                json_object_set(out, name, v);
            }
            json_decref(holder);
        } else {
            r->keep = w < n;
            r->nkept = 0;
            ok = skip_value(r);
            r->keep = false;
            if (ok && w < n) {
                json_t *v = json_loadb(r->kept, r->nkept, JSON_DECODE_ANY, NULL);
                ok = v != NULL;
                if (v) json_object_set_new(out, own ? json_string_value(own) : keys[w], v);
            }
        }
        json_decref(own);
        if (!ok) return false;
        blanks(r);
        int c = take(r);
        if (c == '}') return true;
        if (c != ',') return false;
    }
}

/* The file's one object, its wanted members into out. */
static bool pick(struct reader *r, const char *const *keys, size_t n, json_t *out)
{
    if (!members(r, keys, n, out, true)) return false;
    blanks(r);
    return peek(r) < 0 && !r->failed; /* nothing after the object */
}

json_t *rm_json_pick_file(const char *path, const char *const *keys, size_t n)
{
    return rm_json_pick_file_rows(path, keys, n, NULL, NULL, NULL);
}

json_t *rm_json_pick_file_rows(const char *path, const char *const *keys, size_t n,
                               const char *rows, void (*each)(void *ctx, json_t *row), void *ctx)
{
    struct reader r = {.fd = open(path, O_RDONLY | O_CLOEXEC),
                       .rows = each ? rows : NULL,
                       .each = each,
                       .ctx = ctx};
    if (r.fd < 0) return NULL;
    r.buf = rm_xrealloc(NULL, PICK_BUF);
    json_t *out = json_object();
    if (!pick(&r, keys, n, out)) {
        json_decref(out);
        out = NULL;
    }
    close(r.fd);
    free(r.buf);
    free(r.kept);
    return out;
}
