#include "summary/objects.h"

#include <math.h>

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

static json_t *real(double v, int dec)
{
    if (!isfinite(v)) return json_null();
    double m = pow(10, dec), r = round(v * m) / m;
    return json_real(r == 0 ? 0 : r);
}

json_t *rm_obj_json(enum rm_obj o, const void *acc, const void *agg)
{
    const struct rm_obj_engine *e = engines[o];
    json_t *out = json_object();
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        if (r->obj != (int)o || (r->run_only && !agg)) continue;
        json_t *v;
        if (r->kind == RM_OK_JSON) {
            v = e->own_json(agg, f);
        } else {
            double x = e->figure(acc, agg, f);
            v = r->kind == RM_OK_INT ? (isfinite(x) ? json_integer((json_int_t)x) : json_null())
                                     : real(x, r->dec);
        }
        json_object_set_new(out, r->key, v);
    }
    return out;
}
