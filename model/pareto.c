/* The Pareto front of objective against cost: see pareto.h. */
#include "model/pareto.h"

#include <math.h>
#include <stdbool.h>

static bool known(const struct rm_pareto_point *p)
{
    return !isnan(p->objective) && !isnan(p->cost);
}

/* Whether q dominates p: at least as good an objective at no higher cost, one strictly. */
static bool dominates(const struct rm_pareto_point *q, const struct rm_pareto_point *p,
                      enum rm_goal goal)
{
    bool better = rm_goal_better(goal, q->objective, p->objective);
    bool as_good = better || q->objective == p->objective;
    return as_good && q->cost <= p->cost && (better || q->cost < p->cost);
}

static bool has_bar(const struct rm_pareto_point *p)
{
    return isfinite(p->cost_lo) && isfinite(p->cost_hi) && p->cost_lo < p->cost_hi;
}

/* Where p stands among the n points (p is one of them). */
static enum rm_front place(const struct rm_pareto_point *pts, size_t n, size_t i, enum rm_goal goal)
{
    const struct rm_pareto_point *p = &pts[i];
    if (!known(p)) return RM_FRONT_NO;
    bool dominated = false, bar = has_bar(p);
    for (size_t j = 0; j < n; j++) {
        const struct rm_pareto_point *q = &pts[j];
        if (j == i || !known(q) || !dominates(q, p, goal)) continue;
        dominated = true;
        if (!bar || q->cost < p->cost_lo || q->cost > p->cost_hi) return RM_FRONT_NO;
    }
    return dominated ? RM_FRONT_WITHIN_BAR : RM_FRONT_ON;
}

void rm_pareto_front(const struct rm_pareto_point *pts, size_t n, enum rm_goal goal,
                     enum rm_front *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = place(pts, n, i, goal);
}

const char *rm_front_mark(enum rm_front f)
{
    return f == RM_FRONT_ON ? "*" : f == RM_FRONT_WITHIN_BAR ? "~" : "";
}

const char *rm_front_name(enum rm_front f)
{
    return f == RM_FRONT_ON ? "on" : f == RM_FRONT_WITHIN_BAR ? "within_bar" : "no";
}
