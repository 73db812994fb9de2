/* The list of a session's exporters (record/exporters.h). */
#include "record/exporters.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rm_time.h"
#include "record/http.h"

/* Every exporter runmon has, in the order they are opened, polled and closed. Each is turned
 * on by its own option (its wanted()). A new exporter is its file and one line here. */
extern const struct rm_exporter_ops rm_exporter_status;        /* record/export_status.c */
extern const struct rm_exporter_ops rm_exporter_prom_textfile; /* record/export_prom.c */
extern const struct rm_exporter_ops rm_exporter_pushgateway;   /* record/export_push.c */
extern const struct rm_exporter_ops rm_exporter_influx;        /* record/export_influx.c */
extern const struct rm_exporter_ops rm_exporter_influx_file;   /* record/export_influx.c */
/* clang-format off */
static const struct rm_exporter_ops *const table[] = {
    &rm_exporter_status,
    &rm_exporter_prom_textfile,
    &rm_exporter_pushgateway,
    &rm_exporter_influx,
    &rm_exporter_influx_file,
};
/* clang-format on */

int rm_exporters_check(const struct rm_record_opts *opts, char *err, size_t errsz)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const struct rm_exporter_ops *o = table[i];
        if (o->wanted && !o->wanted(opts)) continue;
        if (o->check && o->check(opts, err, errsz) < 0) return -1;
    }
    return 0;
}

static void init_list(struct rm_exporters *l)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->ev_lock, NULL);
    l->inited = 1;
}

int rm_exporters_open_ops(struct rm_exporters *l, const struct rm_exporter_ops *const *ops, int n,
                          const struct rm_exporter_env *env, const char *runlog, char *err,
                          size_t errsz)
{
    if (!l->inited) init_list(l);
    if (rm_snapshot_source_init(&l->src, env->port, env->opts->command != NULL, runlog) < 0) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const struct rm_exporter_ops *o = ops[i];
        if (o->wanted && !o->wanted(env->opts)) continue;
        if (l->n == RM_EXPORTERS_MAX) {
            snprintf(err, errsz, "%s: too many exporters", o->name);
            return -1;
        }
        /* Sized before the first exporter opens: no wakeup allocates, and a close always
         * has its final snapshot. */
        if (!l->snap && !(l->snap = malloc(sizeof *l->snap))) {
            snprintf(err, errsz, "out of memory");
            return -1;
        }
        void *self = calloc(1, o->size ? o->size : 1);
        if (!self) {
            snprintf(err, errsz, "%s: out of memory", o->name);
            return -1;
        }
        if (o->open && o->open(self, env, err, errsz) < 0) {
            free(self);
            return -1;
        }
        struct rm_exporter_entry *e = &l->e[l->n];
        e->ops = o;
        e->self = self;
        e->fd_now = -1;
        pthread_mutex_lock(&l->ev_lock);
        e->live = 1;
        l->n++;
        pthread_mutex_unlock(&l->ev_lock);
    }
    return 0;
}

int rm_exporters_open(struct rm_exporters *l, const struct rm_record_opts *opts,
                      const struct rm_port *port, char *err, size_t errsz)
{
    char runlog[PATH_MAX + 16];
    snprintf(runlog, sizeof runlog, "%s/runlog.jsonl", port->sess->dir);
    struct rm_exporter_env env = {
        .opts = opts, .port = port, .dir = port->sess->dir, .now_mono_ns = rm_now_monotonic_ns()};
    return rm_exporters_open_ops(l, table, (int)(sizeof table / sizeof *table), &env, runlog, err,
                                 errsz);
}

int rm_exporters_count(const struct rm_exporters *l)
{
    return l->n;
}

static int64_t due_of(const struct rm_exporter_entry *e)
{
    return e->ops->due ? e->ops->due(e->self) : RM_EXPORTER_NEVER;
}

int rm_exporters_timeout_ms(const struct rm_exporters *l, int64_t now_mono_ns, int cap_ms)
{
    int ms = cap_ms;
    for (int i = 0; i < l->n; i++) {
        int64_t due = due_of(&l->e[i]);
        if (due == RM_EXPORTER_NEVER) continue;
        int64_t left = due - now_mono_ns;
        if (left <= 0) return 0;
        int64_t m = left / RM_NS_PER_MS + 1; /* never wake just before it */
        if (m < ms) ms = (int)m;
    }
    return ms;
}

int rm_exporters_pollfds(struct rm_exporters *l, struct pollfd *p, int max)
{
    int k = 0;
    for (int i = 0; i < l->n; i++) {
        struct rm_exporter_entry *e = &l->e[i];
        e->fd_now = e->ops->fd ? e->ops->fd(e->self) : -1;
        if (e->fd_now < 0 || k == max) continue;
        p[k] = (struct pollfd){.fd = e->fd_now, .events = POLLIN};
        l->fd_entry[k++] = i;
    }
    l->nfds = k;
    return k;
}

const struct rm_snapshot *rm_tick_snapshot(struct rm_tick *t)
{
    struct rm_exporters *l = t->list;
    if (l->snap_valid && l->snap_tick == t->now_mono_ns) return l->snap;
    rm_snapshot_take(l->snap, &l->src, t->now_mono_ns, 0);
    l->snap_tick = t->now_mono_ns;
    l->snap_valid = 1;
    return l->snap;
}

void rm_exporters_poll(struct rm_exporters *l, int64_t now_mono_ns, const struct pollfd *p, int n)
{
    int readable[RM_EXPORTERS_MAX] = {0};
    for (int k = 0; k < n && k < l->nfds; k++)
        if (p[k].revents & (POLLIN | POLLERR | POLLHUP)) readable[l->fd_entry[k]] = 1;
    l->snap_valid = 0; /* a new wakeup: a new snapshot when someone asks */
    for (int i = 0; i < l->n; i++) {
        struct rm_exporter_entry *e = &l->e[i];
        if (!readable[i] && due_of(e) > now_mono_ns) continue;
        struct rm_tick t = {.now_mono_ns = now_mono_ns, .readable = readable[i], .list = l};
        if (e->ops->poll) e->ops->poll(e->self, &t);
    }
}

void rm_exporters_event(struct rm_exporters *l, const char *name, const json_t *data)
{
    if (!l->inited) return;
    pthread_mutex_lock(&l->ev_lock);
    for (int i = 0; i < l->n; i++)
        if (l->e[i].live && l->e[i].ops->event) l->e[i].ops->event(l->e[i].self, name, data);
    pthread_mutex_unlock(&l->ev_lock);
}

void rm_exporters_say(struct rm_exporters *l, const char *line)
{
    for (int i = 0; i < l->n; i++)
        if (l->e[i].ops->say && l->e[i].ops->say(l->e[i].self, line)) return;
    fprintf(stderr, "%s\n", line);
}

void rm_exporters_close(struct rm_exporters *l, int64_t now_mono_ns)
{
    if (!l->inited) return;
    struct rm_snapshot *final = l->snap; /* there is one whenever an exporter is open */
    if (l->n > 0) rm_snapshot_take(final, &l->src, now_mono_ns, 1);
    /* Writers in trouble are waited for once, together: 1 s in all, however many. */
    rm_http_end_begin(now_mono_ns + RM_EXPORTERS_TROUBLE_WAIT_NS);
    for (int i = 0; i < l->n; i++) {
        struct rm_exporter_entry *e = &l->e[i];
        pthread_mutex_lock(&l->ev_lock); /* no event reaches it once its close begins */
        e->live = 0;
        pthread_mutex_unlock(&l->ev_lock);
        if (e->ops->close_begin) e->ops->close_begin(e->self, final);
    }
    for (int i = 0; i < l->n; i++) {
        struct rm_exporter_entry *e = &l->e[i];
        if (e->ops->close) e->ops->close(e->self, final);
        free(e->self);
        e->self = NULL;
    }
    rm_http_end_begin(0);
    pthread_mutex_lock(&l->ev_lock);
    l->n = 0;
    pthread_mutex_unlock(&l->ev_lock);
    free(l->snap);
    l->snap = NULL;
    l->snap_valid = 0;
    rm_snapshot_source_fini(&l->src);
    /* ev_lock stays until rm_exporters_fini: a worker's late event (the sink thread's) may
     * still take it, and finds the list empty. */
}

void rm_exporters_fini(struct rm_exporters *l)
{
    if (!l->inited) return;
    pthread_mutex_destroy(&l->ev_lock);
    l->inited = 0;
}
