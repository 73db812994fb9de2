#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void out_of_memory(void)
{
    static const char msg[] = "runmon: out of memory\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    abort();
}

void *rm_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory();
    return q;
}

void *rm_xcalloc(size_t n, size_t size)
{
    void *q = calloc(n ? n : 1, size ? size : 1);
    if (!q) out_of_memory();
    return q;
}

char *rm_xstrdup(const char *s)
{
    char *q = strdup(s);
    if (!q) out_of_memory();
    return q;
}

void *rm_xmemdup(const void *p, size_t n)
{
    return memcpy(rm_xrealloc(NULL, n ? n : 1), p, n);
}

void *rm_xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < need)
        c *= 2;
    p = rm_xrealloc(p, c * elem);
    *cap = c;
    return p;
}
