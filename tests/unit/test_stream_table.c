/* The stream table (model/streams.c) and the summary's reader table (summary/inputs.c) are
 * complete and agree: every stream has a name, a file stem, a summary option and its help, a
 * kind of file whose reader exists; every kind has a name, a stream and exactly one way to be
 * read. A row left half filled (the first step of adding a collector) fails here, not as a
 * NULL in some layer far away. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model/session.h"
#include "model/streams.h"
#include "monitor/smi_collectors.h"
#include "summary/inputs.h"

static void filled(const char *s)
{
    assert_non_null(s);
    assert_true(s[0] != '\0');
}

static void test_every_stream_row_is_complete(void **state)
{
    (void)state;
    int defaults = 0;
    for (int k = 0; k < RM_STREAM_COUNT; k++) {
        const struct rm_stream_def *d = &rm_stream_defs[k];
        filled(d->name);
        filled(d->stem);
        filled(d->what);
        filled(d->option);
        filled(d->option_help);
        assert_true(d->option_help[strlen(d->option_help) - 1] != '\n');
        assert_true(strlen(d->option) + strlen(" FILE") + 2 <= 24); /* its --help column */
        assert_true((int)d->kind >= 0 && d->kind < RM_INPUT_COUNT);
        assert_int_equal(rm_input_defs[d->kind].stream, k); /* its kind is its own */
        assert_true(d->guess == RM_GUESS_PREFIX || d->guess == RM_GUESS_ANYWHERE ||
                    d->guess == RM_GUESS_DEFAULT);
        defaults += d->guess == RM_GUESS_DEFAULT;
        if (d->drawn) filled(d->chart); /* a drawn stream's outages are hatched somewhere */
        if (d->chart) filled(d->chart);
        assert_int_equal(d->needs & ~(unsigned)(RM_NEEDS_NVIDIA_SMI | RM_NEEDS_COMMAND), 0);
        assert_int_equal(rm_stream_by_name(d->name), k);
        for (int j = 0; j < k; j++) { /* names, stems and options are each one stream's */
            assert_string_not_equal(rm_stream_defs[j].name, d->name);
            assert_string_not_equal(rm_stream_defs[j].stem, d->stem);
            assert_string_not_equal(rm_stream_defs[j].option, d->option);
        }
    }
    assert_int_equal(defaults, 1); /* `runmon summary FILE` always finds one */
}

static void test_every_input_kind_has_a_reader(void **state)
{
    (void)state;
    int hash_first[RM_STREAM_COUNT] = {0};
    for (int k = 0; k < RM_INPUT_COUNT; k++) {
        const struct rm_input_def *d = &rm_input_defs[k];
        filled(d->name);
        assert_true((int)d->stream >= 0 && d->stream < RM_STREAM_COUNT);
        hash_first[d->stream] += d->hash_first;
        assert_int_equal(rm_input_by_name(d->name), k);
        for (int j = 0; j < k; j++)
            assert_string_not_equal(rm_input_defs[j].name, d->name);

        const struct rm_input_reader *r = rm_input_reader((enum rm_input_kind)k);
        assert_int_equal(r->kind, k); /* a missing row reads as kind 0 */
        assert_non_null(r->reset);
        assert_true((r->row != NULL) != (r->line != NULL)); /* by CSV row or by line */
        assert_true(r->source == RM_GPU_SOURCE_NONE || r->source == RM_GPU_SOURCE_QUERY ||
                    r->source == RM_GPU_SOURCE_DMON);
        if (r->gpu_gaps) assert_int_not_equal(r->source, RM_GPU_SOURCE_NONE);
        if (r->untimed) filled(r->untimed);
    }
    for (int s = 0; s < RM_STREAM_COUNT; s++) {
        assert_true(hash_first[s] <= 1);
        assert_int_equal(rm_stream_sniffed(s), hash_first[s] == 1);
        /* a file that does not start with '#' is of the stream's own kind */
        assert_int_equal(rm_input_of_stream(s, 't'), rm_stream_defs[s].kind);
    }
}

static void test_names_and_guesses_round_trip(void **state)
{
    (void)state;
    char name[64];
    for (int k = 0; k < RM_STREAM_COUNT; k++) {
        int stream = -1, sealed = -1;
        assert_int_equal(rm_segment_name(name, sizeof name, k, 0), 0);
        assert_true(rm_segment_parse_name(name, &stream, &sealed));
        assert_int_equal(stream, k);
        assert_int_equal(sealed, 0);
        assert_int_equal(rm_segment_name(name, sizeof name, k, 7), 0);
        assert_true(rm_segment_parse_name(name, &stream, &sealed));
        assert_int_equal(stream, k);
        assert_int_equal(sealed, 1);
        /* a lone "<stem>.csv" is guessed as its stream, whatever the table's order */
        snprintf(name, sizeof name, "%s.csv", rm_stream_defs[k].stem);
        assert_int_equal(rm_stream_guess(name), k);
    }
    assert_int_equal(rm_stream_defs[rm_stream_guess("x.csv")].guess, RM_GUESS_DEFAULT);
}

static void test_initial_health_follows_needs(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++)
        for (int command = 0; command < 2; command++) {
            struct rm_session s;
            memset(&s, 0, sizeof s);
            rm_session_init_collectors(&s, gpu, command, 1u << (RM_STREAM_COUNT - 1));
            for (int k = 0; k < RM_STREAM_COUNT; k++) {
                unsigned needs = rm_stream_defs[k].needs;
                int off = (!gpu && (needs & RM_NEEDS_NVIDIA_SMI)) ||
                          (!command && (needs & RM_NEEDS_COMMAND)) || k == RM_STREAM_COUNT - 1;
                assert_string_equal(s.collectors[k].name, rm_stream_defs[k].name);
                assert_int_equal(s.collectors[k].health,
                                 off ? RM_HEALTH_DISABLED : RM_HEALTH_HEALTHY);
            }
        }
}

/* The outputs ask for the stream of a subject: each subject has exactly one, and every
 * stream the report draws has one (report_collect.c reads its rows by it). */
static void test_every_subject_has_one_stream(void **state)
{
    (void)state;
    assert_int_equal(rm_stream_of_subject(RM_SUBJECT_NONE), -1);
    for (int subject = RM_SUBJECT_NONE + 1; subject < RM_SUBJECT_COUNT; subject++) {
        int n = 0;
        for (int k = 0; k < RM_STREAM_COUNT; k++)
            n += rm_stream_defs[k].subject == (enum rm_stream_subject)subject;
        assert_int_equal(n, 1);
        int k = rm_stream_of_subject((enum rm_stream_subject)subject);
        assert_true(k >= 0 && rm_stream_defs[k].subject == (enum rm_stream_subject)subject);
    }
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        if (rm_stream_defs[k].drawn)
            assert_int_not_equal(rm_stream_defs[k].subject, RM_SUBJECT_NONE);
}

/* The recorder starts the nvidia-smi collectors from their table: each row complete, each of
 * a stream that needs nvidia-smi, no stream twice; an option that turns a row off turns off
 * its stream only. */
static void test_smi_collector_rows_are_complete(void **state)
{
    (void)state;
    unsigned seen = 0;
    assert_true(rm_smi_ncollectors > 0);
    for (int i = 0; i < rm_smi_ncollectors; i++) {
        const struct rm_smi_collector *c = rm_smi_collectors[i];
        assert_true(c->stream >= 0 && c->stream < RM_STREAM_COUNT);
        assert_true(rm_stream_defs[c->stream].needs & RM_NEEDS_NVIDIA_SMI);
        assert_false(seen & 1u << c->stream);
        seen |= 1u << c->stream;
        assert_non_null(c->start);
        assert_non_null(c->out);
        assert_non_null(c->stop);
        assert_true(c->ctx_size > 0);
    }
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        if (rm_stream_defs[k].needs & RM_NEEDS_NVIDIA_SMI) assert_true(seen & 1u << k);
    assert_int_equal(rm_smi_collectors_off(&(struct rm_smi_start){.no_apps = false}), 0);
    unsigned off = rm_smi_collectors_off(&(struct rm_smi_start){.no_apps = true});
    assert_int_equal(__builtin_popcount(off), 1);
    assert_true(off & seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_stream_row_is_complete),
        cmocka_unit_test(test_every_input_kind_has_a_reader),
        cmocka_unit_test(test_names_and_guesses_round_trip),
        cmocka_unit_test(test_initial_health_follows_needs),
        cmocka_unit_test(test_every_subject_has_one_stream),
        cmocka_unit_test(test_smi_collector_rows_are_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
