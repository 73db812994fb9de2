/* rm_dmon_classify on the layouts drivers print, and the dmon row mapper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/dmon_text.h"
#include "summary/dmon_read.h"

static int classify(const char *s, struct rm_dmon_line *l)
{
    return rm_dmon_classify(s, strlen(s), l);
}

static void real_590_layout(void **state)
{
    (void)state;
    struct rm_dmon_line l;
    assert_int_equal(
        classify(
            "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk \n",
            &l),
        RM_DMON_HEADER);
    assert_int_equal(l.n, 12);
    assert_int_equal(rm_dmon_find(&l, "gtemp"), 2);
    assert_int_equal(rm_dmon_find(&l, "temp"), -1);
    assert_int_equal(
        classify(
            "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz ",
            &l),
        RM_DMON_UNITS);
    assert_int_equal(classify("    0    438     55     61      -      -      -      -      -      "
                              "-   2619   1980 \r\n",
                              &l),
                     RM_DMON_DATA);
    assert_int_equal(l.n, 12);
    assert_int_equal(l.tok[4].len, 1);
    assert_memory_equal(l.tok[4].s, "-", 1);
}

static void date_time_and_others(void **state)
{
    (void)state;
    struct rm_dmon_line l;
    assert_int_equal(classify("#Date       Time        gpu   pwr  temp", &l), RM_DMON_HEADER);
    assert_int_equal(rm_dmon_find(&l, "Date"), 0);
    assert_int_equal(rm_dmon_find(&l, "gpu"), 2);
    assert_int_equal(classify("#YYYYMMDD   HH:MM:SS    Idx     W     C", &l), RM_DMON_UNITS);
    assert_int_equal(classify(" 20261121 10:15:02    0   70   41", &l), RM_DMON_DATA);
    assert_int_equal(l.n, 5);
    assert_int_equal(classify("", &l), RM_DMON_OTHER);
    assert_int_equal(classify("Failed to initialize NVML: Driver/library version mismatch", &l),
                     RM_DMON_OTHER);
    assert_int_equal(classify("# some comment", &l), RM_DMON_OTHER);
    assert_int_equal(classify("0", &l), RM_DMON_OTHER); /* one field is not a row */
    char many[400] = "";
    for (int i = 0; i < RM_DMON_MAX_FIELDS + 1; i++)
        strcat(many, "1 ");
    assert_int_equal(classify(many, &l), RM_DMON_OTHER);
}

static void mapper_by_names(void **state)
{
    (void)state;
    struct rm_dmon_map m;
    rm_dmon_map_init(&m);
    struct rm_gpu_sample s;
    const char *hdr = "# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk    fb  bar1";
    const char *row = "    1    70    41     7     -     0     0  2619   345  1000     2";
    assert_int_equal(rm_dmon_text_line(&m, row, strlen(row), false, &s), -1 - RM_SKIP_NOT_DATA);
    assert_int_equal(rm_dmon_text_line(&m, hdr, strlen(hdr), false, &s), 0);
    assert_int_equal(rm_dmon_text_line(&m, row, strlen(row), false, &s), 1);
    assert_true(s.v[RM_GM_POWER] == 70 && s.v[RM_GM_TEMP] == 41 && s.v[RM_GM_UTIL] == 7);
    assert_true(s.v[RM_GM_VRAM_USED] == 1000 && s.v[RM_GM_SMCLK] == 345);
    assert_false(s.valid & (1u << RM_GM_MEMUTIL));
    assert_int_equal(s.index.len, 1);
    assert_int_equal(s.t_ns, RM_NO_TIME);
    assert_int_equal(rm_dmon_text_line(&m, row, strlen(row), true, &s), -1 - RM_SKIP_TORN);
    const char *narrow = "    1    70    41";
    assert_int_equal(rm_dmon_text_line(&m, narrow, strlen(narrow), false, &s),
                     -1 - RM_SKIP_BAD_FIELD_COUNT);
    const char *junk = "    1    70    4x1     7     -     0     0  2619   345  1000     2";
    assert_int_equal(rm_dmon_text_line(&m, junk, strlen(junk), false, &s), -1 - RM_SKIP_GARBAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_590_layout),
        cmocka_unit_test(date_time_and_others),
        cmocka_unit_test(mapper_by_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
