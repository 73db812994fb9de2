/* HTTP for the exporters on their own thread (record/http.h). */
#include "record/http.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "monitor/policy.h"
#include "record/exporters.h"

void rm_http_shown_url(const char *url, char *out, size_t cap)
{
    if (!cap) return;
    const char *auth = strstr(url, "://");
    auth = auth ? auth + 3 : url;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
        if (*p == '@') at = p; /* the last '@' of the authority ends the user info */
    size_t n = 0;
    const char *parts[3][2] = {{url, auth}, {at ? at + 1 : auth, NULL}, {NULL, NULL}};
    parts[1][1] = parts[1][0] + strcspn(parts[1][0], "?#");
    for (int i = 0; i < 2; i++)
        for (const char *p = parts[i][0]; p < parts[i][1] && n + 1 < cap; p++)
            out[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?'; /* a URL is ASCII; never raw bytes */
    out[n] = '\0';
    if (parts[1][1][0] == '?' && n + 5 < cap) memcpy(out + n, "?...", 5);
}

/* libcurl, loaded when the first HTTP writer opens: linked in, its 30 libraries (OpenSSL,
 * GSSAPI, LDAP, ...) would be mapped and relocated by every runmon command (`runmon phase`
 * inside a workload's loop included: 4 ms a start became 13 ms) and the recorder's peak RSS
 * would grow from 3.8 to 9.7 MiB with no exporter on. */
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    void (*easy_cleanup)(CURL *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} cu;

#define RM_LIBCURL "libcurl.so.4"

static int load_curl(char *err, size_t errsz)
{
    void *h = dlopen(RM_LIBCURL, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errsz,
                 "cannot load %s, which runmon needs to talk HTTP (Debian: apt-get install "
                 "libcurl4)",
                 RM_LIBCURL);
        return -1;
    }
    struct {
        void **fp;
        const char *name;
    } syms[] = {
        {(void **)&cu.global_init, "curl_global_init"},
        {(void **)&cu.easy_init, "curl_easy_init"},
        {(void **)&cu.easy_setopt, "curl_easy_setopt"},
        {(void **)&cu.easy_perform, "curl_easy_perform"},
        {(void **)&cu.easy_getinfo, "curl_easy_getinfo"},
        {(void **)&cu.easy_strerror, "curl_easy_strerror"},
        {(void **)&cu.easy_cleanup, "curl_easy_cleanup"},
        {(void **)&cu.slist_append, "curl_slist_append"},
        {(void **)&cu.slist_free_all, "curl_slist_free_all"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
        if (!(*syms[i].fp = dlsym(h, syms[i].name))) {
            snprintf(err, errsz, "%s has no %s: too old a libcurl", RM_LIBCURL, syms[i].name);
            return -1; /* h stays loaded: harmless, and the process ends soon (open failed) */
        }
    return 0;
}

int rm_http_global_init(char *err, size_t errsz)
{
    static int done;
    if (done) return 0;
    if (load_curl(err, errsz) < 0) return -1;
    CURLcode rc = cu.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(err, errsz, "libcurl: %s", cu.easy_strerror(rc));
        return -1;
    }
    done = 1;
    return 0;
}

struct reply {
    char text[256]; /* the start of the server's answer, for the message */
    size_t n;
};

static size_t on_reply(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct reply *r = ctx;
    size_t len = size * nmemb;
    for (size_t i = 0; i < len && r->n + 1 < sizeof r->text; i++) {
        char c = data[i];
        r->text[r->n++] = (c >= 0x20 && c < 0x7f) ? c : ' '; /* safe text only */
    }
    r->text[r->n] = '\0';
    return len;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    return atomic_load((atomic_int *)ctx) ? 1 : 0; /* nonzero aborts the transfer */
}

/* The connection's socket is ours, so that stop can shut it down: a request waiting on a
 * server that never answers ends at once, not at libcurl's next progress call (up to 1 s). */
static curl_socket_t open_sock(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct rm_http_sender *s = ctx;
    (void)purpose;
    int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    pthread_mutex_lock(&s->mu);
    s->sock = fd;
    pthread_mutex_unlock(&s->mu);
    return fd < 0 ? CURL_SOCKET_BAD : fd;
}

static int close_sock(void *ctx, curl_socket_t fd)
{
    struct rm_http_sender *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (s->sock == fd) s->sock = -1;
    pthread_mutex_unlock(&s->mu);
    return close(fd);
}

struct sender_priv {
    atomic_int abort;
    struct curl_slist *headers;
};

static int64_t now_mono(void)
{
    return rm_now_monotonic_ns();
}

/* One request of body; 0 when the server took it (2xx), else -1 with why. */
static int send_one(struct rm_http_sender *s, struct sender_priv *pv, const struct rm_http_body *b,
                    long total_ms, char *why, size_t whylen)
{
    CURL *h = s->curl;
    struct reply r = {.n = 0};
    char errbuf[CURL_ERROR_SIZE] = "";
    r.text[0] = '\0';
    cu.easy_setopt(h, CURLOPT_URL, s->url);
    cu.easy_setopt(h, CURLOPT_CUSTOMREQUEST, s->method);
    cu.easy_setopt(h, CURLOPT_POSTFIELDS, b->data);
    cu.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->len);
    cu.easy_setopt(h, CURLOPT_HTTPHEADER, pv->headers);
    cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   total_ms < RM_HTTP_CONNECT_MS ? total_ms : (long)RM_HTTP_CONNECT_MS);
    cu.easy_setopt(h, CURLOPT_TIMEOUT_MS, total_ms);
    cu.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    cu.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    cu.easy_setopt(h, CURLOPT_XFERINFODATA, &pv->abort);
    cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_reply);
    cu.easy_setopt(h, CURLOPT_WRITEDATA, &r);
    cu.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    cu.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_sock);
    cu.easy_setopt(h, CURLOPT_OPENSOCKETDATA, s);
    cu.easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close_sock);
    cu.easy_setopt(h, CURLOPT_CLOSESOCKETDATA, s);
    CURLcode rc = cu.easy_perform(h);
    if (rc != CURLE_OK) {
        /* libcurl's words name the host and port, never the user info. */
        snprintf(why, whylen, "%s", errbuf[0] ? errbuf : cu.easy_strerror(rc));
        for (char *p = why; *p; p++)
            if (*p < 0x20 || *p >= 0x7f) *p = '?';
        return -1;
    }
    long code = 0;
    cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && code < 300) return 0;
    while (r.n > 0 && r.text[r.n - 1] == ' ') /* the answer's line end */
        r.text[--r.n] = '\0';
    snprintf(why, whylen, "HTTP %ld%s%.160s", code, r.n ? ": " : "", r.text);
    return -1;
}

static json_t *state_event(struct rm_http_sender *s)
{
    return json_pack("{s:s, s:s, s:s, s:I}", "exporter", s->who, "url", s->shown, "error",
                     s->last_error, "failures", (json_int_t)s->failures);
}

static void *sender_main(void *arg)
{
    struct rm_http_sender *s = arg;
    struct sender_priv *pv = (struct sender_priv *)s->curl_priv;
    pthread_setname_np(pthread_self(), "rm-http"); /* for top -H and the bench */
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        if (s->have_next) { /* newer than cur (a PUT: only the newest matters) */
            struct rm_http_body t = s->cur;
            s->cur = s->next;
            s->next = t;
            s->have_cur = 1;
            s->have_next = 0;
            s->retry_at_mono = 0;
        }
        int64_t now = now_mono();
        if (!s->have_cur || s->retry_at_mono > now) {
            int64_t until = s->have_cur ? s->retry_at_mono : now + 3600 * RM_NS_PER_SEC;
            struct timespec ts = {.tv_sec = until / RM_NS_PER_SEC,
                                  .tv_nsec = until % RM_NS_PER_SEC};
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
            continue;
        }
        long total_ms = RM_HTTP_TOTAL_MS;
        if (s->deadline_mono) {
            int64_t left = (s->deadline_mono - now) / RM_NS_PER_MS;
            if (left < 50) { /* no time left for a request: wait for the stop */
                s->retry_at_mono = now + 3600 * RM_NS_PER_SEC;
                continue;
            }
            if (left < total_ms) total_ms = (long)left;
        }
        s->inflight_since = now;
        pthread_cond_broadcast(&s->cv); /* a close waiting on it learns when it would hang */
        pthread_mutex_unlock(&s->mu);
        char why[256];
        int rc = send_one(s, pv, &s->cur, total_ms, why, sizeof why); /* cur is the thread's */
        pthread_mutex_lock(&s->mu);
        s->inflight_since = 0;
        json_t *ev = NULL;
        const char *evname = NULL;
        if (rc == 0) {
            s->sent++;
            s->backoff_ns = 0;
            if (s->failing) {
                s->failing = 0;
                s->message_due = 1;
                evname = "export_recovered";
                ev = state_event(s);
            }
        } else {
            s->failures++;
            if (atomic_load(&pv->abort)) /* stopped: the recording has ended */
                snprintf(s->last_error, sizeof s->last_error,
                         "no answer in %.1f s, cut at the end of the recording",
                         (double)(now_mono() - now) / 1e9);
            else
                snprintf(s->last_error, sizeof s->last_error, "%s", why);
            if (!s->backoff_ns) s->backoff_ns = RM_BACKOFF_FIRST_NS;
            s->retry_at_mono = now_mono() + s->backoff_ns;
            s->backoff_ns =
                s->backoff_ns * 2 > RM_BACKOFF_MAX_NS ? RM_BACKOFF_MAX_NS : s->backoff_ns * 2;
            if (!s->failing) {
                s->failing = 1;
                s->message_due = 1;
                evname = "export_failed";
                ev = state_event(s);
            }
        }
        if (ev) {
            pthread_mutex_unlock(&s->mu); /* the run log's writer takes its own lock */
            rm_port_event(s->port, evname, ev);
            pthread_mutex_lock(&s->mu);
        }
        /* Idle only now: whoever waits for it (close) finds the event in the run log. */
        if (rc == 0) s->have_cur = 0;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int rm_http_sender_start(struct rm_http_sender *s, const char *who, const char *method,
                         const char *url, const char *content_type, const struct rm_port *port,
                         char *err, size_t errsz)
{
    memset(s, 0, sizeof *s);
    s->sock = -1;
    if (rm_http_global_init(err, errsz) < 0) return -1;
    s->who = who;
    s->method = method;
    s->port = port;
    rm_http_shown_url(url, s->shown, sizeof s->shown);
    struct sender_priv *pv = calloc(1, sizeof *pv);
    s->url = strdup(url);
    s->curl = cu.easy_init();
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
    if (pv) pv->headers = cu.slist_append(NULL, ct);
    if (pv && pv->headers) pv->headers = cu.slist_append(pv->headers, "Expect:");
    s->curl_priv = pv;
    if (!pv || !pv->headers || !s->url || !s->curl) {
        snprintf(err, errsz, "%s: out of memory", who);
        rm_http_sender_stop(s);
        return -1;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&s->mu, NULL);
    s->inited = 1;
    if (pthread_create(&s->thread, NULL, sender_main, s) != 0) {
        snprintf(err, errsz, "%s: cannot start a thread", who);
        rm_http_sender_stop(s);
        return -1;
    }
    s->started = 1;
    return 0;
}

static int body_set(struct rm_http_body *b, const char *data, size_t len)
{
    if (len + 1 > b->cap) {
        char *nb = realloc(b->data, len + 1);
        if (!nb) return -1;
        b->data = nb;
        b->cap = len + 1;
    }
    memcpy(b->data, data, len);
    b->data[len] = '\0';
    b->len = len;
    return 0;
}

int rm_http_offer(struct rm_http_sender *s, const char *body, size_t len, int replace)
{
    pthread_mutex_lock(&s->mu);
    int taken = 0;
    if (replace || (!s->have_next && !s->have_cur)) {
        if (s->have_next) s->replaced++;
        if (body_set(&s->next, body, len) == 0) {
            s->have_next = 1;
            taken = 1;
            pthread_cond_broadcast(&s->cv);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return taken;
}

int rm_http_idle(struct rm_http_sender *s)
{
    pthread_mutex_lock(&s->mu);
    int idle = !s->have_next && !s->have_cur;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

int rm_http_failing(struct rm_http_sender *s)
{
    pthread_mutex_lock(&s->mu);
    int f = s->failing;
    pthread_mutex_unlock(&s->mu);
    return f;
}

int rm_http_message(struct rm_http_sender *s, char *out, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    int due = s->message_due, failing = s->failing;
    char why[256];
    snprintf(why, sizeof why, "%s", s->last_error);
    uint64_t failures = s->failures;
    s->message_due = 0;
    pthread_mutex_unlock(&s->mu);
    if (!due) return 0;
    if (failing)
        snprintf(out, cap,
                 "runmon record: %s %s: %s (retrying with back-off; the recording goes on)", s->who,
                 s->shown, why);
    else
        snprintf(out, cap, "runmon record: %s %s: sending again (after %llu failed tries)", s->who,
                 s->shown, (unsigned long long)failures);
    return 1;
}

/* The end's one deadline for every sender in trouble (rm_http_end_begin); 0: not at the end.
 * Main thread only. */
static int64_t end_trouble_deadline;

void rm_http_end_begin(int64_t deadline_mono)
{
    end_trouble_deadline = deadline_mono;
}

/* Under mu: the last request failed, or the one in flight has hung (no answer in 1 s). */
static int troubled(const struct rm_http_sender *s, int64_t now)
{
    return s->failing || (s->inflight_since && now - s->inflight_since > RM_HTTP_HUNG_NS);
}

int64_t rm_http_close_bound(struct rm_http_sender *s, int64_t healthy, int64_t troubled_ns)
{
    pthread_mutex_lock(&s->mu);
    int64_t b = troubled(s, now_mono()) ? troubled_ns : healthy;
    pthread_mutex_unlock(&s->mu);
    return b;
}

int rm_http_wait_idle(struct rm_http_sender *s, int64_t deadline_mono)
{
    pthread_mutex_lock(&s->mu);
    s->deadline_mono = deadline_mono;
    s->retry_at_mono = 0; /* one more try now, not after the back-off */
    pthread_cond_broadcast(&s->cv);
    while (s->have_next || s->have_cur) {
        int64_t now = now_mono(), until = deadline_mono, wake = deadline_mono;
        if (end_trouble_deadline) {
            /* At the end, a sender in trouble waits only until the deadline all share; one
             * whose request is in flight is looked at again when it would count as hung. */
            if (troubled(s, now) && end_trouble_deadline < until)
                until = wake = end_trouble_deadline;
            else if (s->inflight_since && s->inflight_since + RM_HTTP_HUNG_NS + 1 < wake)
                wake = s->inflight_since + RM_HTTP_HUNG_NS + 1;
        }
        if (now >= until) break;
        struct timespec ts = {.tv_sec = wake / RM_NS_PER_SEC, .tv_nsec = wake % RM_NS_PER_SEC};
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    int idle = !s->have_next && !s->have_cur;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

int rm_http_sender_stop(struct rm_http_sender *s)
{
    struct sender_priv *pv = s->curl_priv;
    int unsent = 0;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        atomic_store(&pv->abort, 1);
        if (s->sock >= 0) shutdown(s->sock, SHUT_RDWR); /* curl closes it: still ours now */
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        s->started = 0;
        unsent = s->have_next || s->have_cur;
        rm_port_event(s->port, "export_stats",
                      json_pack("{s:s, s:s, s:I, s:I, s:b}", "exporter", s->who, "url", s->shown,
                                "sent", (json_int_t)s->sent, "failures", (json_int_t)s->failures,
                                "final_sent", !unsent));
    }
    if (s->inited) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        s->inited = 0;
    }
    if (s->curl) cu.easy_cleanup(s->curl);
    s->curl = NULL;
    if (pv && pv->headers) cu.slist_free_all(pv->headers);
    free(pv);
    s->curl_priv = NULL;
    free(s->url);
    s->url = NULL;
    free(s->next.data);
    free(s->cur.data);
    memset(&s->next, 0, sizeof s->next);
    memset(&s->cur, 0, sizeof s->cur);
    return unsent;
}

void rm_http_say(struct rm_http_sender *s, int quiet, struct rm_tick *t)
{
    char line[1024];
    if (!rm_http_message(s, line, sizeof line) || quiet) return;
    if (t)
        rm_exporters_say(t->list, line);
    else
        fprintf(stderr, "%s\n", line);
}
