/* `runmon log` and `runmon phase`: the RunLog from the shell. Every argument is checked
 * before the file is opened, so bad input never creates or touches the run log. */
#include "cli/cmd_log.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runlog/kvargs.h"
#include "runlog/runlog.h"

extern char **environ;

static const char log_usage[] =
    "usage: runmon log [--file PATH] phase NAME SECONDS [KEY=VALUE | KEY:=JSON ...]\n"
    "       runmon log [--file PATH] event TYPE [KEY=VALUE | KEY:=JSON ...]\n"
    "       runmon log [--file PATH] metric [--step N] NAME=VALUE ...\n"
    "       runmon log [--file PATH] objective METRIC:min|max[:last|best] ...\n"
    "\n"
    "Append one line to the run log (JSONL): a completed phase and its duration, an event,\n"
    "metric values (finite numbers, at most 256 on a line, at step N >= 0 when given), or the\n"
    "objectives the run is judged by (the sweep table's, when it is given none).\n"
    "\n"
    "  --file PATH   the run log; default: $RUNMON_RUNLOG\n"
    "  --step N      a metric line's step, an integer >= 0\n"
    "  KEY=VALUE     numbers, true, false and null keep their JSON type; anything else is a "
    "string\n"
    "  KEY:=JSON     any JSON value, stored as given\n"
    "  -h, --help    this text\n"
    "\n"
    "A phase's fields go on the line itself; an event's go under \"data\".\n"
    "A metric NAME is UTF-8 without control characters, none of / : = < > , and at most 127\n"
    "bytes.\n"
    "Exit status: 0 written, 1 the write failed, 2 bad input (nothing written).\n";

static const char phase_usage[] =
    "usage: runmon phase [--file PATH] NAME [KEY=VALUE | KEY:=JSON ...] -- COMMAND [ARG ...]\n"
    "\n"
    "Run COMMAND as the phase NAME: write phase_enter, run it, write phase_exit with its\n"
    "duration, status (ok or error) and exit_code, and exit with the command's status\n"
    "(128+N if a signal N killed it, 127 if it was not found, 126 if it could not run).\n"
    "\n"
    "  --file PATH   the run log; default: $RUNMON_RUNLOG\n"
    "  KEY=VALUE     extra fields on both lines (KEY:=JSON for raw JSON)\n"
    "  -h, --help    this text\n"
    "\n"
    "COMMAND sees RUNMON_PHASE_PATH (the open phase path) and RUNMON_RUNLOG, so a runmon\n"
    "phase inside it nests under NAME in the same file. SIGINT, SIGTERM, SIGHUP and SIGQUIT\n"
    "sent to runmon with kill(1) are passed on to COMMAND.\n";

/* Common options: [--file PATH | --file=PATH] [--help]; "--" ends them, and is left in place
 * when it is the command separator (keep_dashdash). Returns the index of the first
 * operand, -1 after --help (exit 0), -2 on a usage error. */
static int parse_step(const char *s, long long *step);

static int parse_opts(const char *cmd, const char *usage, int argc, char **argv, const char **file,
                      bool keep_dashdash, long long *step)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return -1;
        } else if (!strcmp(a, "--file")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "runmon %s: --file needs a PATH\n", cmd);
                return -2;
            }
            *file = argv[++i];
        } else if (!strncmp(a, "--file=", 7)) {
            *file = a + 7;
        } else if (step && (!strcmp(a, "--step") || !strncmp(a, "--step=", 7))) {
            const char *v = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : NULL;
            if (!v) {
                fprintf(stderr, "runmon %s: --step needs N\n", cmd);
                return -2;
            }
            if (parse_step(v, step) < 0) return -2;
        } else if (!strcmp(a, "--")) {
            return keep_dashdash ? i : i + 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "runmon %s: unknown option '%s' (see 'runmon %s --help')\n", cmd, a,
                    cmd);
            return -2;
        } else {
            break;
        }
    }
    return i;
}

static const char *resolve_file(const char *cmd, const char *file)
{
    if (!file) file = getenv("RUNMON_RUNLOG");
    if (!file || !*file) {
        fprintf(stderr, "runmon %s: no run log given: use --file PATH or set RUNMON_RUNLOG\n", cmd);
        return NULL;
    }
    return file;
}

/* Opens the run log and writes one line with write(log); the exit status. */
static int write_one(const char *file, int (*write)(rm_runlog *, void *), void *ctx)
{
    /* Past RLIMIT_FSIZE, write() should fail with EFBIG rather than kill us. */
    signal(SIGXFSZ, SIG_IGN);
    rm_runlog *log = rm_runlog_open(file);
    if (!log) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        return 2;
    }
    int status = 0;
    if (write(log, ctx) < 0) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        status = 1;
    }
    if (rm_runlog_close(log) < 0 && status == 0) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        status = 1;
    }
    return status;
}

struct args {
    long long step;
    int n;
    const char *const *v;
};

static int write_metric(rm_runlog *log, void *ctx)
{
    const struct args *a = ctx;
    return rm_runlog_metric_kv(log, a->step, a->n, a->v);
}

static int write_objective(rm_runlog *log, void *ctx)
{
    const struct args *a = ctx;
    return rm_runlog_objective(log, a->n, a->v);
}

/* --step N: a decimal integer >= 0. */
static int parse_step(const char *s, long long *step)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < 0 || s[0] == '+' || s[0] == '-' || s[0] == ' ') {
        fprintf(stderr, "runmon log: --step must be an integer >= 0, not '%s'\n", s);
        return -1;
    }
    *step = v;
    return 0;
}

/* runmon log metric [--step N] NAME=VALUE ... and runmon log objective SPEC ... */
static int log_metric_or_objective(const char *file, bool metric, long long step, int argc,
                                   char **argv, int i)
{
    struct args a = {step, 0, NULL};
    for (; metric && i < argc; i++) {
        if (!strcmp(argv[i], "--step") || !strncmp(argv[i], "--step=", 7)) {
            const char *v = argv[i][6] == '=' ? argv[i] + 7 : i + 1 < argc ? argv[++i] : NULL;
            if (!v) {
                fprintf(stderr, "runmon log: --step needs N\n");
                return 2;
            }
            if (parse_step(v, &a.step) < 0) return 2;
        } else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            break;
        }
    }
    a.n = argc - i;
    a.v = (const char *const *)argv + i;
    if (a.n == 0) {
        fprintf(stderr, "runmon log: missing %s (see 'runmon log --help')\n",
                metric ? "NAME=VALUE" : "METRIC:min|max");
        return 2;
    }
    int rc =
        metric ? rm_runlog_check_metric_kv(a.step, a.n, a.v) : rm_runlog_check_objective(a.n, a.v);
    if (rc < 0) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        return 2;
    }
    if (!(file = resolve_file("log", file))) return 2;
    return write_one(file, metric ? write_metric : write_objective, &a);
}

int rm_cmd_log(int argc, char **argv)
{
    const char *file = NULL;
    long long step = RM_RUNLOG_NO_STEP;
    int i = parse_opts("log", log_usage, argc, argv, &file, false, &step);
    if (i < 0) return i == -1 ? 0 : 2;
    if (i >= argc) {
        fprintf(stderr, "runmon log: missing 'phase', 'event', 'metric' or 'objective' (see "
                        "'runmon log --help')\n");
        return 2;
    }
    const char *kind = argv[i++];
    if (!strcmp(kind, "metric") || !strcmp(kind, "objective"))
        return log_metric_or_objective(file, kind[0] == 'm', step, argc, argv, i);
    if (step != RM_RUNLOG_NO_STEP) {
        fprintf(stderr, "runmon log: --step is for metric lines only\n");
        return 2;
    }
    bool is_phase = !strcmp(kind, "phase");
    if (!is_phase && strcmp(kind, "event") != 0) {
        fprintf(stderr,
                "runmon log: unknown record kind '%s' (expected 'phase', 'event', 'metric' or "
                "'objective')\n",
                kind);
        return 2;
    }
    if (i >= argc) {
        fprintf(stderr, "runmon log: missing %s\n", is_phase ? "phase NAME" : "event TYPE");
        return 2;
    }
    const char *name = argv[i++];
    if (rm_text_check(name, is_phase ? "phase name" : "event type") < 0) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        return 2;
    }
    double seconds = 0;
    if (is_phase) {
        if (i >= argc) {
            fprintf(stderr, "runmon log: missing SECONDS for phase '%s'\n", name);
            return 2;
        }
        if (rm_parse_seconds(argv[i++], &seconds) < 0) {
            fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
            return 2;
        }
    }
    json_t *extra = rm_kv_object(argc - i, (const char *const *)argv + i);
    if (extra && rm_runlog_check_extra(kind, extra) < 0) {
        json_decref(extra);
        extra = NULL;
    }
    if (!extra) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        return 2;
    }
    if (!(file = resolve_file("log", file))) {
        json_decref(extra);
        return 2;
    }
    /* Past RLIMIT_FSIZE, write() should fail with EFBIG rather than kill us. */
    signal(SIGXFSZ, SIG_IGN);
    rm_runlog *log = rm_runlog_open(file);
    if (!log) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        json_decref(extra);
        return 2;
    }
    int rc =
        is_phase ? rm_runlog_phase(log, name, seconds, extra) : rm_runlog_event(log, name, extra);
    int status = 0;
    if (rc < 0) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        status = 1;
    }
    if (rm_runlog_close(log) < 0 && status == 0) {
        fprintf(stderr, "runmon log: %s\n", rm_runlog_errmsg());
        status = 1;
    }
    json_decref(extra);
    return status;
}

/* ---- runmon phase ---------------------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

/* A signal someone sent with kill() reaches only us: pass it on. One from the terminal
 * (SI_KERNEL) went to the whole foreground process group, so the command has it already. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code == SI_TKILL) {
        pid_t pid = child_pid;
        if (pid > 0) kill(pid, sig);
    }
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static char *absolute(const char *path)
{
    if (path[0] == '/') return strdup(path);
    char *cwd = getcwd(NULL, 0);
    if (!cwd) return strdup(path);
    char *s = malloc(strlen(cwd) + strlen(path) + 2);
    if (s) sprintf(s, "%s/%s", cwd, path);
    free(cwd);
    return s;
}

/* Spawns argv with the signals we catch blocked until child_pid is set, so a forwarded
 * signal never finds it unset. The command gets an empty mask and default SIGXFSZ (we
 * ignore it; an ignored disposition would otherwise be inherited). */
static int spawn(char **argv, pid_t *pid)
{
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t empty, def;
    sigemptyset(&empty);
    sigemptyset(&def);
    sigaddset(&def, SIGXFSZ);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawnp(pid, argv[0], NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) child_pid = *pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int rm_cmd_phase(int argc, char **argv)
{
    const char *file = NULL;
    int i = parse_opts("phase", phase_usage, argc, argv, &file, true, NULL);
    if (i < 0) return i == -1 ? 0 : 2;
    if (i >= argc || !strcmp(argv[i], "--")) {
        fprintf(stderr, "runmon phase: missing phase NAME (see 'runmon phase --help')\n");
        return 2;
    }
    const char *name = argv[i++];
    if (rm_text_check(name, "phase name") < 0) {
        fprintf(stderr, "runmon phase: %s\n", rm_runlog_errmsg());
        return 2;
    }
    if (strchr(name, '/')) {
        fprintf(stderr,
                "runmon phase: phase name '%s' contains '/' (it separates nested "
                "phases)\n",
                name);
        return 2;
    }
    int kv_start = i;
    while (i < argc && strcmp(argv[i], "--") != 0)
        i++;
    if (i >= argc) {
        fprintf(stderr, "runmon phase: missing '--' before COMMAND\n");
        return 2;
    }
    char **cmd = argv + i + 1;
    if (!*cmd) {
        fprintf(stderr, "runmon phase: missing COMMAND after '--'\n");
        return 2;
    }
    json_t *extra = rm_kv_object(i - kv_start, (const char *const *)argv + kv_start);
    if (extra && rm_runlog_check_extra("phase_enter", extra) < 0) {
        json_decref(extra);
        extra = NULL;
    }
    if (!extra) {
        fprintf(stderr, "runmon phase: %s\n", rm_runlog_errmsg());
        return 2;
    }
    int status = 2;
    rm_runlog *log = NULL;
    char *path = NULL, *abs = NULL;
    if (!(file = resolve_file("phase", file))) goto out;
    signal(SIGXFSZ, SIG_IGN);
    if (!(log = rm_runlog_open(file))) {
        fprintf(stderr, "runmon phase: %s\n", rm_runlog_errmsg());
        goto out;
    }
    const char *inherited = getenv("RUNMON_PHASE_PATH");
    if (rm_runlog_set_prefix(log, inherited) < 0) {
        fprintf(stderr, "runmon phase: bad RUNMON_PHASE_PATH: %s\n", rm_runlog_errmsg());
        goto out;
    }
    if (rm_runlog_enter(log, name, extra) < 0) {
        fprintf(stderr, "runmon phase: %s\n", rm_runlog_errmsg());
        status = 1;
        goto out;
    }
    /* The command's own runmon calls nest under this phase, in this file. */
    path = rm_runlog_current_path(log);
    abs = absolute(file);
    if (!path || !abs || setenv("RUNMON_PHASE_PATH", path, 1) < 0 ||
        setenv("RUNMON_RUNLOG", abs, 1) < 0) {
        fprintf(stderr, "runmon phase: out of memory\n");
        status = 1;
        goto out;
    }

    struct sigaction sa = {0};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < NFORWARDED; k++) {
        struct sigaction cur;
        /* A signal our parent told us to ignore stays ignored, for us and the command. */
        if (sigaction(forwarded[k], NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
            sigaction(forwarded[k], &sa, NULL);
    }

    pid_t pid;
    int code, sig = 0, err = spawn(cmd, &pid);
    json_t *exit_extra = json_deep_copy(extra);
    if (err) {
        code = (err == ENOENT || err == ENOTDIR) ? 127 : 126;
        fprintf(stderr, "runmon phase: cannot run '%s': %s\n", cmd[0], strerror(err));
        json_object_set_new(exit_extra, "error", json_string(strerror(err)));
    } else {
        int ws;
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
            ;
        child_pid = 0;
        if (WIFSIGNALED(ws)) {
            sig = WTERMSIG(ws);
            code = 128 + sig;
        } else {
            code = WEXITSTATUS(ws);
        }
    }
    json_object_set_new(exit_extra, "exit_code", json_integer(code));
    if (sig) json_object_set_new(exit_extra, "signal", json_integer(sig));
    /* The command ran: its status is what we exit with, even if this line fails. */
    if (rm_runlog_exit(log, name, code == 0 ? RM_RUNLOG_OK : RM_RUNLOG_ERROR, exit_extra) < 0)
        fprintf(stderr, "runmon phase: %s\n", rm_runlog_errmsg());
    json_decref(exit_extra);
    status = code;
out:
    free(path);
    free(abs);
    rm_runlog_close(log);
    json_decref(extra);
    return status;
}
