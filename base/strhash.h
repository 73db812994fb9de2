/* A string's 64-bit FNV-1a hash, for the open-addressing tables of names and paths. */
#ifndef RUNMON_BASE_STRHASH_H
#define RUNMON_BASE_STRHASH_H

#include <stdint.h>

static inline uint64_t rm_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
