/* Four processes append 2,000 lines each through the C API to one file. Run alone it checks
 * its own file; tests/e2e/test_runlog_concurrent.sh runs it as the C-API half of a 16,000
 * line race against four `runmon log` loops, through these variables:
 *   RM_APPEND_FILE      the shared run log (then the e2e script checks the result)
 *   RM_APPEND_PACE_US   a pause between lines, so the writers overlap the slower CLI loops
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runlog/runlog.h"

#define WRITERS 4
#define LINES 2000

static int writer(const char *file, int id, long pace_us)
{
    rm_runlog *log = rm_runlog_open(file);
    if (!log) return 1;
    for (int i = 0; i < LINES; i++) {
        json_t *d = json_pack("{s:s, s:i, s:i}", "via", "api", "writer", id, "seq", i);
        if (rm_runlog_event(log, "append", d) != 0) {
            fprintf(stderr, "writer %d: %s\n", id, rm_runlog_errmsg());
            return 1;
        }
        json_decref(d);
        if (pace_us > 0) usleep((useconds_t)pace_us);
    }
    return rm_runlog_close(log) == 0 ? 0 : 1;
}

static void four_processes_append_whole_lines(void **state)
{
    (void)state;
    const char *shared = getenv("RM_APPEND_FILE");
    char own[] = "/tmp/rm-test-append.XXXXXX";
    const char *file = shared;
    if (!file) {
        int fd = mkstemp(own);
        assert_true(fd >= 0);
        close(fd);
        file = own;
    }
    long pace = getenv("RM_APPEND_PACE_US") ? atol(getenv("RM_APPEND_PACE_US")) : 0;
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) _exit(writer(file, w, pace));
    }
    for (int w = 0; w < WRITERS; w++) {
        int ws;
        assert_int_equal(waitpid(pids[w], &ws, 0), pids[w]);
        assert_true(WIFEXITED(ws));
        assert_int_equal(WEXITSTATUS(ws), 0);
    }
    if (shared) return;

    /* Every line whole and valid, and every (writer, seq) exactly once, in order. */
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int next[WRITERS] = {0}, count = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        assert_int_equal(line[n - 1], '\n');
        json_error_t err;
        json_t *j = json_loadb(line, (size_t)n, 0, &err);
        if (!j) fail_msg("line %d invalid: %s", count + 1, err.text);
        json_t *d = json_object_get(j, "data");
        int w = (int)json_integer_value(json_object_get(d, "writer"));
        assert_true(w >= 0 && w < WRITERS);
        assert_int_equal(json_integer_value(json_object_get(d, "seq")), next[w]++);
        assert_string_equal(json_string_value(json_object_get(j, "type")), "event");
        assert_int_equal(json_integer_value(json_object_get(j, "pid")), pids[w]);
        json_decref(j);
        count++;
    }
    free(line);
    fclose(f);
    unlink(own);
    assert_int_equal(count, WRITERS * LINES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(four_processes_append_whole_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
