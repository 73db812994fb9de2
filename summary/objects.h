/* The engine's side of model/objects.h: each object of the run and the phases that a stream
 * of host samples feeds has an engine (in the file that parses its stream: summary/iocsv.c's
 * rm_obj_engine_io, summary/stallcsv.c's rm_obj_engine_stall), which keeps a file's and the
 * run's aggregate (the run's object and each phase's) and computes each figure row of its
 * object. summary/fileagg.c keeps a file's aggregate in file_agg's obj[]; summary/build.c
 * merges the files' in order, then writes every object, the run's and each phase's, by
 * walking model/objects.c's rows through rm_obj_json, and folds the phases past the budget
 * into the "(other phases)" row with the engine's accumulator. Neither names an object.
 * The host's objects (cpu, proc: rm_objects[].host) keep no aggregate of their own: their
 * engine (summary/hostcsv.c's) has only figure, whose accumulator and aggregate are the
 * struct rm_host_stats that build.c merges for the run, each phase and the other row.
 */
#ifndef RUNMON_SUMMARY_OBJECTS_H
#define RUNMON_SUMMARY_OBJECTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model/objects.h"

/* How the run shares an interval out to its phases: calls each(arg, phase, ns) for each
 * phase window [t0, t1] overlaps, with the nanoseconds it overlaps (summary/spans.c's rule,
 * as the files' own intervals are shared out). */
struct rm_obj_spans {
    void (*share)(void *ctx, int64_t t0, int64_t t1,
                  void (*each)(void *arg, size_t phase, int64_t ns), void *arg);
    void *ctx;
};

struct rm_obj_engine {
    /* An empty aggregate of a run (or a file) with nph phases; its memory, freed whole. */
    void *(*agg_new)(size_t nph);
    void (*agg_free)(void *agg);
    /* A file's aggregate merged into the run's, the files in the order they were added (a
     * stream's segments one after another: what lies between two is shared by spans). */
    void (*agg_merge)(void *run, const void *file, const struct rm_obj_spans *spans);
    /* The run's accumulator; phase p's, or NULL where none (its figures null). */
    const void *(*run)(const void *agg);
    const void *(*phase)(const void *agg, size_t p);
    /* The "(other phases)" row: an empty accumulator, another phase's folded in, freed. */
    void *(*acc_new)(void);
    void (*acc_merge)(void *acc, const void *from);
    void (*acc_free)(void *acc);
    /* Row fig's value from an accumulator, NULL as nothing seen (NaN: unknown, written
     * null); agg is the run's
     * aggregate for the run's object (its run-only rows), NULL for a phase's. */
    double (*figure)(const void *acc, const void *agg, int fig);
    /* A run-only row of its own shape (RM_OK_JSON), from the run's aggregate. */
    json_t *(*own_json)(const void *agg, int fig);
};

/* Object o's engine (model/objects.h's RM_OBJECTS, each rm_obj_engine_<name>). */
const struct rm_obj_engine *rm_obj_engine(enum rm_obj o);

/* Object o as summary.json writes it: every row of it in table order from acc (NULL: the
 * engine's "nothing seen"), a row whose key is a path "a.b" as member b of member a; with
 * agg (the run's aggregate), the run-only rows too. Rows written beside the object are not
 * in it (rm_obj_put). */
json_t *rm_obj_json(enum rm_obj o, const void *acc, const void *agg);

/* The run's object o into `in` (what holds it: rm_obj_holder's answer), then its rows
 * written beside it, in table order. */
void rm_obj_put(json_t *in, enum rm_obj o, const void *acc, const void *agg);

/* What holds the run's object o in summary document doc: its "totals" (rm_objects[].in_totals)
 * or doc itself; NULL where doc has no totals. */
const json_t *rm_obj_holder(const json_t *doc, enum rm_obj o);

/* Figure fig's value in `in`, what holds its object (a phase row, or rm_obj_holder's answer
 * for the run's): its object's member at the row's key path, or for a row written beside
 * its object, in's own member; NULL where missing. */
const json_t *rm_obj_at(const json_t *in, int fig);

#endif
