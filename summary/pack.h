/* Statistics packed while they wait: a phase's figures (per GPU, and the host's) take about
 * 1.5 KB each unpacked, most of it words still at their initial value (the utilization
 * histogram's 101 buckets, a missing metric's minimum and maximum), so thousands of phases
 * are held packed between the moments they change, and unpacked (exactly, bit for bit) to
 * change or to be read.
 *
 * The form: the struct's 64-bit words, each tagged with 2 bits (4 tags a byte, first): the
 * word of a freshly initialized struct, the word before it again, one byte, or eight bytes;
 * the bytes follow the tags. A phase with one sample packs into about 200 bytes.
 */
#ifndef RUNMON_SUMMARY_PACK_H
#define RUNMON_SUMMARY_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "summary/sample.h"
#include "summary/stats.h"

/* n GPU statistics packed into one malloc'd blob (NULL when n is 0). */
uint8_t *rm_pack_gpu_stats(const struct rm_gpu_stats *s, size_t n);
/* The n statistics of a blob rm_pack_gpu_stats made of n; blob NULL: n initialized ones. */
void rm_unpack_gpu_stats(const uint8_t *blob, struct rm_gpu_stats *s, size_t n);
/* The host's, the same way (blob NULL: zeroed). */
uint8_t *rm_pack_host_stats(const struct rm_host_stats *h);
void rm_unpack_host_stats(const uint8_t *blob, struct rm_host_stats *h);

#endif
