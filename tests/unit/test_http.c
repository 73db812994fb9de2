/* record/http.c: URLs shown without their credentials; a sender against a real local socket
 * (a thread that answers HTTP 500 then 204): failures counted and retried with back-off, one
 * export_failed and one export_recovered event, a newer body replacing one not yet sent, a
 * refused offer while busy, and a stop that ends a request to a server that never answers
 * at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "record/http.h"

static const char *shown(const char *url)
{
    static char buf[512];
    rm_http_shown_url(url, buf, sizeof buf);
    return buf;
}

static void credentials_never_shown(void **state)
{
    (void)state;
    assert_string_equal(shown("http://127.0.0.1:9091"), "http://127.0.0.1:9091");
    assert_string_equal(shown("http://alice:pw@gw:9091/x"), "http://gw:9091/x");
    assert_string_equal(shown("https://a@b:c@gw/"), "https://gw/");
    assert_string_equal(shown("http://h:8086/write?db=x&u=a&p=secret"), "http://h:8086/write?...");
    assert_string_equal(shown("http://u:p@h?p=1"), "http://h?...");
    assert_string_equal(shown("http://h/a#frag"), "http://h/a");
    assert_string_equal(shown("http://h/\x1b[31m"), "http://h/?[31m");
    char small[8];
    rm_http_shown_url("http://user:pw@longhost/", small, sizeof small);
    assert_string_equal(small, "http://");
}

/* A server on loopback: answers the first `fail` requests 500, the rest 204; or never
 * (hang). Counts requests and keeps the newest body. */
struct server {
    int fd, port, fail, hang;
    int requests;
    char last_body[256];
    pthread_t th;
};

static void *serve(void *arg)
{
    struct server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0) return NULL;
        for (;;) { /* requests on one kept-alive connection */
            char buf[8192];
            size_t n = 0;
            char *end = NULL;
            while (!end) {
                ssize_t k = read(c, buf + n, sizeof buf - 1 - n);
                if (k <= 0) break;
                n += (size_t)k;
                buf[n] = '\0';
                end = strstr(buf, "\r\n\r\n");
            }
            if (!end) break;
            if (s->hang) { /* never answers: reads until the client gives up */
                while (read(c, buf, sizeof buf) > 0) {
                }
                break;
            }
            const char *cl = strcasestr(buf, "Content-Length:");
            size_t len = cl ? strtoul(cl + 15, NULL, 10) : 0, have = n - (size_t)(end + 4 - buf);
            while (have < len && n < sizeof buf - 1) {
                ssize_t k = read(c, buf + n, sizeof buf - 1 - n);
                if (k <= 0) break;
                n += (size_t)k;
                have += (size_t)k;
            }
            buf[n] = '\0';
            snprintf(s->last_body, sizeof s->last_body, "%s", end + 4);
            int code = s->requests++ < s->fail ? 500 : 204;
            char reply[128];
            int k = snprintf(reply, sizeof reply, "HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s",
                             code, code == 500 ? 5 : 0, code == 500 ? "oops\n" : "");
            if (write(c, reply, (size_t)k) != k) break;
        }
        close(c);
    }
}

static void server_start(struct server *s)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 8), 0);
    getsockname(s->fd, (struct sockaddr *)&a, &al);
    s->port = ntohs(a.sin_port);
    pthread_create(&s->th, NULL, serve, s);
}

static void server_stop(struct server *s)
{
    shutdown(s->fd, SHUT_RDWR); /* accept fails: the thread returns */
    pthread_join(s->th, NULL);
    close(s->fd);
}

/* A port that records the events. */
static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static char events[16][64];
static int nevents;

static void on_event(void *owner, const char *name, json_t *data)
{
    (void)owner;
    pthread_mutex_lock(&ev_mu);
    if (nevents < 16) snprintf(events[nevents++], sizeof events[0], "%s", name);
    pthread_mutex_unlock(&ev_mu);
    json_decref(data);
}

static int count(const char *name)
{
    int n = 0;
    pthread_mutex_lock(&ev_mu);
    for (int i = 0; i < nevents; i++)
        n += !strcmp(events[i], name);
    pthread_mutex_unlock(&ev_mu);
    return n;
}

static struct rm_port port = {.event = on_event, .quiet = 1};

static void failures_retried_then_recovered(void **state)
{
    (void)state;
    char err[256];
    struct server srv = {.fail = 2};
    server_start(&srv);
    nevents = 0;
    assert_int_equal(rm_http_global_init(err, sizeof err), 0);
    char url[128];
    snprintf(url, sizeof url, "http://user:pw@127.0.0.1:%d/metrics", srv.port);
    struct rm_http_sender tx;
    assert_int_equal(
        rm_http_sender_start(&tx, "--test", "PUT", url, "text/plain", &port, err, sizeof err), 0);
    assert_string_equal(tx.shown, shown(url));
    assert_int_equal(rm_http_offer(&tx, "one", 3, 1), 1);
    /* 500, back-off 1 s, 500, back-off 2 s, then 204: about 3 s. */
    int idle = rm_http_wait_idle(&tx, rm_now_monotonic_ns() + 8 * RM_NS_PER_SEC);
    assert_int_equal(idle, 1);
    assert_int_equal(srv.requests, 3);
    assert_int_equal(tx.failures, 2);
    assert_string_equal(tx.last_error, "HTTP 500: oops");
    assert_int_equal(count("export_failed"), 1);
    assert_int_equal(count("export_recovered"), 1);
    assert_string_equal(srv.last_body, "one");
    assert_int_equal(rm_http_sender_stop(&tx), 0);
    assert_int_equal(count("export_stats"), 1);
    server_stop(&srv);
}

static void a_hanging_server_is_cut_at_stop(void **state)
{
    (void)state;
    char err[256];
    struct server srv = {.hang = 1};
    server_start(&srv);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", srv.port);
    struct rm_http_sender tx;
    assert_int_equal(
        rm_http_sender_start(&tx, "--test", "POST", url, "text/plain", &port, err, sizeof err), 0);
    assert_int_equal(rm_http_offer(&tx, "a", 1, 0), 1);
    assert_int_equal(rm_http_offer(&tx, "b", 1, 0), 0); /* busy: refused */
    assert_int_equal(rm_http_offer(&tx, "c", 1, 1), 1); /* replace: waits behind "a" */
    usleep(300 * 1000);
    assert_int_equal(rm_http_wait_idle(&tx, rm_now_monotonic_ns() + RM_NS_PER_SEC / 5), 0);
    int64_t t0 = rm_now_monotonic_ns();
    assert_int_equal(rm_http_sender_stop(&tx), 1); /* "c" never went */
    assert_true(rm_now_monotonic_ns() - t0 < RM_NS_PER_SEC / 2);
    assert_non_null(strstr(tx.last_error, "cut at the end of the recording"));
    server_stop(&srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(credentials_never_shown),
        cmocka_unit_test(failures_retried_then_recovered),
        cmocka_unit_test(a_hanging_server_is_cut_at_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
