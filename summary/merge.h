/* Merging: the files of one source (query-gpu, dmon) into one table of GPUs and their
 * phases, in the order they were added, and the GPUs of both sources paired into the
 * summary's GPUs.
 */
#ifndef RUNMON_SUMMARY_MERGE_H
#define RUNMON_SUMMARY_MERGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "summary/fileagg.h"
#include "summary/runlog_read.h"
#include "summary/stats.h"

/* The files of one source (query-gpu or dmon) merged, in the order they were added. */
struct source {
    struct gpu_table t;
    struct rm_stat total_power;
    int64_t gap_ns;
    uint8_t **ph; /* [phase]: its phn[phase] slots' statistics, packed (pack.h) */
    size_t *phn;
    size_t nph;
    struct rm_gpu_stats *cur; /* one phase's, unpacked: phase curp (SIZE_MAX: none) */
    size_t ncur, curp;
    uint64_t files;
};

/* One GPU of the summary: its slot in the query-gpu source, in the dmon source, or both. */
struct final_gpu {
    int index;
    const struct gpu_slot *q, *d;
    size_t qi, di;
};

/* Adds f's GPUs and phases to src; rl (may be NULL) gives the phase windows that the spacing
 * from one file's last sample of a GPU to the next file's first is cut to. */
void rm_source_merge(struct source *src, struct file_agg *f, size_t nph,
                     const struct rm_phase_index *rl);
void rm_source_free(struct source *src);
/* Phase p's statistics of src's slots (src->phn[p] of them), unpacked into src->cur until
 * another phase is asked for; NULL when the phase has none. */
const struct rm_gpu_stats *rm_source_phase(struct source *src, size_t p);
/* Frees phase p's statistics (its row is made). */
void rm_source_drop_phase(struct source *src, size_t p);
/* The GPUs of both sources, paired by index and ordered by it (unknown indexes last).
 * Returns the count; *out is malloc'd. */
size_t rm_pair_gpus(json_t *session, const struct source *q, const struct source *d,
                    struct final_gpu **out);
/* A GPU's uuid, name and PCI bus id: from its slots, else from session.json. */
void rm_final_gpu_ident(json_t *session, const struct final_gpu *g, const char **uuid,
                        const char **name, const char **pci);

#endif
