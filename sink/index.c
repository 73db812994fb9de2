/* DIR/index.jsonl: append, stream, compact (see sink/index.h). */
#include "sink/index.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "sink/names.h"

#define JFLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))
#define MAX_LINE (1 << 20) /* longer lines are not runmon's */

static int index_path(char *out, size_t cap, const char *dir, const char *name)
{
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static json_t *header(void)
{
    json_t *h = json_object();
    json_object_set_new(h, "format", json_string(RM_INDEX_FORMAT));
    json_object_set_new(h, "schema_version", json_integer(RM_SINK_SCHEMA_VERSION));
    json_object_set_new(h, "created_at", rm_jts_or_null(rm_now_realtime_ns()));
    return h;
}

json_t *rm_index_line(const json_t *doc, const char *event)
{
    const json_t *e = rm_state_session(doc);
    json_int_t files = 0, bytes = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "segments"), i, s)
    {
        if (json_is_true(json_object_get(s, "pruned"))) continue;
        files++;
        bytes += json_integer_value(json_object_get(s, "bytes"));
    }
    json_t *l = json_object();
    json_object_set_new(l, "event", json_string(event));
    static const char *const keys[] = {"session_id", "status",    "host",   "pid",    "started_at",
                                       "ended_at",   "exit_code", "signal", "command"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        json_t *v = json_object_get(e, keys[k]);
        json_object_set(l, keys[k], v ? v : json_null());
    }
    /* A sweep's: only in sessions that have them (runmon record --sweep, --param). */
    json_t *sw = json_object_get(e, "sweep"), *pa = json_object_get(e, "params");
    if (json_is_string(sw)) json_object_set(l, "sweep", sw);
    if (json_object_size(pa)) json_object_set(l, "params", pa);
    /* The batch job's, only inside one (SLURM). */
    json_t *job = json_object_get(e, "job");
    if (json_is_object(job)) json_object_set(l, "job", job);
    json_object_set_new(l, "files", json_integer(files));
    json_object_set_new(l, "bytes", json_integer(bytes));
    return l;
}

/* One line of text for j, with its newline. NULL on failure. */
static char *line_text(const json_t *j, size_t *len)
{
    char *t = json_dumps(j, JFLAGS);
    if (!t) return NULL;
    size_t n = strlen(t);
    char *t2 = realloc(t, n + 2);
    if (!t2) {
        free(t);
        return NULL;
    }
    t2[n] = '\n';
    t2[n + 1] = '\0';
    *len = n + 1;
    return t2;
}

static void count(json_t *totals, const char *k, json_int_t by)
{
    if (!totals) return;
    json_t *ix = json_object_get(totals, "index");
    if (!json_is_object(ix)) {
        ix = json_object();
        json_object_set_new(totals, "index", ix);
    }
    json_object_set_new(ix, k, json_integer(json_integer_value(json_object_get(ix, k)) + by));
}

/* Where the torn last line of a file of size `size` begins (after the last newline), or
 * size when the file ends with a newline (or is empty). */
static off_t torn_start(int fd, off_t size)
{
    char c;
    if (size <= 0 || pread(fd, &c, 1, size - 1) != 1 || c == '\n') return size;
    off_t cut = size;
    char buf[4096];
    while (cut > 0) {
        off_t from = cut > (off_t)sizeof buf ? cut - (off_t)sizeof buf : 0;
        ssize_t n = pread(fd, buf, (size_t)(cut - from), from);
        if (n <= 0) return size;
        char *nl = memrchr(buf, '\n', (size_t)n);
        if (nl) return from + (nl - buf) + 1;
        cut = from;
    }
    return 0;
}

int rm_index_append(const char *sink_dir, json_t *line, int supersedes, json_t *totals)
{
    char path[PATH_MAX + 64];
    if (index_path(path, sizeof path, sink_dir, "index.jsonl") < 0) return -1;
    if (supersedes) json_object_set_new(line, "supersedes", json_true());
    json_object_set_new(line, "ts", rm_jts_or_null(rm_now_realtime_ns()));
    size_t len;
    char *text = line_text(line, &len);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, rm_file_mode());
    if (fd < 0) {
        free(text);
        return -1;
    }
    struct stat st;
    int rc = fstat(fd, &st);
    off_t start = rc == 0 ? st.st_size : 0;
    if (rc == 0 && start == 0) { /* a new index starts with its header */
        json_t *h = header();
        size_t hl;
        char *ht = line_text(h, &hl);
        json_decref(h);
        rc = ht ? rm_write_all(fd, ht, hl) : -1;
        free(ht);
        start = (off_t)hl;
    } else if (rc == 0) { /* a torn last line (a writer died mid-line): cut it */
        off_t cut = torn_start(fd, start);
        if (cut < start && ftruncate(fd, cut) == 0) start = cut;
    }
    if (rc == 0) {
        ssize_t w = write(fd, text, len); /* one write: readers never see half a line */
        if (w != (ssize_t)len) {
            int e = w < 0 ? errno : rm_short_write_errno(start, len);
            if (ftruncate(fd, start) != 0) { /* nothing more to do */
            }
            errno = e;
            rc = -1;
        }
    }
    int e = errno;
    close(fd);
    free(text);
    json_object_del(line, "supersedes");
    json_object_del(line, "ts");
    if (rc == 0) {
        count(totals, "lines", 1);
        if (supersedes) count(totals, "dead", 1);
    }
    errno = e;
    return rc;
}

/* ---- reading: two passes, the second skipping superseded lines ---- */

static uint64_t hash_id(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

/* Open addressing: a session's hash -> the offset of its newest superseding line, and
 * whether the session was listed already. */
struct newest {
    uint64_t *key;
    int64_t *off;
    unsigned char *done;
    size_t cap, n;
};

static void newest_put(struct newest *t, uint64_t k, int64_t off);

static void newest_grow(struct newest *t)
{
    struct newest o = *t;
    t->cap = o.cap ? o.cap * 2 : 256;
    t->key = calloc(t->cap, sizeof *t->key);
    t->off = calloc(t->cap, sizeof *t->off);
    t->done = calloc(t->cap, 1);
    if (!t->key || !t->off || !t->done) {
        fputs("runmon: out of memory\n", stderr);
        abort();
    }
    t->n = 0;
    for (size_t i = 0; i < o.cap; i++)
        if (o.key[i]) newest_put(t, o.key[i], o.off[i]);
    free(o.key);
    free(o.off);
    free(o.done);
}

static void newest_put(struct newest *t, uint64_t k, int64_t off)
{
    if ((t->n + 1) * 2 > t->cap) newest_grow(t);
    size_t i = (size_t)(k & (t->cap - 1));
    while (t->key[i] && t->key[i] != k)
        i = (i + 1) & (t->cap - 1);
    if (!t->key[i]) {
        t->key[i] = k;
        t->off[i] = off;
        t->n++;
    } else if (off > t->off[i]) {
        t->off[i] = off;
    }
}

/* The slot of k, or -1. */
static long newest_find(const struct newest *t, uint64_t k)
{
    if (!t->cap) return -1;
    size_t i = (size_t)(k & (t->cap - 1));
    while (t->key[i]) {
        if (t->key[i] == k) return (long)i;
        i = (i + 1) & (t->cap - 1);
    }
    return -1;
}

/* The line at off (without its newline), read with pread: the stream's position stays. */
static char *line_at(int fd, int64_t off, char **buf, size_t *cap, size_t *len)
{
    size_t n = 0;
    for (;;) {
        if (*cap < n + 4096) {
            size_t nc = *cap ? *cap * 2 : 8192;
            char *nb = realloc(*buf, nc);
            if (!nb) return NULL;
            *buf = nb;
            *cap = nc;
        }
        ssize_t r = pread(fd, *buf + n, *cap - n - 1, off + (int64_t)n);
        if (r <= 0) return NULL;
        char *nl = memchr(*buf + n, '\n', (size_t)r);
        if (nl) {
            *nl = '\0';
            *len = (size_t)(nl - *buf);
            return *buf;
        }
        n += (size_t)r;
        if (n > MAX_LINE) return NULL;
    }
}

/* The session id of a line, without parsing it: ids hold no quote or backslash. */
static const char *line_id(const char *line, size_t len, size_t *n)
{
    static const char key[] = "\"session_id\":\"";
    const char *p = memmem(line, len, key, sizeof key - 1);
    if (!p) return NULL;
    p += sizeof key - 1;
    const char *q = memchr(p, '"', len - (size_t)(p - line));
    if (!q) return NULL;
    *n = (size_t)(q - p);
    return p;
}

struct reader {
    FILE *f;
    char *buf;
    size_t cap;
    int64_t off, end; /* offset of the next line; lines past end are not read */
};

/* The next whole line (with its offset in *at), or NULL. */
static char *next_line(struct reader *r, size_t *len, int64_t *at)
{
    for (;;) {
        if (r->off >= r->end) return NULL;
        ssize_t n = getline(&r->buf, &r->cap, r->f);
        if (n <= 0) return NULL;
        *at = r->off;
        r->off += n;
        if (r->off > r->end || r->buf[n - 1] != '\n') return NULL; /* still being written */
        if (n > MAX_LINE) continue;
        r->buf[n - 1] = '\0';
        *len = (size_t)n - 1;
        return r->buf;
    }
}

static int check_header(const char *line, size_t len)
{
    json_t *h = json_loadb(line, len, 0, NULL);
    int ok = json_is_object(h) && !strcmp(rm_jget_str(h, "format"), RM_INDEX_FORMAT);
    json_decref(h);
    return ok;
}

int rm_index_each(const char *sink_dir, rm_index_fn fn, void *ctx, char *err, size_t errsz)
{
    char path[PATH_MAX + 64];
    if (index_path(path, sizeof path, sink_dir, "index.jsonl") < 0) {
        snprintf(err, errsz, "%s: path too long", sink_dir);
        return -1;
    }
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT) return 1;
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *iobuf = malloc(1 << 16); /* large reads; per call, so threads may read at once */
    if (iobuf) setvbuf(f, iobuf, _IOFBF, 1 << 16);
    struct reader r = {.f = f, .end = st.st_size};
    struct newest t = {0};
    size_t len, idn;
    int64_t at;
    char *line = next_line(&r, &len, &at);
    int rc = 0;
    if (!line || !check_header(line, len)) {
        snprintf(err, errsz, "%s: not a runmon sink index", path);
        rc = -1;
        goto out;
    }
    /* Pass 1: where each superseded session's newest line is. */
    while ((line = next_line(&r, &len, &at))) {
        if (!memmem(line, len, "\"supersedes\":true", 17)) continue;
        const char *id = line_id(line, len, &idn);
        if (id) newest_put(&t, hash_id(id, idn), at);
    }
    /* Pass 2: each session once, where it first appears (the order sessions were made in),
     * with the content of its newest line. */
    if (fseeko(f, 0, SEEK_SET) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        rc = -1;
        goto out;
    }
    r.off = 0;
    next_line(&r, &len, &at); /* the header */
    char *nbuf = NULL;
    size_t ncap = 0;
    while ((line = next_line(&r, &len, &at))) {
        const char *id = line_id(line, len, &idn);
        if (!id) continue;
        long slot = newest_find(&t, hash_id(id, idn));
        if (slot >= 0) {
            if (t.done[slot]) continue; /* listed at its first line */
            t.done[slot] = 1;
            if (t.off[slot] != at && !(line = line_at(fileno(f), t.off[slot], &nbuf, &ncap, &len)))
                continue;
        }
        struct rm_index_rec rec;
        if (rm_index_rec_parse(line, len, &rec) && rm_valid_session_id(rec.session_id) &&
            fn(ctx, &rec))
            break;
    }
    free(nbuf);
out:
    free(t.key);
    free(t.off);
    free(t.done);
    free(r.buf);
    fclose(f);
    free(iobuf);
    return rc;
}

/* ---- writing a whole index (rebuild, compaction) ---- */

int rm_index_out_open(struct rm_index_out *o, const char *sink_dir)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (index_path(o->path, sizeof o->path, sink_dir, "index.jsonl") < 0) return -1;
    /* One name (we hold the lock): a temp file a writer killed mid-write left is found. */
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s/%s", sink_dir, RM_INDEX_TMP) >= sizeof o->tmp)
        return -1;
    unlink(o->tmp);
    /* A private index stays private, whoever compacts it. */
    struct stat st;
    mode_t mode = lstat(o->path, &st) == 0 ? (st.st_mode & 07777) : rm_file_mode();
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    if (o->fd < 0) return -1;
    if (lstat(o->path, &st) == 0) (void)fchmod(o->fd, mode); /* past the umask, as before */
    json_t *h = header();
    rm_index_out_put(o, h);
    json_decref(h);
    o->lines = 0;
    return 0;
}

void rm_index_out_put(struct rm_index_out *o, json_t *line)
{
    size_t len;
    char *t = line_text(line, &len);
    if (!t || rm_write_all(o->fd, t, len) != 0) o->failed = 1;
    free(t);
    o->lines++;
}

int rm_index_out_commit(struct rm_index_out *o)
{
    int rc = o->failed || fsync(o->fd) != 0 ? -1 : 0;
    close(o->fd);
    if (rc == 0 && rename(o->tmp, o->path) == 0) {
        char dir[sizeof o->path];
        snprintf(dir, sizeof dir, "%s", o->path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        return 0;
    }
    int e = errno;
    unlink(o->tmp);
    errno = e;
    return -1;
}

static int put_live(void *ctx, const struct rm_index_rec *r)
{
    json_t *line = json_loadb(r->line, r->len, 0, NULL);
    if (!json_is_object(line)) {
        json_decref(line);
        return 0;
    }
    json_object_del(line, "supersedes");
    rm_index_out_put(ctx, line);
    json_decref(line);
    return 0;
}

int rm_index_maybe_compact(const char *sink_dir, json_t *totals)
{
    json_t *ix = json_object_get(totals, "index");
    json_int_t lines = json_integer_value(json_object_get(ix, "lines"));
    json_int_t dead = json_integer_value(json_object_get(ix, "dead"));
    if (dead < RM_INDEX_COMPACT_MIN || dead * 3 < lines) return 0;
    struct rm_index_out o;
    char err[512];
    if (rm_index_out_open(&o, sink_dir) < 0) return -1;
    if (rm_index_each(sink_dir, put_live, &o, err, sizeof err) != 0) o.failed = 1;
    if (rm_index_out_commit(&o) < 0) return -1;
    json_object_set_new(ix, "lines", json_integer(o.lines));
    json_object_set_new(ix, "dead", json_integer(0));
    /* The running sessions' lines moved: recovery reads their index from the start. */
    const char *id;
    json_t *r;
    json_object_foreach(json_object_get(totals, "running"), id, r) json_object_del(r, "index_at");
    json_object_set_new(ix, "compactions",
                        json_integer(json_integer_value(json_object_get(ix, "compactions")) + 1));
    return 1;
}

/* ---- one session's newest line, and a torn last line (recovery) ---- */

int64_t rm_index_size(const char *sink_dir)
{
    char path[PATH_MAX + 64];
    struct stat st;
    if (index_path(path, sizeof path, sink_dir, "index.jsonl") < 0 || stat(path, &st) != 0)
        return 0;
    return (int64_t)st.st_size;
}

int rm_index_cut_torn(const char *sink_dir, char *id, size_t idcap)
{
    if (idcap) id[0] = '\0';
    char path[PATH_MAX + 64];
    if (index_path(path, sizeof path, sink_dir, "index.jsonl") < 0) return -1;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    int rc = 0;
    off_t cut = fstat(fd, &st) == 0 ? torn_start(fd, st.st_size) : 0;
    if (cut > 0 && cut < st.st_size) {
        /* Whose line it was, when its session_id made it to the disk. */
        char buf[1024];
        size_t want =
            (size_t)(st.st_size - cut) < sizeof buf ? (size_t)(st.st_size - cut) : sizeof buf;
        ssize_t n = pread(fd, buf, want, cut);
        size_t idn;
        const char *p = n > 0 ? line_id(buf, (size_t)n, &idn) : NULL;
        if (p && idn < idcap) {
            memcpy(id, p, idn);
            id[idn] = '\0';
            if (!rm_valid_session_id(id)) id[0] = '\0';
        }
        rc = ftruncate(fd, cut) == 0 ? 1 : -1;
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

json_t *rm_index_newest(const char *sink_dir, const char *id, int64_t from)
{
    char path[PATH_MAX + 64];
    if (index_path(path, sizeof path, sink_dir, "index.jsonl") < 0) return NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    json_t *found = NULL;
    char key[RM_SESSION_ID_MAX + 32];
    int kl = snprintf(key, sizeof key, "\"session_id\":\"%s\"", id);
    if (fstat(fd, &st) != 0 || kl <= 0 || (size_t)kl >= sizeof key) {
        close(fd);
        return NULL;
    }
    /* Whole lines only: a torn last line is not the session's. `from` must start a line
     * (a compaction whose totals were not written moves them): else the whole index. */
    off_t end = torn_start(fd, st.st_size);
    char before;
    if (from < 0 || from > end ||
        (from > 0 && (pread(fd, &before, 1, from - 1) != 1 || before != '\n')))
        from = 0;
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    /* Read back in blocks; `have` bytes of buf (ending at `end`) hold the lines not yet
     * looked at, the first of them possibly cut at the block's start. */
    size_t have = 0;
    while (buf && !found && end > from) {
        size_t room = cap - have;
        if (!room) { /* one line longer than the buffer */
            if (cap >= (size_t)MAX_LINE * 2) break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
            continue;
        }
        off_t start = end - (off_t)have;
        size_t take = (off_t)room < start - from ? room : (size_t)(start - from);
        memmove(buf + take, buf, have);
        if (pread(fd, buf, take, start - (off_t)take) != (ssize_t)take) break;
        have += take;
        int at_from = start - (off_t)take == from;
        /* The lines of the buffer, newest first; the first one only when whole. */
        size_t stop = have;
        while (stop > 0 && !found) {
            char *nl = stop > 1 ? memrchr(buf, '\n', stop - 1) : NULL;
            size_t b = nl ? (size_t)(nl - buf) + 1 : 0;
            if (!nl && !at_from) break; /* its beginning is in the next block back */
            size_t n = stop - b;
            if (n > 1 && memmem(buf + b, n, key, (size_t)kl)) {
                struct rm_index_rec r;
                if (rm_index_rec_parse(buf + b, n - 1, &r) && !strcmp(r.session_id, id)) {
                    found = json_loadb(buf + b, n - 1, 0, NULL);
                    if (found && !json_is_object(found)) {
                        json_decref(found);
                        found = NULL;
                    }
                }
            }
            stop = b;
        }
        end -= (off_t)(have - stop);
        have = stop;
        if (at_from) break;
    }
    free(buf);
    close(fd);
    return found;
}
