#include "summary/segments.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "model/streams.h"

static int push(char ***names, size_t *n, size_t *cap, const char *nm)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        char **p = realloc(*names, nc * sizeof *p);
        if (!p) return -1;
        *names = p;
        *cap = nc;
    }
    char *copy = strdup(nm);
    if (!copy) return -1;
    (*names)[(*n)++] = copy;
    return 0;
}

size_t rm_segment_family(const char *dir, int stream, char ***names)
{
    *names = NULL;
    size_t n = 0, cap = 0;
    DIR *dp = opendir(dir);
    if (dp) {
        struct dirent *e;
        int k, sealed;
        while ((e = readdir(dp)))
            if (rm_segment_parse_name(e->d_name, &k, &sealed) && k == stream && sealed &&
                push(names, &n, &cap, e->d_name) < 0)
                break;
        closedir(dp);
    }
    if (n) qsort(*names, n, sizeof **names, rm_cmp_cstr);
    char active[64], path[4096];
    rm_segment_name(active, sizeof active, stream, 0);
    snprintf(path, sizeof path, "%s/%s", dir, active);
    if (access(path, F_OK) == 0) push(names, &n, &cap, active);
    return n;
}

void rm_segment_family_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
