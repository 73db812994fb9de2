/* What a file without a single data row is, from its first bytes: so that the summary says
 * "not a runmon or nvidia-smi file" of a binary or a page of prose, and keeps its advice on
 * nvidia-smi's layouts (field lists, error lines) for files that look like nvidia-smi's. */
#ifndef RUNMON_SUMMARY_SNIFF_H
#define RUNMON_SUMMARY_SNIFF_H

#include <stddef.h>

enum rm_sniff {
    RM_SNIFF_EMPTY, /* nothing, or only blanks */
    RM_SNIFF_NVSMI, /* text with a line like nvidia-smi's or runmon's (below) */
    RM_SNIFF_TEXT,  /* text, but no such line */
    RM_SNIFF_BINARY /* a NUL, bytes that are not UTF-8, or over 10 % control bytes */
};

/* A line looks like nvidia-smi's or runmon's when it starts with '#' (dmon's header), names
 * NVIDIA, NVML, GPU, CUDA or a driver (nvidia-smi's own errors), or has 3 or more fields
 * (split at commas, else at blanks) of which at least half are numbers ("12", "45 %",
 * "[N/A]", "N/A", a time) or field names ("utilization.gpu", "memory.used [MiB]", ts,
 * index, ...). buf need not end at a line or character boundary. */
enum rm_sniff rm_sniff_text(const char *buf, size_t len);

/* rm_sniff_text of the file's first 64 KiB; RM_SNIFF_EMPTY when it cannot be read. */
enum rm_sniff rm_sniff_file(const char *path);

#endif
