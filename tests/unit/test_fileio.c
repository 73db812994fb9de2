#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"

/* A fresh folder per test, removed at its end. */
static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rm_fileio_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(rm_write_all(fd, data, len), 0);
    close(fd);
}

static void empty_file_is_an_empty_string(void **state)
{
    (void)state;
    write_file(in_dir("empty"), "", 0);
    size_t len = 99;
    char err[256];
    char *b = rm_read_file(in_dir("empty"), 1024, &len, err, sizeof err);
    assert_non_null(b);
    assert_int_equal(len, 0);
    assert_string_equal(b, "");
    free(b);
}

/* 5 MiB and a bit, not a multiple of any buffer size: every byte back, in order. */
static void large_file_read_whole(void **state)
{
    (void)state;
    size_t n = (5u << 20) + 4097;
    char *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + (i * 7 + i / 4096) % 26);
    write_file(in_dir("large"), data, n);
    size_t len = 0;
    char err[256];
    char *b = rm_read_file(in_dir("large"), 64u << 20, &len, err, sizeof err);
    assert_non_null(b);
    assert_int_equal(len, n);
    assert_memory_equal(b, data, n);
    assert_int_equal(b[n], '\0');
    free(b);
    free(data);
}

/* The bound: max bytes pass, one more is refused with EFBIG and says so. */
static void bound_is_exact(void **state)
{
    (void)state;
    write_file(in_dir("ten"), "0123456789", 10);
    size_t len = 0;
    char err[256];
    char *b = rm_read_file(in_dir("ten"), 10, &len, err, sizeof err);
    assert_non_null(b);
    assert_int_equal(len, 10);
    free(b);
    errno = 0;
    assert_null(rm_read_file(in_dir("ten"), 9, &len, err, sizeof err));
    assert_int_equal(errno, EFBIG);
    assert_non_null(strstr(err, "/ten: larger than 9 bytes"));
}

/* A /proc file says its size is 0 and hands out a page at a time: read to its end. */
static void proc_file_of_size_zero(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(stat("/proc/self/status", &st), 0);
    assert_int_equal(st.st_size, 0);
    size_t len = 0;
    char err[256];
    char *b = rm_read_file("/proc/self/status", 1u << 20, &len, err, sizeof err);
    assert_non_null(b);
    assert_true(len > 0 && strlen(b) == len);
    assert_non_null(strstr(b, "Name:"));
    assert_non_null(strstr(b, "\nPid:"));
    assert_int_equal(b[len - 1], '\n');
    free(b);
    /* More than one page (an ASan process maps hundreds of regions). */
    b = rm_read_file("/proc/self/maps", 64u << 20, &len, err, sizeof err);
    assert_non_null(b);
    assert_true(len > 4096 && strlen(b) == len);
    assert_int_equal(b[len - 1], '\n');
    free(b);
}

static void directory_is_refused(void **state)
{
    (void)state;
    size_t len;
    char err[256];
    errno = 0;
    assert_null(rm_read_file(dir, 1024, &len, err, sizeof err));
    assert_int_equal(errno, EISDIR);
    assert_non_null(strstr(err, strerror(EISDIR)));
}

static void missing_file_says_so(void **state)
{
    (void)state;
    size_t len;
    char err[256];
    errno = 0;
    assert_null(rm_read_file(in_dir("missing"), 1024, &len, err, sizeof err));
    assert_int_equal(errno, ENOENT);
    char want[256];
    snprintf(want, sizeof want, "%s: %s", in_dir("missing"), strerror(ENOENT));
    assert_string_equal(err, want);
    assert_null(rm_read_file(in_dir("missing"), 1024, &len, NULL, 0)); /* no err wanted */
}

/* A FIFO without a writer: refused at once, not waited for. */
static void fifo_is_refused_without_waiting(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(in_dir("fifo"), 0600), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    alarm(5); /* a wait for a writer would hang the test: SIGALRM kills it instead */
    size_t len;
    char err[256], head[64];
    errno = 0;
    assert_null(rm_read_file(in_dir("fifo"), 1024, &len, err, sizeof err));
    assert_int_equal(errno, EINVAL);
    assert_non_null(strstr(err, "/fifo: not a regular file"));
    assert_int_equal(rm_read_head(AT_FDCWD, in_dir("fifo"), head, sizeof head), -1);
    assert_int_equal(errno, EINVAL);
    alarm(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 2);
}

/* The buffer kept between calls (the reaper's walk): grown once, reused, relative to a
 * folder's descriptor. */
static void buffer_reused_relative_to_a_folder(void **state)
{
    (void)state;
    write_file(in_dir("a"), "first\n", 6);
    write_file(in_dir("b"), "2\n", 2);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    char *buf = NULL;
    size_t cap = 0;
    assert_int_equal(rm_read_file_at(dfd, "a", 100, &buf, &cap, NULL, 0), 6);
    assert_string_equal(buf, "first\n");
    size_t had = cap;
    assert_int_equal(rm_read_file_at(dfd, "b", 100, &buf, &cap, NULL, 0), 2);
    assert_string_equal(buf, "2\n");
    assert_int_equal(cap, had);
    free(buf);
    close(dfd);
}

static void head_is_cut_and_terminated(void **state)
{
    (void)state;
    write_file(in_dir("h"), "abcdefghij", 10);
    char b[5];
    assert_int_equal(rm_read_head(AT_FDCWD, in_dir("h"), b, sizeof b), 4);
    assert_string_equal(b, "abcd");
    char whole[64];
    assert_int_equal(rm_read_head(AT_FDCWD, in_dir("h"), whole, sizeof whole), 10);
    assert_string_equal(whole, "abcdefghij");
    assert_int_equal(rm_read_head(AT_FDCWD, in_dir("missing"), b, sizeof b), -1);
    assert_int_equal(errno, ENOENT);
}

/* A file appended to while it is read: what was there before the read began, and a prefix
 * of what is there after, never a byte that was not written. */
struct appender {
    const char *path;
    int chunks;
};

static void *append_chunks(void *arg)
{
    struct appender *a = arg;
    int fd = open(a->path, O_WRONLY | O_APPEND);
    char chunk[4096];
    for (int i = 0; i < a->chunks; i++) {
        memset(chunk, 'A' + i % 26, sizeof chunk);
        if (rm_write_all(fd, chunk, sizeof chunk) < 0) break;
    }
    close(fd);
    return NULL;
}

static void file_growing_while_read(void **state)
{
    (void)state;
    const char *path = in_dir("growing");
    size_t start = 1u << 20;
    char *data = malloc(start);
    assert_non_null(data);
    memset(data, 'z', start);
    write_file(path, data, start);
    free(data);
    struct appender a = {.path = path, .chunks = 512};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, append_chunks, &a), 0);
    size_t len = 0;
    char err[256];
    char *b = rm_read_file(path, 64u << 20, &len, err, sizeof err);
    pthread_join(t, NULL);
    assert_non_null(b);
    assert_true(len >= start);
    size_t all = 0;
    char *after = rm_read_file(path, 64u << 20, &all, err, sizeof err);
    assert_non_null(after);
    assert_int_equal(all, start + 512 * 4096);
    assert_true(len <= all);
    assert_memory_equal(b, after, len);
    free(after);
    free(b);
}

/* rm_read_full over a pipe: short reads (a writer that writes a little at a time) and
 * EINTR (a signal without SA_RESTART landing while read waits) do not end it early. */
static void on_alarm(int sig)
{
    (void)sig;
}

static void *trickle(void *arg)
{
    int fd = *(int *)arg;
    for (int i = 0; i < 10; i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        char c = (char)('0' + i);
        if (write(fd, &c, 1) != 1) break;
    }
    close(fd);
    return NULL;
}

static void read_full_resumes_after_short_reads_and_eintr(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct sigaction sa = {.sa_handler = on_alarm}, old;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: read returns EINTR */
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    sigset_t block, was;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &block, &was); /* the writer thread never takes it */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, trickle, &p[1]), 0);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    struct itimerval it = {{0, 5000}, {0, 5000}}, off = {0};
    setitimer(ITIMER_REAL, &it, NULL);
    char buf[64];
    ssize_t n = rm_read_full(p[0], buf, sizeof buf);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    pthread_join(t, NULL);
    close(p[0]);
    assert_int_equal(n, 10);
    assert_memory_equal(buf, "0123456789", 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(empty_file_is_an_empty_string, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(large_file_read_whole, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(bound_is_exact, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(proc_file_of_size_zero, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(directory_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(missing_file_says_so, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(fifo_is_refused_without_waiting, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(buffer_reused_relative_to_a_folder, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(head_is_cut_and_terminated, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(file_growing_while_read, make_dir, remove_dir),
        cmocka_unit_test(read_full_resumes_after_short_reads_and_eintr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
