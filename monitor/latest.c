#include "monitor/latest.h"

#include <math.h>
#include <string.h>

#include "model/energy.h"
#include "model/values.h"

void rm_latest_gpu_update(struct rm_latest_gpu *g, int64_t ts_ns, const double *v, const char *uuid,
                          size_t uuid_len, int64_t gap_ns)
{
    g->valid = 1;
    g->ts_ns = ts_ns;
    memcpy(g->v, v, sizeof g->v);
    if (uuid && uuid_len && !rm_value_is_missing(uuid, uuid_len)) {
        if (uuid_len >= sizeof g->uuid) uuid_len = sizeof g->uuid - 1;
        memcpy(g->uuid, uuid, uuid_len);
        g->uuid[uuid_len] = '\0';
    }
    double w = v[RM_GM_POWER];
    if (!isfinite(w) || w < 0) w = NAN;
    if (g->last_row_ts_ns) {
        double j;
        int64_t dt;
        if (rm_energy_span(g->last_row_ts_ns, g->last_power_w, ts_ns, w, gap_ns, &j, &dt) ==
                RM_SPAN_BRIDGED &&
            dt > 0) {
            g->energy_j += j;
            rm_energy_piece_bar(g->last_row_ts_ns, g->last_power_w, ts_ns, w, g->last_row_ts_ns,
                                ts_ns, false, false, &g->bar);
        }
    }
    if (!isnan(w) && !g->energy_valid) g->first_power_w = w;
    if (!isnan(w)) g->energy_valid = 1;
    g->last_power_w = w;
    g->last_row_ts_ns = ts_ns;
}
