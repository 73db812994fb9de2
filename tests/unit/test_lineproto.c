/* record/lineproto: InfluxDB 1.x line protocol tokens. What influxd makes of them is checked
 * against a real influxd in tests/e2e/test_export_influx.sh; here, the bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "record/lineproto.h"

static const char *esc(const char *s, enum rm_lp_kind k)
{
    static char buf[RM_LP_ESCAPED_MAX(256) + 1];
    size_t n = strlen(s);
    assert_true(n <= 256);
    size_t len = rm_lp_escape(buf, s, n, k);
    assert_true(len <= RM_LP_ESCAPED_MAX(n));
    buf[len] = '\0';
    return buf;
}

static void keys_escape_comma_equals_space(void **state)
{
    (void)state;
    assert_string_equal(esc("plain", RM_LP_KEY), "plain");
    assert_string_equal(esc("a,b=c d", RM_LP_KEY), "a\\,b\\=c\\ d");
    assert_string_equal(esc("say \"hi\"", RM_LP_KEY), "say\\ \"hi\"");
    /* A backslash before a separator stays literal: influxd reads `\\,` as `\` then `,`. */
    assert_string_equal(esc("a\\,b", RM_LP_KEY), "a\\\\,b");
    assert_string_equal(esc("a\\ b\\=c", RM_LP_KEY), "a\\\\ b\\\\=c");
    assert_string_equal(esc("", RM_LP_KEY), "");
}

static void a_last_backslash_is_its_escape(void **state)
{
    (void)state;
    /* `host=a\,cpu=all` would escape the comma: every line broke (issue 36). */
    assert_string_equal(esc("a\\", RM_LP_KEY), "a\\x5c");
    assert_string_equal(esc("a\\\\", RM_LP_KEY), "a\\\\x5c");
    assert_string_equal(esc("\\", RM_LP_KEY), "\\x5c");
    assert_string_equal(esc("m\\", RM_LP_MEASUREMENT), "m\\x5c");
    /* In a string value a backslash is escaped itself, the last one too. */
    assert_string_equal(esc("a\\", RM_LP_STRING), "a\\\\");
}

static void measurements_escape_comma_space(void **state)
{
    (void)state;
    assert_string_equal(esc("runmon_gpu", RM_LP_MEASUREMENT), "runmon_gpu");
    assert_string_equal(esc("a,b c=d", RM_LP_MEASUREMENT), "a\\,b\\ c=d");
}

static void strings_escape_quote_backslash(void **state)
{
    (void)state;
    assert_string_equal(esc("a,b=c d", RM_LP_STRING), "a,b=c d");
    assert_string_equal(esc("say \"hi\" \\o/", RM_LP_STRING), "say \\\"hi\\\" \\\\o/");
}

static void controls_as_a_terminal_shows_them(void **state)
{
    (void)state;
    /* A newline would end the line: never one in a token. */
    assert_string_equal(esc("a\nb", RM_LP_KEY), "a\\nb");
    assert_string_equal(esc("a\r\tb\x01", RM_LP_KEY), "a\\r\\tb\\x01");
    assert_string_equal(esc("a\nb", RM_LP_STRING), "a\\\\nb");
    assert_string_equal(esc("x\x7f y", RM_LP_KEY), "x\\x7f\\ y");
    /* UTF-8 kept, a byte that is not UTF-8 escaped. */
    assert_string_equal(esc("caf\xc3\xa9 \xff", RM_LP_KEY), "caf\xc3\xa9\\ \\xff");
    /* The worst case fits its bound: every byte a control, escaped twice over. */
    char all[256];
    for (int i = 0; i < 255; i++)
        all[i] = (char)(i % 2 ? 0x01 : '\\');
    all[255] = '\0';
    const char *e = esc(all, RM_LP_STRING);
    assert_null(strchr(e, '\n'));
    for (const char *p = e; *p; p++)
        assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_escape_comma_equals_space),
        cmocka_unit_test(a_last_backslash_is_its_escape),
        cmocka_unit_test(measurements_escape_comma_space),
        cmocka_unit_test(strings_escape_quote_backslash),
        cmocka_unit_test(controls_as_a_terminal_shows_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
