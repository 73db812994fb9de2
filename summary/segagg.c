/* Segments: a file's aggregate serialized as JSON ("runmon-segment-stats"), as the recorder
 * stores it per sealed segment in a sink manifest, and read back into the summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary/summary_internal.h"

/* ---- segments (serialized per-file aggregates) ------------------------------------ */

json_t *rm_str_or_null(const char *v)
{
    return v && *v ? json_string(v) : json_null();
}

static json_t *file_agg_to_json(const struct file_agg *f)
{
    json_t *o = json_object(), *g = json_array(), *sk = json_object();
    json_object_set_new(o, "format", json_string("runmon-segment-stats"));
    json_object_set_new(o, "kind", json_string(rm_input_kind_names[f->kind]));
    json_object_set_new(o, "interval_ns", json_integer(f->interval_ns));
    json_object_set_new(o, "gap_ns", json_integer(f->gap_ns));
    json_object_set_new(o, "rows", json_integer((json_int_t)f->rows));
    for (int i = 0; i < RM_SKIP_COUNT; i++)
        json_object_set_new(sk, rm_skip_names[i], json_integer((json_int_t)f->skipped[i]));
    json_object_set_new(o, "skipped", sk);
    json_object_set_new(o, "gaps", json_integer((json_int_t)f->gaps));
    json_object_set_new(o, "gap_total_ns", json_integer(f->gap_total_ns));
    json_object_set_new(o, "first_ns",
                        f->first_ns == RM_NO_TIME ? json_null() : json_integer(f->first_ns));
    json_object_set_new(o, "last_ns",
                        f->last_ns == RM_NO_TIME ? json_null() : json_integer(f->last_ns));
    for (size_t i = 0; i < f->gpus.n; i++) {
        const struct gpu_slot *sl = &f->gpus.s[i];
        json_array_append_new(
            g, json_pack("{s:s%,s:o,s:o,s:o,s:o,s:o}", "key", sl->key, sl->keylen, "index",
                         sl->index >= 0 ? json_integer(sl->index) : json_null(), "uuid",
                         rm_str_or_null(sl->uuid), "name", rm_str_or_null(sl->name), "pci_bus_id",
                         rm_str_or_null(sl->pci), "stats", rm_stats_to_json(&sl->st)));
    }
    json_object_set_new(o, "gpus", g);
    json_object_set_new(o, "total_power", rm_stat_to_json(&f->total_power));
    json_object_set_new(o, "host", rm_host_stats_to_json(&f->host));
    return o;
}

static void copy_str(char *dst, size_t cap, json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    snprintf(dst, cap, "%s", s);
}

static int file_agg_from_json(struct file_agg *f, const json_t *j, char *err, size_t errsz)
{
    rm_file_agg_init(f, RM_INPUT_GPU_CSV, NULL); /* so the caller can always free it */
    const char *kind = json_string_value(json_object_get(j, "kind"));
    int k = -1;
    for (int i = 0; kind && i < RM_INPUT_COUNT; i++)
        if (!strcmp(kind, rm_input_kind_names[i])) k = i;
    json_t *g = json_object_get(j, "gpus");
    if (k < 0 || !json_is_array(g)) {
        snprintf(err, errsz, "segment: unknown kind or no gpus array");
        return -1;
    }
    f->kind = (enum rm_input_kind)k;
    json_t *v;
    if (json_is_integer(v = json_object_get(j, "interval_ns")))
        f->interval_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gap_ns"))) f->gap_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "rows"))) f->rows = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gaps"))) f->gaps = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gap_total_ns")))
        f->gap_total_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "first_ns"))) f->first_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "last_ns"))) f->last_ns = json_integer_value(v);
    for (int i = 0; i < RM_SKIP_COUNT; i++)
        if (json_is_integer(v = json_object_get(json_object_get(j, "skipped"), rm_skip_names[i])))
            f->skipped[i] = (uint64_t)json_integer_value(v);
    size_t i;
    json_t *e;
    json_array_foreach(g, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        if (!key || strlen(key) >= RM_GPU_KEY_MAX) {
            snprintf(err, errsz, "segment: gpu without a key");
            return -1;
        }
        size_t si = rm_gpu_table_add(&f->gpus, key, strlen(key));
        struct gpu_slot *sl = &f->gpus.s[si];
        json_t *ix = json_object_get(e, "index");
        sl->index = json_is_integer(ix) ? (int)json_integer_value(ix) : -1;
        copy_str(sl->uuid, sizeof sl->uuid, json_object_get(e, "uuid"));
        copy_str(sl->name, sizeof sl->name, json_object_get(e, "name"));
        copy_str(sl->pci, sizeof sl->pci, json_object_get(e, "pci_bus_id"));
        if (rm_stats_from_json(json_object_get(e, "stats"), &sl->st, err, errsz)) return -1;
    }
    if (rm_stat_from_json(json_object_get(j, "total_power"), &f->total_power) ||
        rm_host_stats_from_json(json_object_get(j, "host"), &f->host)) {
        snprintf(err, errsz, "segment: bad total_power or host");
        return -1;
    }
    return 0;
}

int rm_summary_add_segment(struct rm_summary *s, const json_t *seg, char *err, size_t errsz)
{
    struct file_agg tmp;
    if (file_agg_from_json(&tmp, seg, err, errsz)) {
        free(tmp.gpus.s);
        free(tmp.path);
        return -1;
    }
    struct file_agg *f = rm_summary_push_job(s, tmp.kind, NULL);
    free(f->path);
    *f = tmp;
    return 0;
}

json_t *rm_summary_segment_from_file(enum rm_input_kind kind, const char *path, double interval_s,
                                     char *err, size_t errsz)
{
    struct file_agg *f = malloc(sizeof *f);
    if (!f) return NULL;
    rm_file_agg_init(f, kind, path);
    rm_scan_file(f, (int64_t)llround(interval_s * 1e9), NULL);
    json_t *j = NULL;
    if (f->rc && f->rows == 0 && f->err[0])
        snprintf(err, errsz, "%s", f->err);
    else
        j = file_agg_to_json(f);
    rm_file_agg_free(f);
    return j;
}
