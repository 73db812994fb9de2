/* HTTP for the exporters that send to a server (record/export_push.c, record/export_influx.c):
 * one libcurl easy handle on a thread of the exporter's own, so the main thread never waits
 * on the network (record/exporter.h's rules).
 *
 * A sender holds at most one body in flight and one waiting. rm_http_offer hands a body over
 * without waiting: with replace, a newer body takes the place of one not yet sent (a PUT of
 * the whole group: only the newest matters); without, it is refused while one is waiting or
 * in flight (the caller keeps its rows and offers them again later).
 *
 * A failure (no connection, a time-out, HTTP 4xx/5xx) is counted, the same body retried
 * after a back-off (1 s doubling to 30 s), and reported once as an `export_failed` event of
 * the run log when the sender starts failing, `export_recovered` when a request lands again.
 * Every request is bounded: 2 s to connect, 5 s in all. The URL's credentials (user:password
 * in it, a query string) never appear in a message or an event: rm_http_shown_url.
 *
 * Threads: the sender's thread sends; everything else is called from the main thread.
 */
#ifndef RUNMON_RECORD_HTTP_H
#define RUNMON_RECORD_HTTP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rm_time.h"
#include "monitor/port.h"

#define RM_HTTP_CONNECT_MS 2000
#define RM_HTTP_TOTAL_MS 5000

/* url without its credentials: "user:password@" removed, a query string shown as "?...".
 * Always NUL-terminated (cut at cap). */
void rm_http_shown_url(const char *url, char *out, size_t cap);

/* libcurl loaded (dlopen: no runmon command but these writers pays for its libraries) and
 * its global set-up, once per process: from an exporter's open, before any worker thread
 * exists (rm_http_sender_start calls it too). 0, or -1 with the reason in err. */
int rm_http_global_init(char *err, size_t errsz);

struct rm_http_body {
    char *data;
    size_t len, cap;
};

struct rm_http_sender {
    const char *who;    /* the option, for messages and events: "--pushgateway" */
    const char *method; /* "PUT", "POST" */
    char *url;          /* the full URL (credentials included): libcurl only */
    char shown[512];    /* the URL for people */
    const char *content_type;
    const struct rm_port *port;
    void *curl;      /* CURL * */
    void *curl_priv; /* its headers and abort flag (http.c) */
    int inited;      /* mu and cv exist */
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Under mu. */
    struct rm_http_body next, cur; /* waiting; the thread's (in flight or to retry) */
    int have_next, have_cur;
    int stop;              /* the thread ends at once */
    int64_t retry_at_mono; /* the retry of cur is due then */
    int64_t backoff_ns;    /* the next back-off */
    int failing;           /* the last request failed */
    uint64_t sent, failures, replaced;
    char last_error[256];   /* why the last request failed (safe text) */
    int message_due;        /* last_error changed state: the main thread prints it */
    int64_t deadline_mono;  /* 0, or: no request runs past this (close) */
    int64_t inflight_since; /* CLOCK_MONOTONIC start of the request in flight, 0: none */
    int sock;               /* the connection's socket, -1: none; shut down to abort at once */
};

/* Sets up the sender and starts its thread. 0, or -1 with the reason in err. */
int rm_http_sender_start(struct rm_http_sender *s, const char *who, const char *method,
                         const char *url, const char *content_type, const struct rm_port *port,
                         char *err, size_t errsz);

/* Hands body (len bytes, copied) to the thread. 1 taken, 0 refused (busy, !replace). */
int rm_http_offer(struct rm_http_sender *s, const char *body, size_t len, int replace);

/* 1 when nothing is waiting or in flight. */
int rm_http_idle(struct rm_http_sender *s);

/* 1 while the last request failed. */
int rm_http_failing(struct rm_http_sender *s);

/* Main thread: 1 and the line to print (safe text, no newline) when the sender started
 * failing or recovered since the last call; else 0. The exporter prints it through
 * rm_exporters_say in poll (the status line clears itself first), on stderr in close. */
int rm_http_message(struct rm_http_sender *s, char *out, size_t cap);

/* Prints that line unless quiet: in poll (t given) through the list, so the status line
 * clears itself first; in close (t NULL) on stderr. */
struct rm_tick;
void rm_http_say(struct rm_http_sender *s, int quiet, struct rm_tick *t);

/* A request in flight this long without an answer has hung. */
#define RM_HTTP_HUNG_NS RM_NS_PER_SEC

/* How long close may wait for the sender: `healthy` when the last request landed and none
 * has hung, else `troubled`. */
int64_t rm_http_close_bound(struct rm_http_sender *s, int64_t healthy, int64_t troubled);

/* The end of the recording begins (rm_exporters_close): until deadline_mono passes, every
 * sender that fails or hangs is waited for no longer than deadline_mono, so the end waits
 * for writers in trouble once, however many there are (docs/FORMATS.md). 0: the end is over.
 * Main thread only. */
void rm_http_end_begin(int64_t deadline_mono);

/* Waits until the sender is idle or deadline_mono passes (requests are cut at the deadline),
 * at the end no longer than rm_http_end_begin's deadline once the sender is in trouble.
 * 1: idle, 0: not. */
int rm_http_wait_idle(struct rm_http_sender *s, int64_t deadline_mono);

/* Stops the thread (a request in flight is aborted), joins it and frees everything. Returns
 * 1 when a body was left unsent. Adds an `export_stats` event with the counts. */
int rm_http_sender_stop(struct rm_http_sender *s);

#endif
