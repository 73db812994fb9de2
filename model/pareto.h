/* The Pareto front of a sweep's runs: each run's objective value against its cost (energy
 * by default), for the sweep table's marks and the comparison page's chart. Pure, no I/O.
 *
 * A run q dominates a run p when q's objective is at least as good as p's (by the goal) at a
 * cost no higher than p's, one of the two strictly. A run is
 *  - RM_FRONT_ON when no run dominates it (runs equal in both are all on the front);
 *  - RM_FRONT_WITHIN_BAR ("on the front within its error bar") when it is dominated, but only
 *    by runs whose cost lies within its own bar [cost_lo, cost_hi]: its true cost may be
 *    lower than theirs, so the data cannot tell it off the front. A run needs a bar of its
 *    own for this (cost_lo and cost_hi finite, cost_lo < cost_hi);
 *  - RM_FRONT_NO otherwise.
 * A run whose objective or cost is NaN (unknown) is never on the front and dominates none.
 * O(n^2) comparisons: 1,000 runs take a million, about a millisecond.
 */
#ifndef RUNMON_MODEL_PARETO_H
#define RUNMON_MODEL_PARETO_H

#include <stddef.h>

#include "model/objective.h"

struct rm_pareto_point {
    double objective, cost, cost_lo, cost_hi; /* NAN = unknown: never on the front */
};

enum rm_front { RM_FRONT_NO, RM_FRONT_ON, RM_FRONT_WITHIN_BAR };

/* out[i] for each of the n points (goal says whether a higher objective is better). */
void rm_pareto_front(const struct rm_pareto_point *pts, size_t n, enum rm_goal goal,
                     enum rm_front *out);

/* The sweep table's mark: "*" on the front, "~" on the front within its error bar, "" not. */
const char *rm_front_mark(enum rm_front f);

/* The JSON/CSV word: "on", "within_bar", "no". */
const char *rm_front_name(enum rm_front f);

#endif
