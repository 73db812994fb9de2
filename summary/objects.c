#include "summary/objects.h"

#include <math.h>

#include "base/json.h"

#define RM_OBJ_DECL(e, n) extern const struct rm_obj_engine rm_obj_engine_##n;
RM_OBJECTS(RM_OBJ_DECL)
#undef RM_OBJ_DECL

static const struct rm_obj_engine *const engines[RM_OBJ_COUNT] = {
#define RM_OBJ_ENTRY(e, n) [RM_OBJ_##e] = &rm_obj_engine_##n,
    RM_OBJECTS(RM_OBJ_ENTRY)
#undef RM_OBJ_ENTRY
};

const struct rm_obj_engine *rm_obj_engine(enum rm_obj o)
{
    return engines[o];
}

/* Row f's value from acc (and the run's aggregate agg, or NULL). */
static json_t *row_value(const struct rm_obj_engine *e, int f, const void *acc, const void *agg)
{
    const struct rm_obj_figure *r = &rm_obj_figures[f];
    if (r->kind == RM_OK_JSON) return e->own_json(agg, f);
    double x = e->figure(acc, agg, f);
    return r->kind == RM_OK_INT ? (isfinite(x) ? json_integer((json_int_t)x) : json_null())
                                : rm_jnum(x, r->dec);
}

json_t *rm_obj_json(enum rm_obj o, const void *acc, const void *agg)
{
    json_t *out = json_object();
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        if (r->obj != (int)o || r->beside || (r->run_only && !agg)) continue;
        rm_json_set_at(out, r->key, row_value(engines[o], f, acc, agg));
    }
    return out;
}

void rm_obj_put(json_t *in, enum rm_obj o, const void *acc, const void *agg)
{
    json_object_set_new(in, rm_objects[o].key, rm_obj_json(o, acc, agg));
    for (int f = 0; agg && f < RM_OF_COUNT; f++)
        if (rm_obj_figures[f].obj == (int)o && rm_obj_figures[f].beside)
            rm_json_set_at(in, rm_obj_figures[f].key, row_value(engines[o], f, acc, agg));
}

const json_t *rm_obj_holder(const json_t *doc, enum rm_obj o)
{
    return rm_objects[o].in_totals ? json_object_get(doc, "totals") : doc;
}

const json_t *rm_obj_at(const json_t *in, int fig)
{
    const struct rm_obj_figure *r = &rm_obj_figures[fig];
    return rm_json_at(r->beside ? in : json_object_get(in, rm_objects[r->obj].key), r->key);
}
