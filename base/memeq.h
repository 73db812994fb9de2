/* Equality of two short byte strings, inline: memcmp with a length known only at run time is
 * a call into libc, and the summary's readers compare a short key or time text once per row
 * (5 % of nvidia-smi CSV's summary went to those calls). */
#ifndef RUNMON_BASE_MEMEQ_H
#define RUNMON_BASE_MEMEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether a[0..n) and b[0..n) hold the same bytes. Words of 8 (the last one overlapping the
 * one before), or two overlapping words of 4, or bytes: never reads outside the n bytes. */
static inline bool rm_memeq(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    if (n >= 8) {
        uint64_t u, v;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&u, x + i, 8);
            memcpy(&v, y + i, 8);
            if (u != v) return false;
        }
        memcpy(&u, x + n - 8, 8);
        memcpy(&v, y + n - 8, 8);
        return u == v;
    }
    if (n >= 4) {
        uint32_t u0, v0, u1, v1;
        memcpy(&u0, x, 4);
        memcpy(&v0, y, 4);
        memcpy(&u1, x + n - 4, 4);
        memcpy(&v1, y + n - 4, 4);
        return u0 == v0 && u1 == v1;
    }
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return false;
    return true;
}

#endif
