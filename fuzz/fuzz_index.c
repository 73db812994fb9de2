/* libFuzzer: the sink index's line reader (sink/index_rec.c, no JSON tree) and the streaming
 * two-pass reader (rm_index_each) over a whole index.jsonl. The input is one index file. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sink/index.h"

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks every decoded word and raw element of the command, and checks the record's strings
 * are terminated inside their buffers (ASan catches reads past them). */
static int visit(void *ctx, const struct rm_index_rec *r)
{
    size_t *sum = ctx;
    *sum += strlen(r->session_id) + strlen(r->status) + strlen(r->host) + strlen(r->started_at) +
            strlen(r->ended_at);
    if (r->session_id[0] == '\0') abort(); /* a listed record always has an id */
    char word[64];
    size_t pos = 0;
    for (int i = 0; i < 4096 && rm_index_rec_word(r, &pos, word, sizeof word); i++)
        *sum += strlen(word);
    pos = 0;
    const char *v;
    size_t n;
    for (int i = 0; i < 4096 && rm_index_rec_element(r, &pos, &v, &n); i++) {
        if (v < r->line || v + n > r->line + r->len) abort(); /* an element lies in its line */
        *sum += n;
    }
    for (int k = 0; k < RM_REC_NRAW; k++)
        if (r->raw[k].p && (r->raw[k].p < r->line || r->raw[k].p + r->raw[k].n > r->line + r->len))
            abort();
    return 0;
}

static char dir[] = "/tmp/fuzz_index.XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t sum = 0;
    /* Each line on its own, from a copy exactly as long as the line (no NUL after it). */
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *copy = malloc(len ? len : 1);
        if (!copy) return 0;
        memcpy(copy, p, len);
        struct rm_index_rec r;
        if (rm_index_rec_parse(copy, len, &r)) visit(&sum, &r);
        free(copy);
        p += len + (nl != NULL);
    }
    /* The whole input as a sink's index.jsonl. */
    static int made;
    if (!made) {
        if (!mkdtemp(dir)) return 0;
        made = 1;
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    char err[512];
    rm_index_each(dir, visit, &sum, err, sizeof err);
    unlink(path);
    return (int)(sum & 0); /* keeps sum live */
}
