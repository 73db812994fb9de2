/* Clock throttle ("event") reasons: the ONE table of their names, by bit of nvidia-smi's
 * clocks_event_reasons.active mask (NVML's nvmlClocksEventReason* values), and how gpu.csv
 * spells them. Columns are clocks_event_reasons.<name> (before driver 535:
 * clocks_throttle_reasons.<name>), each "Active" or "Not Active", and the mask
 * clocks_event_reasons.active ("0x0000000000000004"). The report draws them, the summary
 * counts them per phase.
 */
#ifndef RUNMON_MODEL_THROTTLE_H
#define RUNMON_MODEL_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>

#define RM_THR_REASONS 9
#define RM_THR_MASK_COLUMN (-2) /* rm_thr_column: the column is the bit mask */

enum rm_thr_reason {
    RM_THR_GPU_IDLE,
    RM_THR_APP_CLOCKS,
    RM_THR_SW_POWER_CAP,
    RM_THR_HW_SLOWDOWN,
    RM_THR_SYNC_BOOST,
    RM_THR_SW_THERMAL,
    RM_THR_HW_THERMAL,
    RM_THR_HW_POWER_BRAKE,
    RM_THR_DISPLAY_CLOCK,
};

/* The reason's name as nvidia-smi spells it after the prefix ("sw_power_cap"), "?" past the
 * table. */
const char *rm_thr_name(int k);

/* What a --query-gpu column name (unit suffix already cut; s need not be terminated) holds:
 * a reason's index, RM_THR_MASK_COLUMN for the ".active" mask, or -1 (not a throttle
 * column, or one of the others: ".supported", counters). */
int rm_thr_column(const char *s, size_t len);

/* One reason field: 1 for "Active", 0 for "Not Active", -1 otherwise ("[N/A]", empty: not
 * known). Leading blanks are skipped. */
int rm_thr_flag(const char *s, size_t len);

/* The mask field's reasons (bits past the table dropped) in *mask; false when it is not a
 * hex number ("[N/A]", "[Not Supported]", empty). */
bool rm_thr_mask(const char *s, size_t len, unsigned *mask);

#endif
