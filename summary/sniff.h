/* What a file is, from its first bytes: so that the summary says "not a runmon or nvidia-smi
 * file" of a binary or a page of prose (a file the user named even where some lines parse as
 * rows; a session's file only when none does), keeps its advice on nvidia-smi's layouts
 * (field lists, error lines) for files that look like nvidia-smi's, and reads nvidia-smi's
 * per-process outputs as what their header names. */
#ifndef RUNMON_SUMMARY_SNIFF_H
#define RUNMON_SUMMARY_SNIFF_H

#include <stddef.h>

enum rm_sniff {
    RM_SNIFF_EMPTY, /* nothing, or only blanks */
    RM_SNIFF_NVSMI, /* text with a line like nvidia-smi's or runmon's (below) */
    RM_SNIFF_TEXT,  /* text, but no such line */
    RM_SNIFF_BINARY /* a NUL, bytes that are not UTF-8, or over 10 % control bytes */
};

/* Judged by the first 5 lines that are not blank (nvidia-smi's and runmon's files are rows
 * of one shape from the start; a page of prose can hold a line of numbers anywhere). A line
 * looks like nvidia-smi's or runmon's when it is dmon's or pmon's header or units line
 * ("# gpu ...", "#Date Time gpu ...", "# Idx ..."; not any '#' line: a Markdown heading is
 * not one), holds nvidia-smi's banner ("NVIDIA-SMI", "NVSMI LOG"), is the first line, starts
 * with a letter and names NVIDIA, NVML, GPU, CUDA, a driver or device (nvidia-smi's own
 * one-line errors), or is a row: 3 or more fields (split at commas, else at blanks, then with
 * a number first) of which at least half are numbers ("12", "45 %", "[N/A]", "N/A", a time)
 * or field names ("utilization.gpu", "memory.used [MiB]", ts, index, ...), or fewer fields
 * that all are. buf need not end at a line or character boundary. */
enum rm_sniff rm_sniff_text(const char *buf, size_t len);

/* rm_sniff_text of the file's first 64 KiB; RM_SNIFF_EMPTY when it cannot be read. */
enum rm_sniff rm_sniff_file(const char *path);

/* The kind of nvidia-smi's per-process output that buf's first header line names, among its
 * first lines: RM_INPUT_PMON_TEXT for pmon's "# gpu pid type ...", RM_INPUT_COMPUTE_APPS or
 * RM_INPUT_ACCOUNTED_APPS for those queries' CSV header (summary/smi_apps.h); -1 when the
 * first header is another (dmon's, --query-gpu's, runmon's) or there is none. */
int rm_sniff_apps_kind(const char *buf, size_t len);

/* A file the user named: rm_sniff_text of its first 64 KiB, and in *kind the kind
 * rm_sniff_apps_kind finds (left as it was when none). Only a regular file is read (a pipe
 * keeps its bytes): anything else is RM_SNIFF_EMPTY. */
enum rm_sniff rm_sniff_named_file(const char *path, int *kind);

#endif
