/* base/termsafe: untrusted text made safe for a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/termsafe.h"

static const char *esc(const char *s)
{
    static char buf[512];
    size_t n = rm_term_escape(buf, sizeof buf, s);
    assert_int_equal(n, strlen(buf));
    return buf;
}

static void controls_are_escaped(void **state)
{
    (void)state;
    assert_string_equal(esc("plain text, 100 %"), "plain text, 100 %");
    assert_string_equal(esc("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
    assert_string_equal(esc("a\nb\tc\rd"), "a\\nb\\tc\\rd");
    assert_string_equal(esc("\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
    assert_string_equal(esc("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
    assert_string_equal(esc(""), "");
    assert_string_equal(esc(NULL), "");
    /* a backslash stays: escaping twice changes nothing */
    assert_string_equal(esc("C:\\x1b"), "C:\\x1b");
    char twice[512];
    rm_term_escape(twice, sizeof twice, esc("\x1b\n\xff"));
    assert_string_equal(twice, "\\x1b\\n\\xff");
}

static void utf8_kept_invalid_escaped(void **state)
{
    (void)state;
    /* valid UTF-8: é (2 bytes), € (3), 😀 (4), U+00A0 (first code point past C1) */
    assert_string_equal(esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0"),
                        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0");
    /* C1 controls in UTF-8 (U+009B CSI, U+0085 NEL): both bytes escaped */
    assert_string_equal(esc("\xc2\x9b"
                            "31m"),
                        "\\xc2\\x9b31m");
    assert_string_equal(esc("\xc2\x85"), "\\xc2\\x85");
    /* a raw 8-bit C1 byte, a stray continuation byte, 0xff */
    assert_string_equal(esc("\x9b"
                            "1m\x80\xff"),
                        "\\x9b1m\\x80\\xff");
    /* overlong "/" and overlong NUL, a surrogate, past U+10FFFF */
    assert_string_equal(esc("\xc0\xaf\xc1\x80"), "\\xc0\\xaf\\xc1\\x80");
    assert_string_equal(esc("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
    assert_string_equal(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
    assert_string_equal(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
    assert_string_equal(esc("\xf0\x80\x80\x80"), "\\xf0\\x80\\x80\\x80");
    /* a sequence cut by the end of the string, or by an ASCII byte */
    assert_string_equal(esc("ok\xe2\x82"), "ok\\xe2\\x82");
    assert_string_equal(esc("\xe2"
                            "a"),
                        "\\xe2a");
}

static void escape_n_counts_nul_and_cuts_whole_units(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(rm_term_escape_n(buf, sizeof buf, "a\0b", 3), 6);
    assert_string_equal(buf, "a\\x00b");
    /* cut: never half an escape, never half a character; the return is the full length */
    char small[6];
    assert_int_equal(rm_term_escape(small, sizeof small,
                                    "ab\x1b"
                                    "cd"),
                     8);
    assert_string_equal(small, "ab");
    assert_int_equal(rm_term_escape(small, sizeof small, "abcd\xc3\xa9"), 6);
    assert_string_equal(small, "abcd");
    assert_int_equal(rm_term_escape(small, sizeof small, "abcde"), 5);
    assert_string_equal(small, "abcde");
    assert_int_equal(rm_term_escape(small, 1, "abc"), 3);
    assert_string_equal(small, "");
}

static void cells_pad_by_characters(void **state)
{
    (void)state;
    char buf[128];
    assert_string_equal(rm_term_cell(buf, sizeof buf, "gpu", 6, -1), "gpu   ");
    assert_string_equal(rm_term_cell(buf, sizeof buf, "longer than", 4, 4), "long");
    assert_string_equal(rm_term_cell(buf, sizeof buf, "no cut at all", 4, -1), "no cut at all");
    /* an escape takes its printed width; one that does not fit whole is left out */
    assert_string_equal(rm_term_cell(buf, sizeof buf, "a\x1b", 8, -1), "a\\x1b   ");
    assert_string_equal(rm_term_cell(buf, sizeof buf,
                                     "ab\x1b"
                                     "c",
                                     4, 4),
                        "ab  ");
    /* a UTF-8 character is one column: "é" pads like "e" and is never cut in two */
    assert_string_equal(rm_term_cell(buf, sizeof buf, "caf\xc3\xa9", 6, 6), "caf\xc3\xa9  ");
    assert_string_equal(rm_term_cell(buf, sizeof buf, "\xc3\xa9\xc3\xa9\xc3\xa9", 2, 2),
                        "\xc3\xa9\xc3\xa9");
    assert_string_equal(rm_term_cell(buf, sizeof buf, NULL, 2, 2), "  ");
    /* a small buffer still ends with NUL */
    char small[4];
    assert_string_equal(rm_term_cell(small, sizeof small, "x", 10, -1), "x  ");
}

static void fput_matches_escape(void **state)
{
    (void)state;
    const char *in = "run \x1b]0;pwned\x07 --flag\nnext\xc2\x9b\xff caf\xc3\xa9";
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    assert_non_null(f);
    assert_int_equal(rm_fput_safe(f, in), 0);
    assert_int_equal(rm_fput_safe(f, NULL), 0);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(mem, esc(in));
    assert_string_equal(mem, "run \\x1b]0;pwned\\x07 --flag\\nnext\\xc2\\x9b\\xff caf\xc3\xa9");
    for (size_t i = 0; i < len; i++)
        assert_true((unsigned char)mem[i] >= 0x20 && mem[i] != 0x7f);
    free(mem);
}

/* Every byte value alone: the output is printable and escaping it again changes nothing. */
static void every_byte_is_printable_after(void **state)
{
    (void)state;
    for (int b = 1; b < 256; b++) {
        char in[2] = {(char)b, 0}, out[16], again[16];
        rm_term_escape(out, sizeof out, in);
        for (const char *p = out; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p != 0x7f &&
                        (unsigned char)*p < 0x80);
        rm_term_escape(again, sizeof again, out);
        assert_string_equal(again, out);
    }
}

/* What rm_csv_put writes for s, escaped or not. */
static const char *csv(const char *s, int escape)
{
    static char buf[8192];
    memset(buf, 0, sizeof buf); /* fmemopen leaves it as it was when nothing is written */
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    assert_int_equal(rm_csv_put(f, s, escape), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void csv_fields_exact_or_escaped(void **state)
{
    (void)state;
    /* Exact: only RFC 4180 quoting, control bytes left as they are. */
    assert_string_equal(csv("plain", 0), "plain");
    assert_string_equal(csv("a,b", 0), "\"a,b\"");
    assert_string_equal(csv("say \"hi\"", 0), "\"say \"\"hi\"\"\"");
    assert_string_equal(csv("two\nlines", 0), "\"two\nlines\"");
    assert_string_equal(csv("osc\x1b]52;c;eA==\x07", 0), "osc\x1b]52;c;eA==\x07");
    /* Escaped (a terminal): no control byte left; a newline no longer needs quotes. */
    assert_string_equal(csv("osc\x1b]52;c;eA==\x07", 1), "osc\\x1b]52;c;eA==\\x07");
    assert_string_equal(csv("two\nlines", 1), "two\\nlines");
    assert_string_equal(csv("a,\x1b\"", 1), "\"a,\\x1b\"\"\"");
    assert_string_equal(csv(NULL, 1), "");
    /* Longer than the stack buffer: escaped whole all the same. */
    char big[1500];
    memset(big, '\x07', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *out = csv(big, 1);
    assert_int_equal(strlen(out), 4 * (sizeof big - 1));
    assert_null(strchr(out, '\x07'));
}

/* --csv-safe: a cell a spreadsheet could run as a formula gets a leading ', a number not. */
static void csv_safe_guards_formulas_not_numbers(void **state)
{
    (void)state;
    assert_string_equal(csv("=cmd|' /C calc'!A1", RM_CSV_SAFE), "'=cmd|' /C calc'!A1");
    assert_string_equal(csv("=cmd|' /C calc'!A1", 0), "=cmd|' /C calc'!A1");
    assert_string_equal(csv("+1+1", RM_CSV_SAFE), "'+1+1");
    assert_string_equal(csv("-1+1", RM_CSV_SAFE), "'-1+1");
    assert_string_equal(csv("@SUM(A1)", RM_CSV_SAFE), "'@SUM(A1)");
    assert_string_equal(csv("\tx", RM_CSV_SAFE), "'\tx");
    assert_string_equal(csv("\rx", RM_CSV_SAFE), "\"'\rx\"");
    assert_string_equal(csv("=a,\"b\"", RM_CSV_SAFE), "\"'=a,\"\"b\"\"\"");
    assert_string_equal(csv("-", RM_CSV_SAFE), "'-");
    /* Plain numbers stay numbers. */
    assert_string_equal(csv("-1.5", RM_CSV_SAFE), "-1.5");
    assert_string_equal(csv("+2", RM_CSV_SAFE), "+2");
    assert_string_equal(csv("-3e-4", RM_CSV_SAFE), "-3e-4");
    assert_string_equal(csv("-.5", RM_CSV_SAFE), "-.5");
    assert_string_equal(csv("-1e", RM_CSV_SAFE), "'-1e");
    assert_string_equal(csv("-1.5.2", RM_CSV_SAFE), "'-1.5.2");
    assert_string_equal(csv("a=b", RM_CSV_SAFE), "a=b");
    assert_string_equal(csv("", RM_CSV_SAFE), "");
    /* On a terminal the escape comes first: a tab is shown as \t, no longer a formula. */
    assert_string_equal(csv("\tx", RM_CSV_SAFE | RM_CSV_TERM), "\\tx");
    assert_string_equal(csv("=1\x07", RM_CSV_SAFE | RM_CSV_TERM), "'=1\\x07");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(controls_are_escaped),
        cmocka_unit_test(utf8_kept_invalid_escaped),
        cmocka_unit_test(escape_n_counts_nul_and_cuts_whole_units),
        cmocka_unit_test(cells_pad_by_characters),
        cmocka_unit_test(fput_matches_escape),
        cmocka_unit_test(every_byte_is_printable_after),
        cmocka_unit_test(csv_fields_exact_or_escaped),
        cmocka_unit_test(csv_safe_guards_formulas_not_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
