/* What the sessions listing (sweep/sessions_out.h) and the sweep table (sweep/sweep_out.h)
 * share, so that neither includes the other: the format they are written in. */
#ifndef RUNMON_SWEEP_OUT_FORMAT_H
#define RUNMON_SWEEP_OUT_FORMAT_H

enum rm_sessions_format { RM_SESSIONS_TEXT, RM_SESSIONS_JSON, RM_SESSIONS_CSV };

#endif
