#include "runlog/runlog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/objective.h"
#include "runlog/kvargs.h"

struct frame {
    char *name;
    int64_t start_ns; /* CLOCK_MONOTONIC */
};

struct rm_runlog {
    int fd;
    bool use_flock;
    pthread_mutex_t mu;
    char *file; /* for messages */
    char *prefix;
    struct frame *stack;
    size_t depth, cap;
};

static _Thread_local char errmsg[320];

const char *rm_runlog_errmsg(void)
{
    return errmsg;
}

void rm_runlog_seterr(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
}

static int fail(int err)
{
    errno = err;
    return -1;
}

/* ---- line building ---------------------------------------------------------------- */

struct buf {
    char *p;
    size_t len, cap;
    bool heap, oom;
    char stack[1024]; /* most lines fit: no allocation on the common path */
};

static void buf_init(struct buf *b)
{
    b->p = b->stack;
    b->len = 0;
    b->cap = sizeof b->stack;
    b->heap = b->oom = false;
}

static void buf_free(struct buf *b)
{
    if (b->heap) free(b->p);
}

static bool reserve(struct buf *b, size_t n)
{
    if (b->oom) return false;
    if (b->len + n <= b->cap) return true;
    size_t cap = b->cap * 2;
    while (cap < b->len + n)
        cap *= 2;
    char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    if (!b->heap) memcpy(p, b->p, b->len);
    b->p = p;
    b->cap = cap;
    b->heap = true;
    return true;
}

static void put(struct buf *b, const char *s, size_t n)
{
    if (reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_str(struct buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (!reserve(b, n + 2)) return;
    b->p[b->len++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            /* Runs of plain bytes are the common case. */
            size_t j = i;
            while (j < n && (unsigned char)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\')
                j++;
            put(b, s + i, j - i);
            i = j - 1;
            continue;
        }
        char esc[7] = {'\\', 0};
        size_t en = 2;
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            en = 6;
        }
        put(b, esc, en);
    }
    put(b, "\"", 1);
}

static void put_key(struct buf *b, const char *k)
{
    put(b, ",", 1);
    put_str(b, k, strlen(k));
    put(b, ":", 1);
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* The shortest text that reads back as the same double (as Python's repr), always with a
 * '.' or an exponent so readers keep it a float: 0.1 is "0.1", 2 is "2.0". */
static void put_real(struct buf *b, double v)
{
    pthread_once(&c_locale_once, c_locale_init);
    locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break;
    }
    if (old) uselocale(old);
    if (!strpbrk(tmp, ".eE")) strcat(tmp, ".0");
    puts_(b, tmp);
}

/* Serialises a jansson value; -1 (EINVAL) for a non-finite real. Jansson keeps object
 * keys in insertion order, so extras come out in the order given. */
static int put_json(struct buf *b, json_t *j)
{
    char tmp[32];
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        bool first = true;
        put(b, "{", 1);
        json_object_foreach(j, k, v)
        {
            if (!first) put(b, ",", 1);
            first = false;
            put_str(b, k, strlen(k));
            put(b, ":", 1);
            if (put_json(b, v) < 0) return -1;
        }
        put(b, "}", 1);
        return 0;
    }
    case JSON_ARRAY: {
        put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i) put(b, ",", 1);
            if (put_json(b, json_array_get(j, i)) < 0) return -1;
        }
        put(b, "]", 1);
        return 0;
    }
    case JSON_STRING:
        put_str(b, json_string_value(j), json_string_length(j));
        return 0;
    case JSON_INTEGER:
        snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        puts_(b, tmp);
        return 0;
    case JSON_REAL:
        if (!isfinite(json_real_value(j))) {
            rm_runlog_seterr("numbers must be finite");
            return fail(EINVAL);
        }
        put_real(b, json_real_value(j));
        return 0;
    case JSON_TRUE:
        puts_(b, "true");
        return 0;
    case JSON_FALSE:
        puts_(b, "false");
        return 0;
    case JSON_NULL:
        puts_(b, "null");
        return 0;
    }
    return 0;
}

/* Starts a line: {"ts":...,"type":...  (the caller adds the kind's fields). */
static void line_start(struct buf *b, int64_t now_ns, const char *type)
{
    char ts[RM_TS_BUFSZ];
    size_t n = rm_format_ts(now_ns, ts);
    puts_(b, "{\"ts\":\"");
    put(b, ts, n);
    puts_(b, "\",\"type\":\"");
    puts_(b, type);
    put(b, "\"", 1);
}

/* Adds pid and t: epoch seconds of the same instant as ts, from the floored milliseconds
 * so the two never disagree. */
static void line_pid_t(struct buf *b, int64_t now_ns)
{
    int64_t ms = now_ns / RM_NS_PER_MS - (now_ns % RM_NS_PER_MS < 0);
    int64_t s = ms / 1000 - (ms % 1000 < 0);
    char tmp[64];
    snprintf(tmp, sizeof tmp, ",\"pid\":%ld,\"t\":%" PRId64 ".%03" PRId64, (long)getpid(), s,
             ms - s * 1000);
    puts_(b, tmp);
}

/* Top-level extras: refused if they would repeat a field the line writes itself. */
static int put_extras(struct buf *b, json_t *extra, const char *const *reserved)
{
    if (!extra) return 0;
    if (!json_is_object(extra)) {
        rm_runlog_seterr("extra fields must be a JSON object");
        return fail(EINVAL);
    }
    const char *k;
    json_t *v;
    json_object_foreach(extra, k, v)
    {
        if (rm_text_check(k, "key") < 0) return -1;
        for (const char *const *r = reserved; *r; r++)
            if (!strcmp(k, *r)) {
                rm_runlog_seterr("key '%s' is reserved on this line", k);
                return fail(EINVAL);
            }
        put_key(b, k);
        if (put_json(b, v) < 0) return -1;
    }
    return 0;
}

/* ---- writing ------------------------------------------------------------------------- */

/* Appends one complete line with one write(); see the header for the short-write repair.
 * Called with log->mu held, so threads of this process never race on the fd. */
static int append_line(rm_runlog *log, const char *p, size_t len)
{
    bool locked = false;
    if (log->use_flock) {
        while (flock(log->fd, LOCK_EX) < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOLCK || errno == EINVAL || errno == EOPNOTSUPP)
                log->use_flock = false; /* not supported here: write unlocked */
            else {
                rm_runlog_seterr("cannot lock run log %s: %s", log->file, strerror(errno));
                return -1;
            }
            break;
        }
        locked = log->use_flock;
    }
    int rc = 0, err = 0;
    struct stat st;
    bool reg = fstat(log->fd, &st) == 0 && S_ISREG(st.st_mode);
    if (reg && st.st_nlink == 0) {
        rm_runlog_seterr("run log %s was removed; line not written", log->file);
        err = ENOENT;
        rc = -1;
        goto out;
    }
    ssize_t n;
    do
        n = write(log->fd, p, len);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        err = errno;
        rm_runlog_seterr("cannot write to run log %s: %s", log->file, strerror(err));
        rc = -1;
    } else if ((size_t)n < len) {
        /* A partial line: cut it back if the tail is still ours. */
        struct stat after;
        bool cut = reg && fstat(log->fd, &after) == 0 && after.st_size == st.st_size + n &&
                   ftruncate(log->fd, st.st_size) == 0;
        struct rlimit rl;
        err = (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
               (rlim_t)st.st_size + len > rl.rlim_cur)
                  ? EFBIG
                  : ENOSPC;
        rm_runlog_seterr("cannot write to run log %s: %s (short write of %zd of %zu bytes; %s)",
                         log->file, strerror(err), n, len,
                         cut ? "partial line removed" : "PARTIAL LINE LEFT IN FILE");
        rc = -1;
    }
out:
    if (locked) flock(log->fd, LOCK_UN);
    if (rc < 0) errno = err;
    return rc;
}

static int finish(rm_runlog *log, struct buf *b)
{
    put(b, "}\n", 2);
    if (b->oom) {
        rm_runlog_seterr("out of memory");
        return fail(ENOMEM);
    }
    return append_line(log, b->p, b->len);
}

/* A line built without the lock (rc 0 so far) written under it, then its buffer let go:
 * the lines of no phase (event, data, metric, objective). */
static int finish_locked(rm_runlog *log, struct buf *b, int rc)
{
    if (rc == 0) {
        pthread_mutex_lock(&log->mu);
        rc = finish(log, b);
        pthread_mutex_unlock(&log->mu);
    }
    buf_free(b);
    return rc;
}

/* ---- public ----------------------------------------------------------------------------- */

rm_runlog *rm_runlog_open(const char *path)
{
    if (!path || !*path) {
        rm_runlog_seterr("empty run log path");
        errno = EINVAL;
        return NULL;
    }
    rm_runlog *log = calloc(1, sizeof *log);
    if (!log || !(log->file = strdup(path))) {
        free(log);
        rm_runlog_seterr("out of memory");
        errno = ENOMEM;
        return NULL;
    }
    log->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, rm_file_mode());
    if (log->fd < 0) {
        int e = errno;
        rm_runlog_seterr("cannot open run log %s: %s", path, strerror(e));
        free(log->file);
        free(log);
        errno = e;
        return NULL;
    }
    log->use_flock = true;
    pthread_mutex_init(&log->mu, NULL);
    return log;
}

int rm_runlog_close(rm_runlog *log)
{
    if (!log) return 0;
    int rc = close(log->fd);
    int e = errno;
    if (rc < 0) rm_runlog_seterr("cannot close run log %s: %s", log->file, strerror(e));
    for (size_t i = 0; i < log->depth; i++)
        free(log->stack[i].name);
    free(log->stack);
    free(log->prefix);
    free(log->file);
    pthread_mutex_destroy(&log->mu);
    free(log);
    errno = rc < 0 ? e : errno;
    return rc;
}

static int check_phase_name(const char *name)
{
    if (rm_text_check(name, "phase name") < 0) return -1;
    if (strchr(name, '/')) {
        rm_runlog_seterr("phase name '%s' contains '/' (it separates nested phases)", name);
        return fail(EINVAL);
    }
    return 0;
}

int rm_runlog_set_prefix(rm_runlog *log, const char *prefix)
{
    char *copy = NULL;
    if (prefix && *prefix) {
        if (!(copy = strdup(prefix))) {
            rm_runlog_seterr("out of memory");
            return fail(ENOMEM);
        }
        /* Every component must be a phase name: "a//b", "/a" and "a/" are refused. */
        char *save = NULL, *tmp = strdup(prefix);
        size_t parts = 0;
        for (char *c = tmp ? strtok_r(tmp, "/", &save) : NULL; c; c = strtok_r(NULL, "/", &save))
            if (check_phase_name(c) < 0) {
                free(tmp);
                free(copy);
                return -1;
            } else
                parts++;
        free(tmp);
        size_t slashes = 0;
        for (const char *p = prefix; *p; p++)
            slashes += *p == '/';
        if (parts == 0 || slashes != parts - 1) {
            free(copy);
            rm_runlog_seterr("phase path '%s' has an empty component", prefix);
            return fail(EINVAL);
        }
    }
    pthread_mutex_lock(&log->mu);
    free(log->prefix);
    log->prefix = copy;
    pthread_mutex_unlock(&log->mu);
    return 0;
}

static double round_ms(double s)
{
    return s < 1e15 ? round(s * 1000.0) / 1000.0 : s;
}

static const char *const phase_reserved[] = {"ts", "type", "name", "seconds", "pid", "t", NULL};

int rm_runlog_phase(rm_runlog *log, const char *name, double seconds, json_t *extra)
{
    if (rm_text_check(name, "phase name") < 0) return -1;
    if (!isfinite(seconds) || seconds < 0) {
        rm_runlog_seterr("seconds must be a finite number >= 0");
        return fail(EINVAL);
    }
    int64_t now = rm_now_realtime_ns();
    struct buf b;
    buf_init(&b);
    line_start(&b, now, "phase");
    puts_(&b, ",\"name\":");
    put_str(&b, name, strlen(name));
    puts_(&b, ",\"seconds\":");
    put_real(&b, round_ms(seconds));
    line_pid_t(&b, now);
    return finish_locked(log, &b, put_extras(&b, extra, phase_reserved));
}

/* An event's "data": omitted when empty; its keys are checked like top-level keys. */
static int put_data(struct buf *b, json_t *data)
{
    if (!data) return 0;
    if (!json_is_object(data)) {
        rm_runlog_seterr("event data must be a JSON object");
        return fail(EINVAL);
    }
    if (json_object_size(data) == 0) return 0;
    const char *k;
    json_t *v;
    json_object_foreach(data, k, v)
    {
        if (rm_text_check(k, "key") < 0) return -1;
    }
    puts_(b, ",\"data\":");
    return put_json(b, data);
}

int rm_runlog_event(rm_runlog *log, const char *event, json_t *data)
{
    if (rm_text_check(event, "event type") < 0) return -1;
    int64_t now = rm_now_realtime_ns();
    struct buf b;
    buf_init(&b);
    line_start(&b, now, "event");
    puts_(&b, ",\"event\":");
    put_str(&b, event, strlen(event));
    line_pid_t(&b, now);
    return finish_locked(log, &b, put_data(&b, data));
}

/* name, path and depth of the frame at index i (log->mu held). */
static void put_scope(struct buf *b, rm_runlog *log, size_t i)
{
    puts_(b, ",\"name\":");
    put_str(b, log->stack[i].name, strlen(log->stack[i].name));
    struct buf p;
    buf_init(&p);
    size_t depth = 0;
    if (log->prefix) {
        puts_(&p, log->prefix);
        depth = 1;
        for (const char *c = log->prefix; *c; c++)
            depth += *c == '/';
    }
    for (size_t k = 0; k <= i; k++) {
        if (p.len) put(&p, "/", 1);
        puts_(&p, log->stack[k].name);
    }
    depth += i;
    puts_(b, ",\"path\":");
    put_str(b, p.p, p.len);
    if (p.oom) b->oom = true;
    buf_free(&p);
    char tmp[40];
    snprintf(tmp, sizeof tmp, ",\"depth\":%zu", depth);
    puts_(b, tmp);
}

static const char *const scope_reserved[] = {"ts",      "type",   "name", "path", "depth",
                                             "seconds", "status", "pid",  "t",    NULL};

int rm_runlog_enter(rm_runlog *log, const char *name, json_t *extra)
{
    if (check_phase_name(name) < 0) return -1;
    char *copy = strdup(name);
    if (!copy) {
        rm_runlog_seterr("out of memory");
        return fail(ENOMEM);
    }
    pthread_mutex_lock(&log->mu);
    int rc = 0;
    if (log->depth == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 8;
        struct frame *s = realloc(log->stack, cap * sizeof *s);
        if (!s) {
            rm_runlog_seterr("out of memory");
            rc = fail(ENOMEM);
        } else {
            log->stack = s;
            log->cap = cap;
        }
    }
    if (rc == 0) {
        log->stack[log->depth] = (struct frame){copy, 0};
        int64_t now = rm_now_realtime_ns();
        struct buf b;
        buf_init(&b);
        line_start(&b, now, "phase_enter");
        put_scope(&b, log, log->depth);
        line_pid_t(&b, now);
        rc = put_extras(&b, extra, scope_reserved);
        if (rc == 0) rc = finish(log, &b);
        buf_free(&b);
        if (rc == 0) {
            /* The clock starts once the line is out, so the write is not counted. */
            log->stack[log->depth++].start_ns = rm_now_monotonic_ns();
            copy = NULL;
        }
    }
    pthread_mutex_unlock(&log->mu);
    free(copy);
    return rc;
}

int rm_runlog_exit(rm_runlog *log, const char *name, enum rm_runlog_status status, json_t *extra)
{
    int64_t end = rm_now_monotonic_ns();
    pthread_mutex_lock(&log->mu);
    int rc = 0;
    if (log->depth == 0) {
        rm_runlog_seterr("no open phase to exit");
        rc = fail(ENOENT);
    } else if (name && strcmp(name, log->stack[log->depth - 1].name) != 0) {
        rm_runlog_seterr("cannot exit phase '%s': the innermost open phase is '%s'", name,
                         log->stack[log->depth - 1].name);
        rc = fail(EINVAL);
    }
    if (rc == 0) {
        size_t i = log->depth - 1;
        int64_t now = rm_now_realtime_ns();
        struct buf b;
        buf_init(&b);
        line_start(&b, now, "phase_exit");
        put_scope(&b, log, i);
        puts_(&b, ",\"seconds\":");
        put_real(&b, rm_ns_to_seconds_ms(end - log->stack[i].start_ns));
        puts_(&b, status == RM_RUNLOG_OK ? ",\"status\":\"ok\"" : ",\"status\":\"error\"");
        line_pid_t(&b, now);
        rc = put_extras(&b, extra, scope_reserved);
        if (rc == 0) rc = finish(log, &b);
        buf_free(&b);
        int e = errno;
        free(log->stack[i].name);
        log->depth--;
        errno = e;
    }
    pthread_mutex_unlock(&log->mu);
    return rc;
}

int rm_runlog_check_extra(const char *type, json_t *extra)
{
    struct buf b;
    buf_init(&b);
    int rc;
    if (!strcmp(type, "event"))
        rc = put_data(&b, extra);
    else if (!strcmp(type, "phase"))
        rc = put_extras(&b, extra, phase_reserved);
    else if (!strcmp(type, "phase_enter") || !strcmp(type, "phase_exit"))
        rc = put_extras(&b, extra, scope_reserved);
    else {
        rm_runlog_seterr("unknown line type '%s'", type);
        rc = fail(EINVAL);
    }
    buf_free(&b);
    return rc;
}

int rm_runlog_phase_kv(rm_runlog *log, const char *name, double seconds, int n,
                       const char *const *kv)
{
    json_t *extra = rm_kv_object(n, kv);
    if (!extra) return -1;
    int rc = rm_runlog_phase(log, name, seconds, extra);
    int e = errno;
    json_decref(extra);
    errno = e;
    return rc;
}

int rm_runlog_event_kv(rm_runlog *log, const char *event, int n, const char *const *kv)
{
    json_t *data = rm_kv_object(n, kv);
    if (!data) return -1;
    int rc = rm_runlog_event(log, event, data);
    int e = errno;
    json_decref(data);
    errno = e;
    return rc;
}

size_t rm_runlog_depth(rm_runlog *log)
{
    pthread_mutex_lock(&log->mu);
    size_t d = log->depth;
    pthread_mutex_unlock(&log->mu);
    return d;
}

char *rm_runlog_current_path(rm_runlog *log)
{
    pthread_mutex_lock(&log->mu);
    size_t n = log->prefix ? strlen(log->prefix) : 0;
    for (size_t i = 0; i < log->depth; i++)
        n += strlen(log->stack[i].name) + 1;
    char *s = malloc(n + 1);
    if (s) {
        s[0] = '\0';
        if (log->prefix) strcpy(s, log->prefix);
        for (size_t i = 0; i < log->depth; i++) {
            if (*s) strcat(s, "/");
            strcat(s, log->stack[i].name);
        }
    }
    pthread_mutex_unlock(&log->mu);
    return s;
}

/* ---- metric and objective lines ------------------------------------------------------- */

_Static_assert(RM_RUNLOG_METRIC_MAX == RM_METRIC_LINE_MAX, "one limit for writers and reader");

static int check_metric_name(const char *name)
{
    char err[256];
    if (rm_metric_name_check(name, err, sizeof err) < 0) {
        rm_runlog_seterr("%s", err);
        return fail(EINVAL);
    }
    return 0;
}

/* Everything rm_runlog_metric refuses. Names are compared pairwise only past a few: a line
 * carries a handful. */
static int check_metric(long long step, size_t n, const char *const *names, const double *values)
{
    if (step < 0 && step != RM_RUNLOG_NO_STEP) {
        rm_runlog_seterr("step must be an integer >= 0, not %lld", step);
        return fail(EINVAL);
    }
    if (n == 0 || n > RM_RUNLOG_METRIC_MAX) {
        rm_runlog_seterr("a metric line carries 1 to %d values, not %zu", RM_RUNLOG_METRIC_MAX, n);
        return fail(EINVAL);
    }
    for (size_t i = 0; i < n; i++) {
        if (check_metric_name(names[i]) < 0) return -1;
        if (!isfinite(values[i])) {
            rm_runlog_seterr("metric '%s': the value must be a finite number, not %g", names[i],
                             values[i]);
            return fail(EINVAL);
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j])) {
                rm_runlog_seterr("metric '%s' is given twice", names[i]);
                return fail(EINVAL);
            }
    }
    return 0;
}

int rm_runlog_metric(rm_runlog *log, long long step, size_t n, const char *const *names,
                     const double *values)
{
    if (check_metric(step, n, names, values) < 0) return -1;
    int64_t now = rm_now_realtime_ns();
    struct buf b;
    buf_init(&b);
    line_start(&b, now, "metric");
    char tmp[40];
    if (step != RM_RUNLOG_NO_STEP) {
        snprintf(tmp, sizeof tmp, ",\"step\":%lld", step);
        puts_(&b, tmp);
    }
    puts_(&b, ",\"values\":{");
    for (size_t i = 0; i < n; i++) {
        if (i) put(&b, ",", 1);
        put_str(&b, names[i], strlen(names[i]));
        put(&b, ":", 1);
        put_real(&b, values[i]);
    }
    put(&b, "}", 1);
    line_pid_t(&b, now);
    return finish_locked(log, &b, 0);
}

/* "NAME=VALUE" split into a name (pointing into store) and a finite number. */
static int metric_arg(const char *arg, char *store, size_t cap, const char **name, double *v)
{
    const char *eq = strchr(arg, '=');
    if (!eq) {
        rm_runlog_seterr("'%s': expected NAME=VALUE", arg);
        return fail(EINVAL);
    }
    size_t kl = (size_t)(eq - arg);
    if (kl >= cap) kl = cap - 1; /* long enough to be refused by the name check */
    memcpy(store, arg, kl);
    store[kl] = '\0';
    *name = store;
    if (check_metric_name(store) < 0) return -1;
    pthread_once(&c_locale_once, c_locale_init);
    const char *val = eq + 1;
    if (!rm_is_json_number(val) || !c_locale || !isfinite(*v = strtod_l(val, NULL, c_locale))) {
        char shown[96];
        rm_term_escape(shown, sizeof shown, val);
        rm_runlog_seterr("metric '%s': the value must be a finite number, not '%s'", store, shown);
        return fail(EINVAL);
    }
    return 0;
}

/* Parses the kv arguments and writes (log) or only checks (NULL) the line. */
static int metric_kv(rm_runlog *log, long long step, int n, const char *const *kv)
{
    if (n <= 0 || n > RM_RUNLOG_METRIC_MAX) {
        rm_runlog_seterr("a metric line carries 1 to %d values, not %d", RM_RUNLOG_METRIC_MAX, n);
        return fail(EINVAL);
    }
    char(*store)[RM_METRIC_NAME_MAX + 1] = malloc((size_t)n * sizeof *store);
    const char **names = malloc((size_t)n * sizeof *names);
    double *values = malloc((size_t)n * sizeof *values);
    int rc = 0;
    if (!store || !names || !values) {
        rm_runlog_seterr("out of memory");
        rc = fail(ENOMEM);
    }
    for (int i = 0; rc == 0 && i < n; i++)
        rc = metric_arg(kv[i], store[i], sizeof store[i], &names[i], &values[i]);
    if (rc == 0)
        rc = log ? rm_runlog_metric(log, step, (size_t)n, names, values)
                 : check_metric(step, (size_t)n, names, values);
    int e = errno;
    free(store);
    free(names);
    free(values);
    errno = e;
    return rc;
}

int rm_runlog_metric_kv(rm_runlog *log, long long step, int n, const char *const *kv)
{
    return metric_kv(log, step, n, kv);
}

int rm_runlog_check_metric_kv(long long step, int n, const char *const *kv)
{
    return metric_kv(NULL, step, n, kv);
}

int rm_runlog_check_objective(int n, const char *const *specs)
{
    if (n <= 0 || n > RM_OBJECTIVES_MAX) {
        rm_runlog_seterr("an objective line names 1 to %d objectives, not %d", RM_OBJECTIVES_MAX,
                         n);
        return fail(EINVAL);
    }
    for (int i = 0; i < n; i++) {
        struct rm_objective o;
        char err[300];
        if (rm_objective_parse(specs[i], &o, err, sizeof err) < 0) {
            rm_runlog_seterr("%s", err);
            return fail(EINVAL);
        }
    }
    return 0;
}

int rm_runlog_objective(rm_runlog *log, int n, const char *const *specs)
{
    if (rm_runlog_check_objective(n, specs) < 0) return -1;
    int64_t now = rm_now_realtime_ns();
    struct buf b;
    buf_init(&b);
    line_start(&b, now, "objective");
    puts_(&b, ",\"objectives\":[");
    for (int i = 0; i < n; i++) {
        struct rm_objective o;
        rm_objective_parse(specs[i], &o, NULL, 0);
        if (i) put(&b, ",", 1);
        puts_(&b, "{\"metric\":");
        put_str(&b, o.metric, strlen(o.metric));
        puts_(&b, ",\"goal\":\"");
        puts_(&b, rm_goal_name(o.goal));
        puts_(&b, "\",\"pick\":\"");
        puts_(&b, rm_pick_name(o.pick));
        puts_(&b, "\"}");
    }
    put(&b, "]", 1);
    line_pid_t(&b, now);
    return finish_locked(log, &b, 0);
}
