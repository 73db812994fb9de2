/* base/csvfields and base/csvwrite: the plain-line fast path splits exactly as libcsv does, and
 * the table-driven writer quotes exactly the fields RFC 4180 needs quoted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/csvfields.h"
#include "base/csvwrite.h"

#define MAXF 64

struct row {
    char store[4096];
    size_t off[MAXF], len[MAXF];
    struct rm_csv_fields f;
};

static void row_init(struct row *r)
{
    memset(r, 0, sizeof *r);
    r->f = (struct rm_csv_fields){
        .store = r->store, .cap = sizeof r->store, .max = MAXF, .off = r->off, .len = r->len};
}

/* libcsv alone, the reference the fast path must match. */
static int split_libcsv(const char *line, size_t len, struct rm_csv_fields *f)
{
    struct csv_parser p;
    assert_int_equal(csv_init(&p, 0), 0);
    rm_csv_fields_clear(f);
    size_t used = csv_parse(&p, (void *)(uintptr_t)line, len, rm_csv_fields_cb, NULL, f);
    csv_fini(&p, used == len ? rm_csv_fields_cb : NULL, NULL, f);
    csv_free(&p);
    return used != len || f->overflow ? -1 : (int)f->n;
}

static int split_ours(const char *line, size_t len, struct rm_csv_fields *f)
{
    struct csv_parser p;
    assert_int_equal(csv_init(&p, 0), 0);
    int n = rm_csv_split_line(&p, line, len, f);
    csv_free(&p);
    return n;
}

static void same_split(const char *line, size_t len)
{
    struct row a, b;
    row_init(&a);
    row_init(&b);
    int na = split_libcsv(line, len, &a.f), nb = split_ours(line, len, &b.f);
    if (na != nb) fail_msg("line [%.*s]: libcsv %d fields, ours %d", (int)len, line, na, nb);
    for (int i = 0; i < na; i++) {
        assert_int_equal(a.len[i], b.len[i]);
        assert_memory_equal(a.store + a.off[i], b.store + b.off[i], a.len[i]);
    }
}

static void plain_lines_split_as_libcsv_does(void **state)
{
    (void)state;
    static const char *lines[] = {
        "",
        " ",
        "\t \t",
        ",",
        ",,",
        " , ",
        "a",
        " a ",
        "a,b",
        "a, b , c",
        "a,,b,",
        "\ta\t,\t b",
        "2026/11/26 09:09:58.405, 0, GPU-1b2c, 45 %, 1024 MiB, [N/A], 350.00 W",
        "a b, c d ,e\tf",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        same_split(lines[i], strlen(lines[i]));
}

static void random_lines_split_as_libcsv_does(void **state)
{
    (void)state;
    /* Quotes and line ends too: those lines take libcsv's own path, and must still agree. */
    static const char alphabet[] = {'a', 'b', ' ', '\t', ',', ',', 'x', '\0', '"', '\r', '\n'};
    srand(24);
    char line[200];
    for (int t = 0; t < 200000; t++) {
        size_t len = (size_t)(rand() % 40);
        int plain_only = t % 2;
        for (size_t i = 0; i < len; i++)
            line[i] = alphabet[rand() % (int)(sizeof alphabet - (plain_only ? 3 : 0))];
        same_split(line, len);
    }
}

static void too_many_fields_is_not_a_row(void **state)
{
    (void)state;
    struct row r;
    row_init(&r);
    r.f.max = 3;
    assert_int_equal(split_ours("a,b,c,d", 7, &r.f), -1);
    row_init(&r);
    r.f.max = 3;
    assert_int_equal(split_ours("a,b,c", 5, &r.f), 3);
}

/* The writer's reference: quote when a comma, quote, CR or LF is in it; double the quotes. */
static size_t put_reference(char *out, const char *v, size_t n)
{
    int quote = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] == ',' || v[i] == '"' || v[i] == '\n' || v[i] == '\r') quote = 1;
    size_t o = 0;
    if (quote) out[o++] = '"';
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '"') out[o++] = '"';
        out[o++] = v[i];
    }
    if (quote) out[o++] = '"';
    return o;
}

static void fields_are_quoted_when_needed(void **state)
{
    (void)state;
    static const char alphabet[] = {'a', ' ', ',', '"', '\r', '\n', '\0', '\x7f', 'z'};
    srand(13);
    char v[64], want[200], got[200];
    for (int t = 0; t < 100000; t++) {
        size_t n = (size_t)(rand() % 30);
        for (size_t i = 0; i < n; i++)
            v[i] = alphabet[rand() % (int)sizeof alphabet];
        size_t w = put_reference(want, v, n);
        assert_int_equal(rm_csv_put_field(got, sizeof got, v, n), w);
        assert_memory_equal(got, want, w);
        /* one byte short of room: nothing is written */
        if (w) assert_int_equal(rm_csv_put_field(got, w - 1, v, n), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_lines_split_as_libcsv_does),
        cmocka_unit_test(random_lines_split_as_libcsv_does),
        cmocka_unit_test(too_many_fields_is_not_a_row),
        cmocka_unit_test(fields_are_quoted_when_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
