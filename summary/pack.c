/* Packed statistics: each 64-bit word as its template's, the previous word's, one byte or
 * eight (see pack.h). */
#include "summary/pack.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

enum { T_TEMPLATE = 0, T_PREVIOUS = 1, T_BYTE = 2, T_WORD = 3 };

#define GPU_WORDS (sizeof(struct rm_gpu_stats) / 8)
#define HOST_WORDS (sizeof(struct rm_host_stats) / 8)
_Static_assert(sizeof(struct rm_gpu_stats) % 8 == 0, "rm_gpu_stats is whole 64-bit words");
_Static_assert(sizeof(struct rm_host_stats) % 8 == 0, "rm_host_stats is whole 64-bit words");

/* The most bytes n words pack into. */
#define PACKED_MAX(n) (((n) + 3) / 4 + 8 * (n))

/* Appends the packed form of w (n words, template t) at out; returns the bytes written. */
static size_t pack_words(const uint64_t *w, const uint64_t *t, size_t n, uint8_t *out)
{
    size_t o = (n + 3) / 4;
    memset(out, 0, o);
    for (size_t i = 0; i < n; i++) {
        unsigned tag;
        if (w[i] == t[i]) {
            tag = T_TEMPLATE;
        } else if (i && w[i] == w[i - 1]) {
            tag = T_PREVIOUS;
        } else if (w[i] < 256) {
            tag = T_BYTE;
            out[o++] = (uint8_t)w[i];
        } else {
            tag = T_WORD;
            memcpy(out + o, &w[i], 8);
            o += 8;
        }
        out[i / 4] |= (uint8_t)(tag << (2 * (i % 4)));
    }
    return o;
}

/* The n words packed at in (template t) into w; returns the bytes read. */
static size_t unpack_words(const uint8_t *in, const uint64_t *t, size_t n, uint64_t *w)
{
    size_t o = (n + 3) / 4;
    for (size_t i = 0; i < n; i++) {
        switch ((in[i / 4] >> (2 * (i % 4))) & 3) {
        case T_TEMPLATE:
            w[i] = t[i];
            break;
        case T_PREVIOUS:
            w[i] = w[i - 1];
            break;
        case T_BYTE:
            w[i] = in[o++];
            break;
        default:
            memcpy(&w[i], in + o, 8), o += 8;
        }
    }
    return o;
}

static const uint64_t *gpu_template(void)
{
    static _Thread_local uint64_t t[GPU_WORDS];
    static _Thread_local int made;
    if (!made) {
        struct rm_gpu_stats s;
        rm_stats_init(&s);
        memcpy(t, &s, sizeof s);
        made = 1;
    }
    return t;
}

uint8_t *rm_pack_gpu_stats(const struct rm_gpu_stats *s, size_t n)
{
    if (!n) return NULL;
    uint8_t *buf = rm_xrealloc(NULL, n * PACKED_MAX(GPU_WORDS));
    size_t len = 0;
    uint64_t w[GPU_WORDS];
    for (size_t i = 0; i < n; i++) {
        memcpy(w, &s[i], sizeof w);
        len += pack_words(w, gpu_template(), GPU_WORDS, buf + len);
    }
    uint8_t *out = rm_xmemdup(buf, len); /* exact: realloc may keep the whole block */
    free(buf);
    return out;
}

void rm_unpack_gpu_stats(const uint8_t *blob, struct rm_gpu_stats *s, size_t n)
{
    uint64_t w[GPU_WORDS];
    for (size_t i = 0; i < n; i++) {
        if (!blob) {
            rm_stats_init(&s[i]);
            continue;
        }
        blob += unpack_words(blob, gpu_template(), GPU_WORDS, w);
        memcpy(&s[i], w, sizeof w);
    }
}

uint8_t *rm_pack_host_stats(const struct rm_host_stats *h)
{
    static const uint64_t zero[HOST_WORDS];
    uint8_t buf[PACKED_MAX(HOST_WORDS)];
    uint64_t w[HOST_WORDS];
    memcpy(w, h, sizeof w);
    size_t len = pack_words(w, zero, HOST_WORDS, buf);
    return rm_xmemdup(buf, len);
}

void rm_unpack_host_stats(const uint8_t *blob, struct rm_host_stats *h)
{
    static const uint64_t zero[HOST_WORDS];
    uint64_t w[HOST_WORDS];
    if (!blob) {
        memset(h, 0, sizeof *h);
        return;
    }
    unpack_words(blob, zero, HOST_WORDS, w);
    memcpy(h, w, sizeof w);
}
