/* The workload's pids, each tick (monitor/workload.h). */
#include "monitor/workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "monitor/apps_collector.h"
#include "monitor/procfs_internal.h"

#define CGROUP_DEPTH_MAX 32

/* The NSpid line of PID/status (or "self/status") under proc_fd into ids (the pid in each
 * namespace from the /proc tree's down to the process's own). How many, 0 when unreadable. */
static int ns_pids(int proc_fd, const char *who, int32_t *ids, int max)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "%s/status", who);
    int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *l = strstr(buf, "\nNSpid:");
    if (!l) return 0;
    int k = 0;
    for (char *p = (char *)l + 7, *end; k < max; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p) break;
        ids[k++] = (int32_t)v;
    }
    return k;
}

struct view_scan {
    int proc_fd, depth;
    pid_t pid, found;
};

pid_t rm_pid_in_proc_view(int proc_fd, pid_t pid)
{
    int32_t me[32];
    int depth = proc_fd >= 0 && pid > 0 ? ns_pids(proc_fd, "self", me, 32) : 0;
    if (depth == 0 || me[depth - 1] != (int32_t)getpid()) return pid; /* no NSpid: as it is */
    if (me[0] == (int32_t)getpid()) return pid; /* the tree is our own namespace's */
    /* Another namespace's /proc (a container that sees the host's): the process whose NSpid
     * ends with pid at our depth. */
    int dfd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        return 0;
    }
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        int32_t ids[32];
        int k = ns_pids(proc_fd, e->d_name, ids, 32);
        if (k == depth && ids[k - 1] == (int32_t)pid) found = ids[0];
    }
    closedir(d);
    return found;
}

void rm_workload_reader_init(struct rm_workload_reader *r, const struct rm_port *port,
                             struct rm_procfs *procfs)
{
    *r = (struct rm_workload_reader){.w = port ? port->workload : NULL,
                                     .command = port ? port->workload_pid : NULL,
                                     .procfs = procfs,
                                     .self = (int32_t)getpid()};
    if (procfs) r->self = (int32_t)rm_pid_in_proc_view(procfs->rootfd, getpid());
}

void rm_workload_reader_fini(struct rm_workload_reader *r)
{
    free(r->cg);
    r->cg = NULL;
    r->ncg = r->cgcap = 0;
}

pid_t rm_workload_root(const struct rm_workload *w, pid_t command)
{
    if (!w) return command;
    switch (w->kind) {
    case RM_WORKLOAD_PID:
        return w->pid;
    case RM_WORKLOAD_CGROUP:
        return 0;
    case RM_WORKLOAD_CHILD:
    case RM_WORKLOAD_SLURM_STEP:
        break;
    }
    return command;
}

static int has_cgroup(const struct rm_workload *w)
{
    return w && (w->kind == RM_WORKLOAD_CGROUP || w->kind == RM_WORKLOAD_SLURM_STEP);
}

static int push_pid(int32_t **buf, size_t *n, size_t *cap, int32_t pid)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        int32_t *b = realloc(*buf, c * sizeof *b);
        if (!b) return -1;
        *buf = b;
        *cap = c;
    }
    (*buf)[(*n)++] = pid;
    return 0;
}

/* cgroup.procs of the folder at dfd, then each child cgroup's (depth-first), but for a child
 * of the top one named skip. */
static int cgroup_walk(int dfd, int depth, const char *skip, int32_t **buf, size_t *n, size_t *cap)
{
    int pf = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (pf < 0) return -1;
    char b[4096], num[16];
    size_t nl = 0;
    ssize_t got;
    while ((got = read(pf, b, sizeof b)) > 0)
        for (ssize_t i = 0; i < got; i++) {
            if (b[i] >= '0' && b[i] <= '9' && nl < sizeof num - 1) {
                num[nl++] = b[i];
            } else if (nl) {
                num[nl] = '\0';
                nl = 0;
                if (push_pid(buf, n, cap, (int32_t)atol(num)) < 0) break;
            }
        }
    close(pf);
    if (depth >= CGROUP_DEPTH_MAX) return 0;
    int lf = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lf >= 0 ? fdopendir(lf) : NULL;
    if (!d) {
        if (lf >= 0) close(lf);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        if (depth == 0 && skip && !strcmp(e->d_name, skip)) continue;
        int cf = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cf < 0) continue; /* removed meanwhile */
        (void)cgroup_walk(cf, depth + 1, NULL, buf, n, cap);
        close(cf);
    }
    closedir(d);
    return 0;
}

int rm_cgroup_pids(const char *dir, const char *skip, int32_t **buf, size_t *n, size_t *cap)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    int rc = cgroup_walk(dfd, 0, skip, buf, n, cap);
    int e = errno;
    close(dfd);
    errno = e;
    return rc;
}

/* A SLURM step's cgroup v2 holds slurmstepd itself in its child "slurm" (the tasks are under
 * "user"): never the workload's. */
static const char *skip_of(const struct rm_workload *w)
{
    return w->kind == RM_WORKLOAD_SLURM_STEP ? "slurm" : NULL;
}

int rm_workload_sample(struct rm_workload_reader *r, int64_t mono_ns, int64_t born_after_ns,
                       struct rm_tree_sample *out)
{
    pid_t command = r->command ? (pid_t)atomic_load(r->command) : 0;
    if (command > 0 && (command != r->cmd_ours || r->cmd_view <= 0)) { /* in the tree's view */
        r->cmd_ours = command;
        r->cmd_view = rm_pid_in_proc_view(r->procfs->rootfd, command);
    }
    pid_t root = rm_workload_root(r->w, command > 0 ? r->cmd_view : 0);
    /* Processes that ran before the recording: their first sample is the baseline. */
    if (r->w && r->w->kind != RM_WORKLOAD_CHILD) born_after_ns = -1;
    if (!has_cgroup(r->w))
        return rm_procfs_tree_sample_since(r->procfs, root, mono_ns, born_after_ns, out);
    r->ncg = 0;
    (void)rm_cgroup_pids(r->w->cgroup, skip_of(r->w), &r->cg, &r->ncg, &r->cgcap); /* gone: empty */
    return rm_procfs_set_sample(r->procfs, root, r->cg, r->ncg, r->self, mono_ns, born_after_ns,
                                out);
}

size_t rm_workload_pids(struct rm_workload_reader *r, int64_t mono_ns, struct rm_tree_member *out,
                        size_t max)
{
    struct rm_tree_sample t;
    if (rm_workload_sample(r, mono_ns, -1, &t) != 0) return 0;
    return rm_procfs_tree_members(r->procfs, out, max);
}

int rm_workload_contains(const struct rm_workload *w, pid_t command, int proc_fd, pid_t pid,
                         const char *name, size_t name_len)
{
    pid_t root = rm_workload_root(w, command > 0 ? rm_pid_in_proc_view(proc_fd, command) : 0);
    int r = rm_pid_in_tree(proc_fd, pid, root, name, name_len, NULL);
    if (r != 0 || !has_cgroup(w)) return r;
    /* Not in the tree (or no tree): a member of the cgroup? */
    int32_t *buf = NULL;
    size_t n = 0, cap = 0;
    int in = 0;
    if (rm_cgroup_pids(w->cgroup, skip_of(w), &buf, &n, &cap) == 0)
        for (size_t i = 0; i < n && !in; i++)
            in = buf[i] == (int32_t)pid && pid != getpid();
    free(buf);
    return in;
}

/* ---- who the workload is: checked before anything is made --------------------------- */

static int read_text(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t len = 0;
    ssize_t n;
    while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    return (int)len;
}

/* A process's state and start time from PROC/PID/stat. 0, or -1 when there is none. */
static int pid_state(const char *proc_root, pid_t pid, char *state, uint64_t *starttime)
{
    char path[PATH_MAX], buf[2048];
    snprintf(path, sizeof path, "%s/%d/stat", proc_root, (int)pid);
    int n = read_text(path, buf, sizeof buf);
    struct rm_pid_stat st;
    if (n <= 0 || rm_parse_pid_stat(buf, (size_t)n, &st) != 0 || st.pid != pid) return -1;
    *state = st.state;
    *starttime = st.starttime;
    return 0;
}

int rm_workload_attach_pid(struct rm_workload *w, const char *proc_root, const char *arg, char *err,
                           size_t errsz)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || errno || v <= 0 || v > INT32_MAX) {
        snprintf(err, errsz, "--pid %.64s: not a process id (a whole number above 0)", arg);
        return -1;
    }
    char state;
    uint64_t start;
    if (pid_state(proc_root, (pid_t)v, &state, &start) < 0) {
        snprintf(err, errsz, "--pid %ld: no such process", v);
        return -1;
    }
    if (state == 'Z' || state == 'X') {
        snprintf(err, errsz, "--pid %ld: the process has already exited", v);
        return -1;
    }
    if ((pid_t)v == getpid()) {
        snprintf(err, errsz, "--pid %ld: that is runmon itself", v);
        return -1;
    }
    *w = (struct rm_workload){.kind = RM_WORKLOAD_PID, .pid = (pid_t)v, .starttime = start};
    return 0;
}

int rm_workload_alive(const struct rm_workload *w, const char *proc_root)
{
    char state;
    uint64_t start;
    return pid_state(proc_root, w->pid, &state, &start) == 0 && start == w->starttime &&
           state != 'Z' && state != 'X';
}

/* 1 or 2 for a folder on a cgroup file system, 0 for another, -1 when it cannot be seen. */
static int cgroup_version(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) < 0) return -1;
    if ((unsigned long)sf.f_type == (unsigned long)CGROUP2_SUPER_MAGIC) return 2;
    if ((unsigned long)sf.f_type == (unsigned long)CGROUP_SUPER_MAGIC) return 1;
    return 0;
}

int rm_workload_attach_cgroup(struct rm_workload *w, const char *path, char *err, size_t errsz)
{
    struct stat st;
    char procs[PATH_MAX + 16];
    int ver = cgroup_version(path);
    if (!*path || stat(path, &st) < 0 || ver < 0) {
        snprintf(err, errsz, "--cgroup %.200s: %s", path, *path ? strerror(errno) : "empty");
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || ver == 0) {
        snprintf(err, errsz, "--cgroup %.200s: not a cgroup (not a folder on a cgroup file system)",
                 path);
        return -1;
    }
    snprintf(procs, sizeof procs, "%s/cgroup.procs", path);
    if (access(procs, R_OK) < 0) {
        snprintf(err, errsz, "--cgroup %.200s: not a cgroup (no readable cgroup.procs)", path);
        return -1;
    }
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    *w = (struct rm_workload){.kind = RM_WORKLOAD_CGROUP, .cgroup_version = ver};
    snprintf(w->cgroup, sizeof w->cgroup, "%s", real);
    return 0;
}

/* From a line of /proc/self/cgroup ("ID:CONTROLLERS:PATH"), the path cut after its
 * "step_<step>" folder into out. 1 found, 0 not. */
static int step_path(const char *line, const char *step, char *out, size_t cap)
{
    const char *p = strchr(line, ':');
    p = p ? strchr(p + 1, ':') : NULL;
    if (!p) return 0;
    p++;
    char want[48];
    int wl = snprintf(want, sizeof want, "/step_%s", step);
    for (const char *s = strstr(p, want); s; s = strstr(s + 1, want)) {
        char after = s[wl];
        if (after == '/' || after == '\0' || after == '\n') {
            snprintf(out, cap, "%.*s", (int)(s + wl - p), p);
            return 1;
        }
    }
    return 0;
}

/* The mount point of the hierarchy a /proc/self/cgroup line names (v2: "0::"; v1: one of its
 * controllers among the mount's options), from mountinfo. 1 or 2 (the version), 0 none. */
static int hierarchy_mount(const char *mountinfo, const char *line, char *mnt, size_t cap)
{
    const char *c1 = strchr(line, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) return 0;
    int v2 = c2 == c1 + 1 && line[0] == '0';
    char ctl[64];
    snprintf(ctl, sizeof ctl, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    char *comma = strchr(ctl, ',');
    if (comma) *comma = '\0';
    for (const char *l = mountinfo; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char row[1024];
        snprintf(row, sizeof row, "%.*s", (int)(len < sizeof row ? len : sizeof row - 1), l);
        l = nl ? nl + 1 : NULL;
        char *sep = strstr(row, " - ");
        if (!sep) continue;
        char fstype[32], super[512] = "";
        if (sscanf(sep + 3, "%31s %*s %511s", fstype, super) < 1) continue;
        char root[256], point[512];
        if (sscanf(row, "%*s %*s %*s %255s %511s", root, point) != 2 || strcmp(root, "/")) continue;
        if (v2 && !strcmp(fstype, "cgroup2")) {
            snprintf(mnt, cap, "%s", point);
            return 2;
        }
        if (!v2 && ctl[0] && !strcmp(fstype, "cgroup")) {
            char *save = NULL;
            for (char *t = strtok_r(super, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (!strcmp(t, ctl)) {
                    snprintf(mnt, cap, "%s", point);
                    return 1;
                }
        }
    }
    return 0;
}

int rm_workload_find_slurm_step(struct rm_workload *w, const char *proc_root,
                                const char *(*env)(const char *))
{
    const char *job = env("SLURM_JOB_ID"), *step = env("SLURM_STEP_ID");
    if (!job || !*job || !step || !*step || strlen(step) > 20 || strlen(job) > 20) return 1;
    char path[PATH_MAX], cg[8192], mi[65536];
    snprintf(path, sizeof path, "%s/self/cgroup", proc_root);
    if (read_text(path, cg, sizeof cg) <= 0) return 1;
    snprintf(path, sizeof path, "%s/self/mountinfo", proc_root);
    if (read_text(path, mi, sizeof mi) <= 0) return 1;
    /* v2's line first (it comes last in the file), then each v1 controller's. */
    for (int pass = 0; pass < 2; pass++)
        for (char *l = cg; *l;) {
            char *nl = strchr(l, '\n');
            if (nl) *nl = '\0';
            char rel[PATH_MAX / 2], mnt[PATH_MAX / 2];
            int is_v2 = !strncmp(l, "0::", 3);
            int ver;
            if (is_v2 == (pass == 0) && step_path(l, step, rel, sizeof rel) &&
                (ver = hierarchy_mount(mi, l, mnt, sizeof mnt)) > 0) {
                char dir[PATH_MAX], procs[PATH_MAX + 16];
                snprintf(dir, sizeof dir, "%s%s", mnt, rel);
                snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
                if (access(procs, R_OK) == 0) {
                    *w =
                        (struct rm_workload){.kind = RM_WORKLOAD_SLURM_STEP, .cgroup_version = ver};
                    snprintf(w->cgroup, sizeof w->cgroup, "%s", dir);
                    snprintf(w->job_id, sizeof w->job_id, "%s", job);
                    snprintf(w->step_id, sizeof w->step_id, "%s", step);
                    if (nl) *nl = '\n';
                    return 0;
                }
            }
            if (!nl) break;
            *nl = '\n';
            l = nl + 1;
        }
    return 1;
}
