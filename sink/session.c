#include "sink/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "model/energy.h"
#include "model/streams.h"

void rm_session_make_id(char *out, size_t cap, int64_t epoch_ns, const char *host, pid_t pid)
{
    time_t secs = (time_t)(epoch_ns / RM_NS_PER_SEC);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    /* Host names may hold characters that are awkward in paths: keep [A-Za-z0-9.-_]. */
    char safe[64];
    size_t j = 0;
    for (size_t i = 0; host[i] && j < sizeof safe - 1; i++) {
        char c = host[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
        safe[j++] = ok ? c : '_';
    }
    safe[j] = '\0';
    snprintf(out, cap, "%s-%s-%ld", stamp, j ? safe : "host", (long)pid);
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *split_fields(const char *list)
{
    json_t *arr = json_array();
    if (!list) return arr;
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) json_array_append_new(arr, json_stringn(p, n));
        p += n + (e ? 1 : 0);
    }
    return arr;
}

/* The power fields probe and which field the energy rule uses (docs/FORMATS.md). */
static json_t *power_json(const struct rm_session *s)
{
    json_t *o = json_object(), *f = json_object();
    for (int i = 0; i < RM_POWER_FIELD_COUNT; i++) {
        unsigned bit = 1u << i;
        json_object_set_new(f, rm_power_fields[i],
                            !s->power_probed             ? json_null()
                            : (s->power_supported & bit) ? json_string("supported")
                            : (s->power_known & bit)     ? json_string("not_supported")
                                                         : json_string("unknown_field"));
    }
    json_object_set_new(o, "probed", json_boolean(s->power_probed));
    json_object_set_new(o, "fields", f);
    json_object_set_new(o, "energy_field", json_string(RM_ENERGY_POWER_FIELD));
    json_object_set_new(o, "energy_field_why", json_string(RM_ENERGY_POWER_FIELD_WHY));
    return o;
}

static json_t *str_or_null(const char *v)
{
    return v[0] ? rm_jstr(v) : json_null();
}

/* The batch job (SLURM), or null outside one. */
static json_t *job_json(const struct rm_job *j)
{
    if (!j->known) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "scheduler", json_string("slurm"));
    json_object_set_new(o, "job_id", str_or_null(j->job_id));
    json_object_set_new(o, "array_job_id", str_or_null(j->array_job_id));
    json_object_set_new(o, "array_task_id", str_or_null(j->array_task_id));
    json_object_set_new(o, "step_id", str_or_null(j->step_id));
    json_object_set_new(o, "node", str_or_null(j->node));
    json_object_set_new(o, "partition", str_or_null(j->partition));
    json_object_set_new(o, "nodes", j->nnodes >= 0 ? json_integer(j->nnodes) : json_null());
    json_object_set_new(o, "tasks", j->ntasks >= 0 ? json_integer(j->ntasks) : json_null());
    json_object_set_new(o, "rank", j->procid >= 0 ? json_integer(j->procid) : json_null());
    json_object_set_new(o, "gpus", str_or_null(j->gpus));
    return o;
}

/* How the workload was defined (model/workload.h). */
static json_t *workload_json(const struct rm_workload *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string(rm_workload_kind_names[w->kind]));
    if (w->kind == RM_WORKLOAD_PID) {
        json_object_set_new(o, "pid", json_integer(w->pid));
        /* runmon is not its parent: the kernel tells it no exit status */
        json_object_set_new(o, "exit_status_known", json_false());
        json_object_set_new(o, "exited", json_boolean(w->ended));
    }
    if (w->kind == RM_WORKLOAD_CGROUP || w->kind == RM_WORKLOAD_SLURM_STEP) {
        json_object_set_new(o, "cgroup", rm_jstr(w->cgroup));
        json_object_set_new(o, "cgroup_version", json_integer(w->cgroup_version));
    }
    if (w->kind == RM_WORKLOAD_SLURM_STEP) {
        json_object_set_new(o, "job_id", rm_jstr(w->job_id));
        json_object_set_new(o, "step_id", rm_jstr(w->step_id));
    }
    return o;
}

static json_t *choice_json(const struct rm_gpu_choice *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "by", str_or_null(c->by));
    json_object_set_new(o, "value",
                        c->by[0] && strcmp(c->by, "--all-gpus") ? rm_jstr(c->value) : json_null());
    json_object_set_new(o, "visible", json_integer(c->visible));
    json_t *w = json_array();
    for (int i = 0; i < c->nwarnings; i++)
        json_array_append_new(w, rm_jstr(c->warning[i]));
    json_object_set_new(o, "warnings", w);
    return o;
}

json_t *rm_session_to_json(const struct rm_session *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "format", json_string("runmon-session"));
    json_object_set_new(o, "schema_version", json_integer(1));
    json_object_set_new(o, "session_id", json_string(s->id));
    json_object_set_new(o, "status", json_string(s->status));
    json_object_set_new(o, "host", rm_jstr(s->host));
    json_object_set_new(o, "pid", json_integer(s->pid));
    json_object_set_new(o, "started_at", rm_jts_or_null(s->started_ns));
    json_object_set_new(o, "ended_at", rm_jts_or_null(s->ended_ns));
    if (s->command) {
        json_t *cmd = json_array();
        for (char *const *a = s->command; *a; a++)
            json_array_append_new(cmd, rm_jstr(*a));
        json_object_set_new(o, "command", cmd);
    } else {
        json_object_set_new(o, "command", json_null());
    }
    json_object_set_new(o, "sweep", rm_str_or_null(s->sweep));
    json_t *params = s->params_json ? json_loads(s->params_json, 0, NULL) : NULL;
    json_object_set_new(o, "params", json_is_object(params) ? params : json_object());
    if (params && !json_is_object(params)) json_decref(params);
    json_object_set_new(o, "exit_code",
                        s->exit_code >= 0 ? json_integer(s->exit_code) : json_null());
    json_object_set_new(o, "signal",
                        s->stop_signal > 0 ? json_integer(s->stop_signal) : json_null());
    /* Only when the command never ran: its session is no run (the listing says so). */
    if (s->command_error[0]) json_object_set_new(o, "command_error", json_string(s->command_error));
    json_object_set_new(o, "interval_s", json_real(s->interval_s));
    json_object_set_new(o, "gpu_fields", split_fields(s->gpu_fields));
    json_object_set_new(o, "dmon_metrics",
                        s->dmon_metrics ? json_string(s->dmon_metrics) : json_null());
    json_object_set_new(o, "dmon_interval_s", json_integer(s->dmon_interval_s));
    json_t *gpus = json_array();
    for (int i = 0; i < s->ngpus; i++) {
        const struct rm_gpu_info *g = &s->gpus[i];
        json_t *gj = json_object();
        json_object_set_new(gj, "index", json_integer(g->index));
        json_object_set_new(gj, "uuid", rm_jstr(g->uuid));
        json_object_set_new(gj, "name", rm_jstr(g->name));
        json_object_set_new(gj, "pci_bus_id", rm_jstr(g->pci_bus_id));
        json_object_set_new(gj, "memory_total_mb", num_or_null(g->memory_total_mb));
        json_array_append_new(gpus, gj);
    }
    json_object_set_new(o, "gpus", gpus);
    json_object_set_new(o, "gpu_selection", choice_json(&s->gpu_choice));
    json_object_set_new(o, "job", job_json(&s->job));
    json_object_set_new(o, "workload", workload_json(&s->workload));
    json_object_set_new(o, "driver_version",
                        s->driver_version[0] ? rm_jstr(s->driver_version) : json_null());
    json_object_set_new(o, "power", power_json(s));
    json_t *cols = json_object();
    for (int i = 0; i < RM_STREAM_COUNT; i++) {
        const struct rm_collector_health *c = &s->collectors[i];
        if (!c->name) continue;
        json_t *cj = json_object();
        json_object_set_new(cj, "health", json_string(rm_health_names[c->health]));
        json_object_set_new(cj, "failure_event_count",
                            json_integer((json_int_t)c->failure_event_count));
        json_object_set_new(cj, "nonconforming_lines",
                            json_integer((json_int_t)c->nonconforming_lines));
        if (rm_stream_defs[i].own_time)
            json_object_set_new(cj, "arrival_ts_rows",
                                json_integer((json_int_t)c->arrival_ts_rows));
        json_object_set_new(cj, "last_error",
                            c->last_error[0] ? rm_jstr(c->last_error) : json_null());
        json_object_set_new(cols, c->name, cj);
    }
    json_object_set_new(o, "collectors", cols);
    json_t *sched = json_object();
    static const char *const vars[] = {"SLURM_JOB_ID",  "SLURM_PROCID", "SLURM_NODEID",
                                       "SLURM_LOCALID", "RANK",         "LOCAL_RANK",
                                       "WORLD_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v) json_object_set_new(sched, vars[i], rm_jstr(v));
    }
    json_object_set_new(o, "scheduler", sched);
    json_t *th = json_object();
    json_object_set_new(th, "warning_pct", json_real(s->warn_pct));
    json_object_set_new(th, "critical_pct", json_real(s->crit_pct));
    json_object_set_new(o, "thresholds", th);
    json_t *cpu = json_object();
    json_object_set_new(cpu, "samples", json_integer((json_int_t)s->cpu_samples));
    json_object_set_new(cpu, "max_lateness_ms", json_real((double)s->max_sample_lateness_ns / 1e6));
    json_object_set_new(o, "cpu_sampler", cpu);
    return o;
}

int rm_session_save(const struct rm_session *s)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/session.json", s->dir) >= (int)sizeof path) return -1;
    json_t *o = rm_session_to_json(s);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    json_decref(o);
    if (!text) return -1;
    size_t n = strlen(text);
    /* json_dumps leaves no newline; files end with one. */
    char *withnl = realloc(text, n + 2);
    if (!withnl) {
        free(text);
        return -1;
    }
    withnl[n] = '\n';
    int rc = rm_write_file_atomic(path, withnl, n + 1);
    free(withnl);
    return rc;
}
