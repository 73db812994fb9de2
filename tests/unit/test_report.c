/* runmon report: the downsampler (peaks, troughs, gaps, bounded size) and the HTML escaper. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/report.h"

#define S 1000000000LL

static size_t count_breaks(const struct rm_ds_point *p, size_t n)
{
    size_t b = 0;
    for (size_t i = 0; i < n; i++)
        b += p[i].brk;
    return b;
}

static bool has_point(const struct rm_ds_point *p, size_t n, int64_t t, double v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i].t == t && p[i].v == v) return true;
    return false;
}

static void keeps_global_min_and_max(void **state)
{
    (void)state;
    struct rm_series s;
    const int64_t n = 200000;
    assert_int_equal(rm_series_init(&s, 0, (n - 1) * S, 500, S * 3), 0);
    srand(7);
    double lo = INFINITY, hi = -INFINITY;
    int64_t tlo = 0, thi = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = 40 + (rand() % 2000) / 100.0;
        if (i == 123457) v = 97.5;
        if (i == 77) v = 1.25;
        if (v < lo) lo = v, tlo = i * S;
        if (v > hi) hi = v, thi = i * S;
        rm_series_add(&s, i * S, v);
    }
    struct rm_ds_point *p;
    size_t np = rm_series_points(&s, &p);
    assert_true(np <= 1000);
    assert_true(np >= 500);
    assert_true(has_point(p, np, tlo, lo));
    assert_true(has_point(p, np, thi, hi));
    assert_true(has_point(p, np, 123457 * S, 97.5));
    assert_true(has_point(p, np, 77 * S, 1.25));
    for (size_t i = 1; i < np; i++)
        assert_true(p[i].t > p[i - 1].t);
    assert_int_equal(count_breaks(p, np), 0);
    assert_true(s.vmin == lo && s.vmax == hi);
    free(p);
    rm_series_free(&s);
}

/* Three days at one second, idle at 3 %, one two-second spike to 100 % and one dip to 0. */
static void lone_spike_in_three_days(void **state)
{
    (void)state;
    struct rm_series s;
    const int64_t n = 3 * 86400;
    assert_int_equal(rm_series_init(&s, 0, n * S, RM_REPORT_BUCKETS, 0), 0);
    for (int64_t i = 0; i < n; i++) {
        double v = 3;
        if (i == 150001 || i == 150002) v = 100;
        if (i == 200000) v = 0;
        rm_series_add(&s, i * S, v);
    }
    struct rm_ds_point *p;
    size_t np = rm_series_points(&s, &p);
    assert_true(np <= 2 * RM_REPORT_BUCKETS);
    size_t spikes = 0, dips = 0;
    for (size_t i = 0; i < np; i++) {
        spikes += p[i].v == 100;
        dips += p[i].v == 0;
    }
    assert_true(spikes >= 1);
    assert_int_equal(dips, 1);
    assert_true(has_point(p, np, 200000 * S, 0));
    assert_int_equal(count_breaks(p, np), 0); /* gap estimated from the spacing: 3 s */
    free(p);
    rm_series_free(&s);
}

/* Samples every second, nothing from 100 s to 200 s: the line breaks there, and only there,
 * whether the interval is given or estimated. Missing values (NaN) are not zeros. */
static void gaps_break_lines(void **state)
{
    (void)state;
    for (int est = 0; est < 2; est++) {
        struct rm_series s;
        assert_int_equal(rm_series_init(&s, 0, 300 * S, 50, est ? 0 : 3 * S), 0);
        for (int64_t i = 0; i < 300; i++) {
            if (i >= 100 && i < 200) continue;
            rm_series_add(&s, i * S, i == 250 ? NAN : (double)(i % 7));
        }
        struct rm_ds_point *p;
        size_t np = rm_series_points(&s, &p);
        assert_int_equal(count_breaks(p, np), 1);
        for (size_t i = 0; i < np; i++) {
            if (p[i].brk) {
                assert_true(p[i].t >= 200 * S);
                assert_true(p[i - 1].t < 100 * S);
            }
            assert_false(p[i].t == 250 * S); /* NaN is skipped, never drawn as 0 */
        }
        free(p);
        rm_series_free(&s);
    }
    /* A gap inside one bucket, with the bucket's min and max on the same side. */
    struct rm_series s;
    assert_int_equal(rm_series_init(&s, 0, 100 * S, 1, S * 3), 0);
    rm_series_add(&s, 0, 5);
    rm_series_add(&s, 1 * S, 1);
    rm_series_add(&s, 2 * S, 9);
    rm_series_add(&s, 50 * S, 4);
    rm_series_add(&s, 51 * S, 4);
    struct rm_ds_point *p;
    size_t np = rm_series_points(&s, &p);
    assert_int_equal(np, 2);
    assert_int_equal(count_breaks(p, np), 0); /* the gap 2..50 s is not between 1 s and 2 s */
    free(p);
    rm_series_free(&s);
    /* The min before the gap and the max after it. */
    assert_int_equal(rm_series_init(&s, 0, 100 * S, 1, S * 3), 0);
    rm_series_add(&s, 0, 5);
    rm_series_add(&s, 1 * S, 1);
    rm_series_add(&s, 50 * S, 9);
    rm_series_add(&s, 51 * S, 4);
    np = rm_series_points(&s, &p);
    assert_int_equal(np, 2);
    assert_int_equal(count_breaks(p, np), 1);
    assert_true(p[1].brk && p[1].v == 9);
    free(p);
    rm_series_free(&s);
}

/* Many gaps (more than the list holds): lines still break, never join across one. */
static void many_gaps_stay_bounded(void **state)
{
    (void)state;
    struct rm_series s;
    const int64_t n = 100000;
    assert_int_equal(rm_series_init(&s, 0, 2 * n * S, 500, 3 * S), 0);
    for (int64_t i = 0; i < n; i++) /* pairs of samples 1 s apart, then 10 s of nothing */
        rm_series_add(&s, (i / 2) * 11 * S + (i % 2) * S, (double)(i % 5));
    assert_true(s.ngaps <= RM_SERIES_MAX_GAPS);
    struct rm_ds_point *p;
    size_t np = rm_series_points(&s, &p);
    assert_true(np <= 1000);
    for (size_t i = 1; i < np; i++)
        if (p[i].t - p[i - 1].t > 3 * S) assert_true(p[i].brk);
    free(p);
    rm_series_free(&s);
}

static void empty_series(void **state)
{
    (void)state;
    struct rm_series s;
    assert_int_equal(rm_series_init(&s, 0, 10 * S, 10, 0), 0);
    rm_series_add(&s, S, NAN);
    rm_series_add(&s, S, INFINITY);
    struct rm_ds_point *p;
    assert_int_equal(rm_series_points(&s, &p), 0);
    assert_null(p);
    rm_series_free(&s);
}

static char *escaped(const char *s, size_t len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    rm_html_escape(f, s, len);
    fclose(f);
    return buf;
}

static void html_escaper(void **state)
{
    (void)state;
    struct {
        const char *in, *out;
    } c[] = {
        {"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
        {"a&b \"q\" 'x'", "a&amp;b &quot;q&quot; &#39;x&#39;"},
        {"plain text", "plain text"},
        {"&amp;", "&amp;amp;"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"bad\xff\xfe", "bad\xef\xbf\xbd\xef\xbf\xbd"},
        {"cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd"},
        {"ctl\x01\x1b[31m\x7f", "ctl  [31m "},
        {"tab\tnl\n", "tab\tnl\n"},
        {"surrogate \xed\xa0\x80", "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"c1 \xc2\x85", "c1 \xef\xbf\xbd\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *e = escaped(c[i].in, strlen(c[i].in));
        assert_string_equal(e, c[i].out);
        free(e);
    }
    char *e = escaped("a\0<b", 4); /* an embedded NUL is a control character too */
    assert_int_equal(strlen(e), 7);
    assert_string_equal(e, "a &lt;b");
    free(e);
}

/* The number of times needle occurs in hay. */
static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The points="..." of the first polyline of series key, copied into buf. */
static const char *points_of(const char *html, const char *key, char *buf, size_t cap)
{
    char pat[128];
    snprintf(pat, sizeof pat, "data-series=\"%s\"", key);
    const char *p = strstr(html, pat);
    p = p ? strstr(p, "points=\"") : NULL;
    if (!p) return "";
    p += 8;
    size_t n = strcspn(p, "\"");
    snprintf(buf, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), p);
    return buf;
}

/* DIR/session.json of a 20-s session at a 1-s interval, from 05:00:00 UTC. */
static void write_session_json(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/session.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\":\"runmon-session\",\"schema_version\":1,\"interval_s\":1.0,"
          "\"started_at\":\"2026-11-23T05:00:00.000+00:00\","
          "\"ended_at\":\"2026-11-23T05:00:20.000+00:00\"}\n",
          f);
    fclose(f);
}

/* Removes the named files in dir, then dir itself (which must then be empty). */
static void remove_session_dir(const char *dir, const char *const *names, size_t n)
{
    char path[256];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        remove(path);
    }
    assert_int_equal(rmdir(dir), 0);
}

/* apps.csv in a sealed segment and the active file: GPU 0 idle throughout (a line at 0, no
 * gap), GPU 1 a workload process of 512 MiB, another of 256 and one of unknown membership
 * of 256 (other: 512); the samples go on across the two files without a break. */
static void apps_chart(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_report_apps.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    write_session_json(dir);
    snprintf(path, sizeof path, "%s/gpu.csv", dir); /* the summary's GPUs come from it */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("ts,index,uuid,name,utilization.gpu,memory.used,memory.total\n", f);
    for (int s = 0; s < 20; s++)
        for (int g = 0; g < 2; g++)
            fprintf(f, "2026-11-23T05:00:%02d.000+00:00,%d,GPU-%c,H100,50,1024,81559\n", s, g,
                    g ? 'b' : 'a');
    fclose(f);
    for (int seg = 0; seg < 2; seg++) {
        snprintf(path, sizeof path, "%s/%s", dir, seg ? "apps.csv" : "apps-000001.csv");
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload\n", f);
        for (int s = seg * 10; s < seg * 10 + 10; s++) {
            char ts[64];
            snprintf(ts, sizeof ts, "2026-11-23T05:00:%02d.000+00:00", s);
            fprintf(f, "%s,0,GPU-a,,,,,\n", ts);
            fprintf(f, "%s,1,GPU-b,10,train,512,90,1\n", ts);
            fprintf(f, "%s,1,GPU-b,11,<b>x</b>,256,,0\n", ts);
            fprintf(f, "%s,1,GPU-b,12,other,256,,\n", ts);
        }
        fclose(f);
    }
    char *html = NULL, err[256] = "";
    size_t len = 0;
    assert_int_equal(rm_report_build(dir, NULL, &html, &len, err, sizeof err), 0);
    assert_int_equal(occurrences(html, "<section class=\"panel\" id=\"c-apps\">"), 1);
    assert_int_equal(occurrences(html, "data-series=\"gpu0.workload_vram\""), 1);
    assert_int_equal(occurrences(html, "data-series=\"gpu0.other_vram\""), 1);
    assert_int_equal(occurrences(html, "data-series=\"gpu1.workload_vram\""), 1);
    char buf[512];
    /* GPU 0: flat at 0 (y = 158) from the first sample (0 s, x = 64) to the last (19 s of
     * the 20-s axis, x = 1128); GPU 1's two lines are flat and equal (512 MiB each). */
    assert_string_equal(points_of(html, "gpu0.workload_vram", buf, sizeof buf),
                        "64.0,158.0 1128.0,158.0");
    char w1[512], o1[512];
    points_of(html, "gpu1.workload_vram", w1, sizeof w1);
    points_of(html, "gpu1.other_vram", o1, sizeof o1);
    assert_string_equal(w1, o1);
    assert_null(strstr(w1, "158.0"));
    assert_non_null(strstr(html, "<td class=\"l\">&lt;b&gt;x&lt;/b&gt;</td>"));
    assert_null(strstr(html, "<b>x</b>"));
    assert_non_null(strstr(html, "data-pid=\"12\" data-workload=\"unknown\""));
    free(html);
    const char *names[] = {"session.json", "gpu.csv", "apps-000001.csv", "apps.csv"};
    remove_session_dir(dir, names, sizeof names / sizeof names[0]);
}

/* Throttle reasons across a rollover: the sealed segment names sw_power_cap ("Active") and
 * has the bit mask, the active file the mask only. 20-s axis: x = 64 + 56 t. */
static void throttle_spans(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_report_thr.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    write_session_json(dir);
    for (int seg = 0; seg < 2; seg++) {
        snprintf(path, sizeof path, "%s/%s", dir, seg ? "gpu.csv" : "gpu-000001.csv");
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(seg ? "ts,index,name,utilization.gpu,clocks.current.sm,clocks_event_reasons.active\n"
                  : "ts,index,name,utilization.gpu,clocks.current.sm [MHz],"
                    "clocks_event_reasons.active,clocks_throttle_reasons.sw_power_cap\n",
              f);
        for (int s = seg * 10; s < seg * 10 + 10; s++) {
            if (s >= 16 && s <= 18) continue; /* a gap of 4 s: more than 3 intervals */
            /* hw_thermal_slowdown (0x40) 8-12 s, across the rollover; sync_boost (0x10) at
             * 15 s alone; at 4 s nothing known; 0x1000 is no reason; "0xzz" no mask. */
            const char *mask = s >= 8 && s <= 12 ? "0x0000000000000040"
                               : s == 15         ? "0x0000000000000010"
                               : s == 4          ? "[N/A]"
                               : s == 6          ? "0x0000000000001000"
                               : s == 7          ? "0xzz"
                                                 : "0x0000000000000000";
            const char *named = s == 2 || s == 3 ? "Active" : s == 4 ? "[N/A]" : "Not Active";
            fprintf(f, "2026-11-23T05:00:%02d.000+00:00,0,H100,50,1980 MHz,%s", s, mask);
            fprintf(f, seg ? "\n" : ",%s\n", named);
        }
        fclose(f);
    }
    char *html = NULL, err[256] = "";
    size_t len = 0;
    assert_int_equal(rm_report_build(dir, NULL, &html, &len, err, sizeof err), 0);
    assert_int_equal(occurrences(html, "<section class=\"panel\" id=\"c-clock\">"), 1);
    assert_int_equal(occurrences(html, "data-series=\"gpu0.smclk\""), 2); /* broken by the gap */
    assert_int_equal(occurrences(html, "<rect class=\"thr\""), 3);
    /* sw_power_cap 2-5 s (the unknown row at 4 s changes nothing; 5 s says it ended). */
    assert_non_null(strstr(html, "data-reason=\"sw_power_cap\" data-gpu=\"0\" x=\"176.0\" "
                                 "y=\"143.0\" width=\"168.0\""));
    /* hw_thermal_slowdown 8-13 s, one span over both files. */
    assert_non_null(strstr(html, "data-reason=\"hw_thermal_slowdown\" data-gpu=\"0\" "
                                 "x=\"512.0\" y=\"153.0\" width=\"280.0\""));
    /* sync_boost at 15 s; the next row comes after a gap: its own row only. */
    assert_non_null(strstr(html, "data-reason=\"sync_boost\" data-gpu=\"0\" x=\"904.0\" "
                                 "y=\"148.0\" width=\"1.5\""));
    assert_non_null(strstr(html, "<title>GPU 0 clocks held back: hw_thermal_slowdown, 5.0 s"));
    const char *a = strstr(html, "throttle: sw_power_cap</span>");
    const char *b = strstr(html, "throttle: sync_boost</span>");
    const char *c = strstr(html, "throttle: hw_thermal_slowdown</span>");
    assert_true(a && b && c && a < b && b < c); /* the legend in bit order */
    assert_null(strstr(html, "class=\"thr none\""));
    free(html);
    const char *names[] = {"session.json", "gpu-000001.csv", "gpu.csv"};
    remove_session_dir(dir, names, sizeof names / sizeof names[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keeps_global_min_and_max),
        cmocka_unit_test(lone_spike_in_three_days),
        cmocka_unit_test(gaps_break_lines),
        cmocka_unit_test(many_gaps_stay_bounded),
        cmocka_unit_test(empty_series),
        cmocka_unit_test(html_escaper),
        cmocka_unit_test(apps_chart),
        cmocka_unit_test(throttle_spans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
