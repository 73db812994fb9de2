/* The smallest period of a sequence: how rows without identity or time are told apart by
 * the cycle of their GPU names (nvidia-smi prints every GPU in order in each sample). */
#ifndef RUNMON_SUMMARY_PERIOD_H
#define RUNMON_SUMMARY_PERIOD_H

#include <stddef.h>
#include <stdint.h>

/* The smallest p >= 1 with ids[i] == ids[i - p] for every i >= p (the last cycle may be
 * cut short); n for a sequence with no shorter period, 0 for an empty one. */
size_t rm_smallest_period(const uint32_t *ids, size_t n);

#endif
