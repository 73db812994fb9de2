/* Metric names, objectives, costs and targets (model/objective.h) and the Pareto front of
 * objective against cost (model/pareto.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/objective.h"
#include "model/pareto.h"

static void metric_names(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(rm_metric_name_check("loss", err, sizeof err), 0);
    assert_int_equal(rm_metric_name_check("top-1 acc", err, sizeof err), 0);
    assert_int_equal(rm_metric_name_check("précision", err, sizeof err), 0);
    assert_int_equal(rm_metric_name_check("", err, sizeof err), -1);
    assert_string_equal(err, "empty metric name");
    assert_int_equal(rm_metric_name_check(NULL, err, sizeof err), -1);
    assert_int_equal(rm_metric_name_check("a\x01"
                                          "b",
                                          err, sizeof err),
                     -1);
    /* The bad byte is quoted escaped, never raw. */
    assert_non_null(strstr(err, "a\\x01b"));
    assert_null(strchr(err, '\x01'));
    assert_int_equal(rm_metric_name_check("a\xc2\x85", err, sizeof err), -1); /* C1 NEL */
    assert_int_equal(rm_metric_name_check("\xff", err, sizeof err), -1);      /* not UTF-8 */
    assert_non_null(strstr(err, "\\xff"));
    assert_int_equal(rm_metric_name_check("del\x7f", err, sizeof err), -1);
    const char *bad[] = {"train/loss", "a:b", "a=b", "a<b", "a>b", "a,b", " a", "a "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rm_metric_name_check(bad[i], err, sizeof err), -1);
    assert_non_null(strstr(err, "space"));
    char lng[RM_METRIC_NAME_MAX + 1];
    memset(lng, 'x', RM_METRIC_NAME_MAX - 1);
    lng[RM_METRIC_NAME_MAX - 1] = '\0';
    assert_int_equal(rm_metric_name_check(lng, err, sizeof err), 0);
    lng[RM_METRIC_NAME_MAX - 1] = 'x';
    lng[RM_METRIC_NAME_MAX] = '\0';
    assert_int_equal(rm_metric_name_check(lng, err, sizeof err), -1);
    assert_non_null(strstr(err, "longer than 127"));
    /* A small err buffer is cut, not overrun; none at all is allowed. */
    char tiny[4];
    assert_int_equal(rm_metric_name_check("", tiny, sizeof tiny), -1);
    assert_string_equal(tiny, "emp");
    assert_int_equal(rm_metric_name_check("", NULL, 0), -1);
}

static void objectives(void **state)
{
    (void)state;
    char err[256], buf[160];
    struct rm_objective o;
    assert_int_equal(rm_objective_parse("acc:max", &o, err, sizeof err), 0);
    assert_string_equal(o.metric, "acc");
    assert_int_equal(o.goal, RM_GOAL_MAX);
    assert_int_equal(o.pick, RM_PICK_LAST);
    assert_string_equal(rm_objective_format(&o, buf, sizeof buf), "acc:max");
    assert_int_equal(rm_objective_parse("loss:min:best", &o, err, sizeof err), 0);
    assert_string_equal(o.metric, "loss");
    assert_int_equal(o.goal, RM_GOAL_MIN);
    assert_int_equal(o.pick, RM_PICK_BEST);
    assert_string_equal(rm_objective_format(&o, buf, sizeof buf), "loss:min:best");
    assert_int_equal(rm_objective_parse("loss:min:last", &o, err, sizeof err), 0);
    assert_int_equal(o.pick, RM_PICK_LAST);
    assert_string_equal(rm_goal_name(RM_GOAL_MAX), "max");
    assert_string_equal(rm_pick_name(RM_PICK_BEST), "best");

    struct rm_objective keep = o;
    const char *bad[] = {"acc",      "acc:",           ":max",    "acc:up",        "acc:max:",
                         "acc:maxx", "acc:max:best:x", "a/b:max", "acc:max:worst", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(rm_objective_parse(bad[i], &o, err, sizeof err), -1);
        assert_true(err[0] != '\0');
        assert_memory_equal(&o, &keep, sizeof o); /* untouched on failure */
    }
    assert_int_equal(rm_objective_parse("acc:up", &o, err, sizeof err), -1);
    assert_string_equal(err, "objective 'acc:up': the goal must be min or max");
    assert_int_equal(rm_objective_parse("a\tb:max", &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "'a\\tb:max'"));
}

static void better_and_values(void **state)
{
    (void)state;
    assert_true(rm_goal_better(RM_GOAL_MAX, 2, 1));
    assert_false(rm_goal_better(RM_GOAL_MAX, 1, 1));
    assert_true(rm_goal_better(RM_GOAL_MIN, 1, 2));
    assert_true(rm_goal_better(RM_GOAL_MIN, 5, NAN));
    assert_false(rm_goal_better(RM_GOAL_MIN, NAN, 5));
    assert_false(rm_goal_better(RM_GOAL_MAX, NAN, NAN));

    struct rm_metric_stat s;
    rm_metric_stat_init(&s);
    struct rm_objective o = {"loss", RM_GOAL_MIN, RM_PICK_LAST};
    assert_true(isnan(rm_objective_value(&o, &s)));
    assert_true(isnan(rm_objective_value(&o, NULL)));
    assert_int_equal(s.first_step, -1);
    rm_metric_stat_add(&s, 2.3, 0, 100.0);
    rm_metric_stat_add(&s, 0.39, 5, 101.0);
    rm_metric_stat_add(&s, 0.41, -1, 102.5);
    assert_int_equal(s.count, 3);
    assert_true(s.min == 0.39 && s.max == 2.3 && s.last == 0.41);
    assert_int_equal(s.first_step, 0);
    assert_int_equal(s.last_step, -1);
    assert_true(s.first_t == 100.0 && s.last_t == 102.5);
    assert_true(rm_objective_value(&o, &s) == 0.41);
    o.pick = RM_PICK_BEST;
    assert_true(rm_objective_value(&o, &s) == 0.39);
    o.goal = RM_GOAL_MAX;
    assert_true(rm_objective_value(&o, &s) == 2.3);
}

static void costs(void **state)
{
    (void)state;
    char err[256];
    enum rm_cost c = RM_COST_VRAM;
    const char *names[] = {"energy", "duration", "vram", "gpu_hours"};
    const enum rm_cost want[] = {RM_COST_ENERGY, RM_COST_DURATION, RM_COST_VRAM, RM_COST_GPU_HOURS};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(rm_cost_parse(names[i], &c, err, sizeof err), 0);
        assert_int_equal(c, want[i]);
        assert_string_equal(rm_cost_name(c), names[i]);
    }
    assert_string_equal(rm_cost_unit(RM_COST_ENERGY), "Wh");
    assert_string_equal(rm_cost_unit(RM_COST_GPU_HOURS), "GPU-h");
    assert_string_equal(rm_cost_name((enum rm_cost)9), "?");
    assert_int_equal(rm_cost_parse("Energy", &c, err, sizeof err), -1);
    assert_int_equal(c, RM_COST_GPU_HOURS);
    assert_string_equal(err, "cost 'Energy': expected duration, energy, vram or gpu_hours");
    assert_int_equal(rm_cost_parse(NULL, &c, err, sizeof err), -1);
}

static void targets(void **state)
{
    (void)state;
    char err[256], buf[160];
    struct rm_target t;
    assert_int_equal(rm_target_parse("loss<=0.3", &t, err, sizeof err), 0);
    assert_string_equal(t.metric, "loss");
    assert_true(t.le);
    assert_true(t.value == 0.3);
    assert_string_equal(rm_target_format(&t, buf, sizeof buf), "loss<=0.3");
    assert_true(rm_target_met(&t, 0.3));
    assert_true(rm_target_met(&t, -1));
    assert_false(rm_target_met(&t, 0.31));
    assert_false(rm_target_met(&t, NAN));
    assert_int_equal(rm_target_parse(" acc >= 9e-1 ", &t, err, sizeof err), 0);
    assert_string_equal(t.metric, "acc");
    assert_false(t.le);
    assert_true(t.value == 0.9);
    assert_true(rm_target_met(&t, 0.95));
    assert_false(rm_target_met(&t, 0.5));
    assert_string_equal(rm_target_format(&t, buf, sizeof buf), "acc>=0.9");
    assert_int_equal(rm_target_parse("loss<=-2", &t, err, sizeof err), 0);
    assert_true(t.value == -2);

    const char *bad[] = {"loss<0.3",  "loss=0.3",    "<=0.3",      "loss<=", "loss<=nan",
                         "loss<=inf", "loss<=1e999", "loss<=0.3x", "a/b<=1", "loss<=0x10",
                         "",          NULL};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(rm_target_parse(bad[i], &t, err, sizeof err), -1);
        assert_true(err[0] != '\0');
    }
    assert_int_equal(rm_target_parse("loss<=nan", &t, err, sizeof err), -1);
    assert_string_equal(err, "target 'loss<=nan': the value must be a finite decimal number");
}

static struct rm_pareto_point pt(double obj, double cost)
{
    return (struct rm_pareto_point){obj, cost, NAN, NAN};
}

static void front_basic(void **state)
{
    (void)state;
    /* acc (max) against Wh: A cheap and poor, B the best, C dominated by B, D the dearest
     * and no better than B. */
    struct rm_pareto_point p[] = {pt(0.80, 10), pt(0.90, 20), pt(0.85, 25), pt(0.90, 30)};
    enum rm_front f[4];
    rm_pareto_front(p, 4, RM_GOAL_MAX, f);
    assert_int_equal(f[0], RM_FRONT_ON);
    assert_int_equal(f[1], RM_FRONT_ON);
    assert_int_equal(f[2], RM_FRONT_NO);
    assert_int_equal(f[3], RM_FRONT_NO);
    /* The same values as a loss (min): now the low ones are good. */
    rm_pareto_front(p, 4, RM_GOAL_MIN, f);
    assert_int_equal(f[0], RM_FRONT_ON);
    assert_int_equal(f[1], RM_FRONT_NO);
    assert_int_equal(f[2], RM_FRONT_NO);
    assert_int_equal(f[3], RM_FRONT_NO);
    assert_string_equal(rm_front_mark(RM_FRONT_ON), "*");
    assert_string_equal(rm_front_mark(RM_FRONT_WITHIN_BAR), "~");
    assert_string_equal(rm_front_mark(RM_FRONT_NO), "");
    assert_string_equal(rm_front_name(RM_FRONT_WITHIN_BAR), "within_bar");
}

static void front_ties_and_unknowns(void **state)
{
    (void)state;
    /* Equal in both: neither dominates. Equal cost, better objective: dominates. */
    struct rm_pareto_point p[] = {pt(1, 5), pt(1, 5), pt(0.5, 5), pt(NAN, 1), pt(2, NAN), pt(1, 6)};
    enum rm_front f[6];
    rm_pareto_front(p, 6, RM_GOAL_MAX, f);
    assert_int_equal(f[0], RM_FRONT_ON);
    assert_int_equal(f[1], RM_FRONT_ON);
    assert_int_equal(f[2], RM_FRONT_NO);
    /* Unknowns are never on the front and dominate nothing (p[3] is cheaper, p[4] better). */
    assert_int_equal(f[3], RM_FRONT_NO);
    assert_int_equal(f[4], RM_FRONT_NO);
    assert_int_equal(f[5], RM_FRONT_NO); /* same objective at a higher cost */
    /* n = 0 and one point. */
    rm_pareto_front(p, 0, RM_GOAL_MAX, f);
    rm_pareto_front(p + 5, 1, RM_GOAL_MAX, f);
    assert_int_equal(f[0], RM_FRONT_ON);
}

static void front_within_bar(void **state)
{
    (void)state;
    /* B is dominated by A only, and A's cost 19 is within B's bar [18, 23]: "~". C is
     * dominated by A (19, outside its bar [24, 26]): off. D has no bar: off. E is dominated
     * by A (inside its bar) and by F (outside): off. */
    struct rm_pareto_point p[] = {
        {0.90, 19, 17, 21},   {0.85, 20, 18, 23}, {0.80, 25, 24, 26},
        {0.80, 20, NAN, NAN}, {0.70, 30, 18, 40}, {0.75, 10, 9, 11},
    };
    enum rm_front f[6];
    rm_pareto_front(p, 6, RM_GOAL_MAX, f);
    assert_int_equal(f[0], RM_FRONT_ON);
    assert_int_equal(f[1], RM_FRONT_WITHIN_BAR);
    assert_int_equal(f[2], RM_FRONT_NO);
    assert_int_equal(f[3], RM_FRONT_NO);
    assert_int_equal(f[4], RM_FRONT_NO);
    assert_int_equal(f[5], RM_FRONT_ON);
    /* The bar's ends count as within; a bar of no width is no bar. */
    struct rm_pareto_point q[] = {{1, 10, 9, 11}, {0.5, 12, 10, 14}, {0.5, 12, 12, 12}};
    rm_pareto_front(q, 3, RM_GOAL_MAX, f);
    assert_int_equal(f[1], RM_FRONT_WITHIN_BAR);
    assert_int_equal(f[2], RM_FRONT_NO);
}

/* The definition checked on random sweeps against a direct reading of it. */
static void front_random(void **state)
{
    (void)state;
    srand(39);
    enum { N = 60 };
    struct rm_pareto_point p[N];
    enum rm_front f[N];
    for (int round = 0; round < 200; round++) {
        enum rm_goal goal = round % 2 ? RM_GOAL_MAX : RM_GOAL_MIN;
        for (int i = 0; i < N; i++) {
            double c = rand() % 40, w = rand() % 4;
            p[i] = (struct rm_pareto_point){rand() % 20, c, c - w, c + w};
            if (rand() % 25 == 0) p[i].objective = NAN;
        }
        rm_pareto_front(p, N, goal, f);
        size_t on = 0;
        for (int i = 0; i < N; i++) {
            bool dom = false, outside = false;
            for (int j = 0; j < N && !isnan(p[i].objective); j++) {
                if (j == i || isnan(p[j].objective)) continue;
                double a = p[j].objective, b = p[i].objective;
                bool ge = goal == RM_GOAL_MAX ? a >= b : a <= b;
                if (ge && p[j].cost <= p[i].cost && (a != b || p[j].cost < p[i].cost)) {
                    dom = true;
                    outside |= p[j].cost < p[i].cost_lo || p[j].cost > p[i].cost_hi ||
                               !(p[i].cost_lo < p[i].cost_hi);
                }
            }
            enum rm_front want = isnan(p[i].objective) ? RM_FRONT_NO
                                 : !dom                ? RM_FRONT_ON
                                 : outside             ? RM_FRONT_NO
                                                       : RM_FRONT_WITHIN_BAR;
            assert_int_equal(f[i], want);
            on += f[i] == RM_FRONT_ON;
        }
        assert_true(on >= 1); /* the best objective at its lowest cost is always on it */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metric_names),
        cmocka_unit_test(objectives),
        cmocka_unit_test(better_and_values),
        cmocka_unit_test(costs),
        cmocka_unit_test(targets),
        cmocka_unit_test(front_basic),
        cmocka_unit_test(front_ties_and_unknowns),
        cmocka_unit_test(front_within_bar),
        cmocka_unit_test(front_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
