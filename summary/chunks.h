/* One file in chunks. A large GPU file is cut into chunks of a fixed size
 * (RUNMON_SUMMARY_CHUNK_BYTES, default 8 MiB), each moved on to the first row of a new sample time,
 * so that no sample group is cut (a new time always starts one); rows without time are cut where
 * the GPU of the file's first row comes again, checked after the scan (the chunk before must end
 * in a group that GPU is in, as the whole file would). Every chunk after the first starts
 * with the parser's state after the file's first data row (its column map); the chunks are scanned
 * in parallel and folded in order like consecutive files of one source: GPU statistics merged with
 * the spacing across the boundary bridged (energy, gaps), phase points folded and the boundary
 * spacing cut to the phases' windows. The grid depends only on the file, never on the thread
 * count, so every --threads gives the same figures. When a chunk's assumption turns out wrong
 * (the column map changed inside the file, a quoted field, a line over a limit), the file is
 * scanned again whole, in one piece. */

#ifndef RUNMON_SUMMARY_CHUNKS_H
#define RUNMON_SUMMARY_CHUNKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "summary/fileagg.h"

/* The chunk size: RUNMON_SUMMARY_CHUNK_BYTES, else 8 MiB; 0: never in chunks. */
uint64_t rm_chunk_bytes(void);
/* Whether files of kind k are read in chunks (the GPU files). */
bool rm_chunkable(enum rm_input_kind k);
/* The chunks of f (prepared by rm_scan_prepare), or 0 when f is read whole. *parts is
 * malloc'd; its first chunk starts at 0, the last ends at the end of the file. */
size_t rm_plan_chunks(struct file_agg *f, uint64_t chunk, struct file_agg ***parts);
/* Scans one chunk (any thread). */
void rm_scan_part(struct file_agg *p, _Atomic uint64_t *progress);
/* After every chunk of f was scanned: f's figures folded from them in order, or f scanned
 * again whole when one of them could not stand for its stretch of the file. The parts are
 * freed. */
void rm_finish_parts(struct file_agg *f, struct file_agg **parts, size_t n, int64_t interval_ns,
                     _Atomic uint64_t *progress);

#endif
