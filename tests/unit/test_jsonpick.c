/* rm_json_pick_file: the members wanted of a JSON object file, as json_load_file reads them,
 * the rest only scanned; NULL for what is not one JSON object. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/jsonpick.h"

static char path[64];

static void put(const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static const char *const keys[] = {"gpu", "totals", "peak", "absent"};
#define NKEYS (sizeof keys / sizeof keys[0])

/* What json_load_file gives for those keys, or NULL when it refuses the file. */
static json_t *by_jansson(void)
{
    json_t *all = json_load_file(path, 0, NULL);
    if (!json_is_object(all)) {
        json_decref(all);
        return NULL;
    }
    json_t *o = json_object();
    for (size_t i = 0; i < NKEYS; i++) {
        json_t *v = json_object_get(all, keys[i]);
        if (v) json_object_set(o, keys[i], v);
    }
    json_decref(all);
    return o;
}

static void same_as_jansson(const char *text)
{
    put(text, strlen(text));
    json_t *want = by_jansson(), *got = rm_json_pick_file(path, keys, NKEYS);
    if (!want) {
        if (got) fail_msg("picked from what jansson refuses: %s", text);
    } else {
        if (!got) fail_msg("refused what jansson reads: %s", text);
        if (!json_equal(want, got)) fail_msg("not jansson's members: %s", text);
    }
    json_decref(want);
    json_decref(got);
}

static void members_as_jansson_reads_them(void **state)
{
    (void)state;
    same_as_jansson("{\"gpu\": 5, \"phases\": [1, {\"a\": [2, 3]}], \"totals\": {\"energy_wh\": "
                    "1.5, \"cpu\": {\"x\": null}}, \"peak\": -1.25e3}\n");
    same_as_jansson("{}");
    same_as_jansson("  {\"other\": true}  \n");
    same_as_jansson("{\"\\u0067pu\": \"escaped key\", \"gp\\\"u\": 1}");
    same_as_jansson("{\"gpu\": 1, \"gpu\": [2]}"); /* the last one, as jansson keeps */
    same_as_jansson("{\"s\": \"a \\\"}] [{ \\\\\", \"gpu\": \"\\u00e9\\n\", \"peak\": false}");
    same_as_jansson("{\"x\": [[[[{}]]]], \"totals\": [], \"peak\": null}");
}

static void what_is_not_one_object_is_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "[1, 2]",
        "\"gpu\"",
        "{\"gpu\": 1",    /* cut */
        "{\"gpu\": 1} x", /* something after it */
        "{\"gpu\": 1}{}",
        "{\"x\": [1, 2}, \"gpu\": 1}",  /* brackets that do not match */
        "{\"x\": \"open, \"gpu\": 1",   /* a string never closed */
        "{\"x\": \"\\q\", \"gpu\": 1}", /* a bad escape */
        "{\"x\": \"\\u12g4\"}",
        "{\"gpu\" 1}", /* no colon */
        "{\"gpu\": 1,}",
        "{gpu: 1}",
        "{\"gpu\": tru}", /* a wanted value jansson cannot read */
        "{\"x\": 1 \"gpu\": 2}",
        "{\"x\": \"tab\there\"}", /* a raw control character in a string */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put(bad[i], strlen(bad[i]));
        json_t *got = rm_json_pick_file(path, keys, NKEYS);
        if (got) fail_msg("read: %s", bad[i]);
        same_as_jansson(bad[i]); /* and jansson refuses it too */
    }
    assert_null(rm_json_pick_file("/nonexistent/summary.json", keys, NKEYS));
}

/* Members and skipped values longer than the reader's buffer, across its boundaries. */
static void long_values_cross_the_buffer(void **state)
{
    (void)state;
    json_t *doc = json_object(), *arr = json_array();
    for (int i = 0; i < 30000; i++)
        json_array_append_new(arr, json_pack("{s:i,s:s}", "i", i, "s", "x\"}]"));
    json_object_set_new(doc, "phases", arr);
    char *big = malloc(200001);
    memset(big, 'g', 200000);
    big[200000] = '\0';
    json_object_set_new(doc, "gpu", json_string(big));
    json_object_set_new(doc, "totals", json_pack("{s:f}", "energy_wh", 2.5));
    json_object_set_new(doc, "tail", json_deep_copy(arr));
    char *text = json_dumps(doc, JSON_INDENT(2));
    same_as_jansson(text);
    put(text, strlen(text) - 1); /* its last brace cut */
    assert_null(rm_json_pick_file(path, keys, NKEYS));
    free(text);
    free(big);
    json_decref(doc);
}

/* "NAME[].a,b": of each row of array NAME only members a and b, as jansson reads them; a row
 * that is not an object is null; NAME that is not an array is kept whole; a broken row
 * refuses the file. */
static void rows_keep_only_the_members_named(void **state)
{
    (void)state;
    static const char *const spec[] = {"phases[].path,total_seconds", "peak"};
    const char *text = "{\"phases\": [{\"path\": \"a\\/b\", \"gpus\": [{\"x\": [1, {\"y\": 2}]}], "
                       "\"total_seconds\": 1.5}, 7, {\"total_seconds\": 2}, {}], \"peak\": 3}";
    put(text, strlen(text));
    json_t *got = rm_json_pick_file(path, spec, 2);
    json_t *want = json_loads("{\"phases\": [{\"path\": \"a/b\", \"total_seconds\": 1.5}, null, "
                              "{\"total_seconds\": 2}, {}], \"peak\": 3}",
                              0, NULL);
    assert_non_null(got);
    assert_true(json_equal(want, got));
    json_decref(got);
    json_decref(want);
    text = "{\"phases\": {\"path\": 1}}";
    put(text, strlen(text));
    got = rm_json_pick_file(path, spec, 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(got, "phases"), "path")),
                     1);
    json_decref(got);
    text = "{\"phases\": [{\"path\": 1,}], \"peak\": 3}";
    put(text, strlen(text));
    assert_null(rm_json_pick_file(path, spec, 2));
    text = "{\"phases\": [{\"path\": 1} {}], \"peak\": 3}";
    put(text, strlen(text));
    assert_null(rm_json_pick_file(path, spec, 2));
}

static void collect(void *ctx, json_t *row)
{
    json_array_append_new(ctx, row);
}

/* "*" keeps every member not named (under its own name, escapes decoded); the rows' array is
 * handed element by element and not kept: together, the document jansson reads. */
static void rows_one_at_a_time_and_the_rest_whole(void **state)
{
    (void)state;
    static const char *const all[] = {"*"};
    const char *text =
        "{\"format\": \"s\", \"phases\": [{\"path\": \"a\", \"gpus\": [{\"x\": 1}]}, 7, "
        "[]], \"t\\u00e9\": {\"e\": [1, 2]}, \"n\": null}";
    put(text, strlen(text));
    json_t *rows = json_array();
    json_t *got = rm_json_pick_file_rows(path, all, 1, "phases", collect, rows);
    assert_non_null(got);
    json_t *want = json_loads(text, 0, NULL);
    assert_true(json_equal(json_object_get(want, "phases"), rows));
    json_object_del(want, "phases");
    assert_true(json_equal(want, got));
    assert_string_equal(json_object_iter_key(json_object_iter(got)), "format"); /* file order */
    json_decref(got);
    json_decref(want);
    json_array_clear(rows);
    /* A broken row: refused, as jansson would. */
    text = "{\"phases\": [{\"path\": 1,}]}";
    put(text, strlen(text));
    assert_null(rm_json_pick_file_rows(path, all, 1, "phases", collect, rows));
    assert_int_equal(json_array_size(rows), 0);
    json_decref(rows);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/test_jsonpick.%d.json", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(members_as_jansson_reads_them),
        cmocka_unit_test(what_is_not_one_object_is_refused),
        cmocka_unit_test(long_values_cross_the_buffer),
        cmocka_unit_test(rows_keep_only_the_members_named),
        cmocka_unit_test(rows_one_at_a_time_and_the_rest_whole),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    return rc;
}
