#include "summary/sample.h"

#include <jansson.h>
#include <string.h>

#include "base/rm_time.h"

const char *const rm_skip_names[RM_SKIP_COUNT] = {
    "not_data", "torn_line", "bad_field_count", "bad_time", "garbage", "long_line", "per_cpu"};

const char *const rm_host_metric_names[RM_HM_COUNT] = {
    "usr_pct",     "sys_pct",      "iowait_pct",  "steal_pct",    "idle_pct",
    "mem_used_mb", "mem_total_mb", "proc_rss_mb", "proc_cpu_pct", "proc_nprocs"};

void rm_host_stats_add(struct rm_host_stats *h, const struct rm_host_sample *s, bool proc)
{
    if (proc)
        h->proc_samples++;
    else
        h->cpu_samples++;
    for (int m = 0; m < RM_HM_COUNT; m++)
        if (s->valid & (1u << m)) rm_stat_add(&h->m[m], s->v[m]);
}

void rm_host_stats_merge(struct rm_host_stats *a, const struct rm_host_stats *b)
{
    a->cpu_samples += b->cpu_samples;
    a->proc_samples += b->proc_samples;
    for (int m = 0; m < RM_HM_COUNT; m++)
        rm_stat_merge(&a->m[m], &b->m[m]);
}

json_t *rm_host_stats_to_json(const struct rm_host_stats *h)
{
    json_t *m = json_object();
    for (int i = 0; i < RM_HM_COUNT; i++)
        json_object_set_new(m, rm_host_metric_names[i], rm_stat_to_json(&h->m[i]));
    return json_pack("{s:I,s:I,s:o}", "cpu_samples", (json_int_t)h->cpu_samples, "proc_samples",
                     (json_int_t)h->proc_samples, "metrics", m);
}

int rm_host_stats_from_json(const json_t *j, struct rm_host_stats *h)
{
    memset(h, 0, sizeof *h);
    json_t *c = json_object_get(j, "cpu_samples"), *p = json_object_get(j, "proc_samples");
    json_t *m = json_object_get(j, "metrics");
    if (!json_is_integer(c) || !json_is_integer(p) || !json_is_object(m) ||
        json_integer_value(c) < 0 || json_integer_value(p) < 0)
        return -1;
    h->cpu_samples = (uint64_t)json_integer_value(c);
    h->proc_samples = (uint64_t)json_integer_value(p);
    for (int i = 0; i < RM_HM_COUNT; i++)
        if (rm_stat_from_json(json_object_get(m, rm_host_metric_names[i]), &h->m[i])) return -1;
    return 0;
}

int64_t rm_json_time(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    int64_t ns;
    if (json_is_string(v) && !rm_parse_ts_checked(json_string_value(v), json_string_length(v), &ns))
        return ns;
    return RM_NO_TIME;
}
