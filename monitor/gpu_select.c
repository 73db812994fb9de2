#include "monitor/gpu_select.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The variables that can name the job's GPUs, the first set one deciding. CUDA's is what
 * the workload itself sees; the others hold the node's numbering (node: 1). */
static const struct {
    const char *name;
    int node;
} vars[] = {
    {"CUDA_VISIBLE_DEVICES", 0},
    {"SLURM_STEP_GPUS", 1},
    {"SLURM_JOB_GPUS", 1},
    {"NVIDIA_VISIBLE_DEVICES", 1},
};

__attribute__((format(printf, 2, 3))) static void warn(struct rm_gpu_selection *sel,
                                                       const char *fmt, ...)
{
    if (sel->nwarnings >= RM_GPU_SELECT_WARNINGS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sel->warning[sel->nwarnings++], sizeof sel->warning[0], fmt, ap);
    va_end(ap);
}

/* A value that names no GPU list at all: the variable is passed over. */
static int no_list(const char *name, const char *v)
{
    if (!*v || !strcmp(v, "NoDevFiles")) return 1;
    return !strcmp(name, "NVIDIA_VISIBLE_DEVICES") &&
           (!strcmp(v, "all") || !strcmp(v, "none") || !strcmp(v, "void"));
}

/* The deciding variable's index in vars[], or -1. */
static int deciding(rm_env_fn env, const char **value)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = env(vars[i].name);
        if (v && !no_list(vars[i].name, v)) {
            *value = v;
            return (int)i;
        }
    }
    return -1;
}

int rm_gpu_select_needs_list(rm_env_fn env, int all_gpus)
{
    const char *v;
    if (all_gpus || deciding(env, &v) < 0) return 0;
    for (const char *p = v; (p = strstr(p, "MIG-")); p += 4)
        if (strncmp(p + 4, "GPU-", 4) != 0) return 1;
    return 0;
}

static int is_index(const char *t)
{
    if (!*t) return 0;
    for (; *t; t++)
        if (*t < '0' || *t > '9') return 0;
    return 1;
}

static int by_uuid(const struct rm_gpu_info *gpus, int ngpus, const char *u, size_t n)
{
    int found = -1;
    for (int p = 0; p < ngpus; p++) {
        if (strncasecmp(gpus[p].uuid, u, n) != 0) continue;
        if (gpus[p].uuid[n] == '\0') return p;
        found = found == -1 ? p : -2; /* a prefix, as CUDA takes one, must be unique */
    }
    return found >= 0 ? found : -1;
}

/* "00000000:17:00.0" and "0000:17:00.0" name the same GPU: compare after the domain. */
static const char *bus_tail(const char *b)
{
    const char *c = strchr(b, ':');
    return c && strchr(c + 1, ':') ? c + 1 : b;
}

/* The GPU whose MIG instance has this MIG-<uuid>, from `nvidia-smi -L`: -1 if not there. */
static int by_mig(const struct rm_gpu_info *gpus, int ngpus, const char *t, const char *list)
{
    if (!list) return -1;
    char parent[96] = "";
    for (const char *l = list; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        const char *u = memmem(l, n, "(UUID: ", 7);
        if (u) {
            u += 7;
            size_t un = 0;
            while (u + un < l + n && u[un] != ')')
                un++;
            if (!strncmp(l, "GPU ", 4) && un < sizeof parent)
                snprintf(parent, sizeof parent, "%.*s", (int)un, u);
            else if (un == strlen(t) && !strncasecmp(u, t, un) && parent[0])
                return by_uuid(gpus, ngpus, parent, strlen(parent));
        }
        l += n + (e ? 1 : 0);
    }
    return -1;
}

/* One entry of a list: its inventory position, or -1. Indices are nvidia-smi's. */
static int resolve(const struct rm_gpu_info *gpus, int ngpus, const char *t, const char *list)
{
    if (is_index(t)) {
        long i = strtol(t, NULL, 10);
        for (int p = 0; p < ngpus; p++)
            if (gpus[p].index == i) return p;
        return -1;
    }
    if (!strncasecmp(t, "MIG-GPU-", 8)) { /* the old MIG-GPU-<uuid>/GI/CI form */
        const char *slash = strchr(t + 4, '/');
        return by_uuid(gpus, ngpus, t + 4, slash ? (size_t)(slash - t - 4) : strlen(t + 4));
    }
    if (!strncasecmp(t, "MIG-", 4)) return by_mig(gpus, ngpus, t, list);
    if (!strncasecmp(t, "GPU-", 4)) return by_uuid(gpus, ngpus, t, strlen(t));
    if (strchr(t, ':')) {
        for (int p = 0; p < ngpus; p++)
            if (!strcasecmp(bus_tail(gpus[p].pci_bus_id), bus_tail(t))) return p;
    }
    return -1;
}

static int chosen(const struct rm_gpu_selection *sel, int p)
{
    for (int i = 0; i < sel->n; i++)
        if (sel->pos[i] == p) return 1;
    return 0;
}

static void keep_all(struct rm_gpu_selection *sel, int ngpus)
{
    sel->n = 0;
    for (int p = 0; p < ngpus && p < RM_MAX_GPUS; p++)
        sel->pos[sel->n++] = p;
    sel->all = 1;
}

/* Splits v at commas into trimmed entries; returns their count. */
static int split(const char *v, char tok[][128], int max)
{
    int n = 0;
    for (const char *p = v;; p++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (n < max) snprintf(tok[n++], sizeof tok[0], "%.*s", (int)(len < 127 ? len : 127), p);
        if (!e) break;
        p = e;
    }
    return n;
}

/* CUDA_VISIBLE_DEVICES: read as CUDA reads it, up to the first entry that names no GPU. */
static void cuda_list(const struct rm_gpu_info *gpus, int ngpus, const char *v, const char *list,
                      struct rm_gpu_selection *sel)
{
    char tok[RM_MAX_GPUS + 1][128];
    int nt = split(v, tok, RM_MAX_GPUS + 1);
    for (int i = 0; i < nt; i++) {
        int p = resolve(gpus, ngpus, tok[i], list);
        if (p < 0 || chosen(sel, p)) {
            const char *rest = v;
            for (int k = 0; k < i; k++)
                rest = strchr(rest, ',') + 1;
            warn(sel,
                 "CUDA_VISIBLE_DEVICES='%.100s': entry %d ('%.100s') %s; like CUDA, runmon reads "
                 "only the entries before it (ignored: '%.100s')",
                 v, i + 1, tok[i], p < 0 ? "names no GPU here" : "repeats a GPU", rest);
            return;
        }
        sel->pos[sel->n++] = p;
    }
}

/* SLURM_*_GPUS and NVIDIA_VISIBLE_DEVICES: the node's numbering. Inside a cgroup that hides
 * the other GPUs, nvidia-smi numbers the job's own from 0, so when it shows exactly as many
 * GPUs as the list holds, they are the job's: all are kept. UUIDs and bus ids always
 * resolve as they are. */
static void node_list(const struct rm_gpu_info *gpus, int ngpus, const char *name, const char *v,
                      const char *list, struct rm_gpu_selection *sel)
{
    char tok[RM_MAX_GPUS + 1][128];
    int nt = split(v, tok, RM_MAX_GPUS + 1), indices = 1;
    for (int i = 0; i < nt; i++)
        indices &= is_index(tok[i]);
    if (indices && nt >= ngpus) {
        if (nt > ngpus)
            warn(sel, "%s='%.100s' names %d GPUs, nvidia-smi shows %d: recording those %d", name, v,
                 nt, ngpus, ngpus);
        keep_all(sel, ngpus);
        return;
    }
    for (int i = 0; i < nt; i++) {
        int p = resolve(gpus, ngpus, tok[i], list);
        if (p < 0)
            warn(sel, "%s='%.100s': '%.100s' names no GPU here", name, v, tok[i]);
        else if (!chosen(sel, p))
            sel->pos[sel->n++] = p;
    }
}

/* CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi numbers
 * them by bus id. Only GPUs of different models can be numbered differently. */
static void order_check(const struct rm_gpu_info *gpus, int ngpus, const char *v, rm_env_fn env,
                        struct rm_gpu_selection *sel)
{
    const char *order = env("CUDA_DEVICE_ORDER");
    if (order && !strcmp(order, "PCI_BUS_ID")) return;
    int has_index = 0, mixed = 0;
    char tok[RM_MAX_GPUS + 1][128];
    int nt = split(v, tok, RM_MAX_GPUS + 1);
    for (int i = 0; i < nt; i++)
        has_index |= is_index(tok[i]);
    for (int p = 1; p < ngpus; p++)
        mixed |= strcmp(gpus[p].name, gpus[0].name) != 0;
    if (has_index && mixed && !sel->all)
        warn(sel,
             "CUDA_VISIBLE_DEVICES holds indices and the GPUs are of different models, but "
             "CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA may number them otherwise than "
             "nvidia-smi, whose order runmon used; set CUDA_DEVICE_ORDER=PCI_BUS_ID or give UUIDs");
}

void rm_gpu_select(const struct rm_gpu_info *gpus, int ngpus, int all_gpus, rm_env_fn env,
                   const char *list_text, struct rm_gpu_selection *sel)
{
    memset(sel, 0, sizeof *sel);
    if (ngpus > RM_MAX_GPUS) ngpus = RM_MAX_GPUS;
    const char *v = NULL;
    int d = all_gpus ? -1 : deciding(env, &v);
    if (all_gpus) snprintf(sel->by, sizeof sel->by, "--all-gpus");
    if (d < 0) {
        keep_all(sel, ngpus);
        return;
    }
    snprintf(sel->by, sizeof sel->by, "%s", vars[d].name);
    snprintf(sel->value, sizeof sel->value, "%s", v);
    if (vars[d].node)
        node_list(gpus, ngpus, vars[d].name, v, list_text, sel);
    else
        cuda_list(gpus, ngpus, v, list_text, sel);
    if (sel->n == 0 && ngpus > 0) {
        warn(sel, "%s='%.100s' names none of the %d GPUs here: recording them all", vars[d].name, v,
             ngpus);
        keep_all(sel, ngpus);
        return;
    }
    if (sel->n == ngpus) sel->all = 1;
    /* Kept in the inventory's order: the files list GPUs as nvidia-smi does. */
    for (int i = 1; i < sel->n; i++)
        for (int k = i; k > 0 && sel->pos[k - 1] > sel->pos[k]; k--) {
            int t = sel->pos[k];
            sel->pos[k] = sel->pos[k - 1];
            sel->pos[k - 1] = t;
        }
    if (!vars[d].node) order_check(gpus, ngpus, v, env, sel);
}

int rm_gpu_select_ids(const struct rm_gpu_selection *sel, const struct rm_gpu_info *gpus, char *buf,
                      size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    if (sel->all) return 0;
    for (int i = 0; i < sel->n; i++) {
        const struct rm_gpu_info *g = &gpus[sel->pos[i]];
        int w = g->uuid[0] ? snprintf(buf + used, cap - used, "%s%s", i ? "," : "", g->uuid)
                           : snprintf(buf + used, cap - used, "%s%d", i ? "," : "", g->index);
        if (w < 0 || (size_t)w >= cap - used) {
            buf[0] = '\0';
            return -1;
        }
        used += (size_t)w;
    }
    return 0;
}
