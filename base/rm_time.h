/* Time helpers shared by every runmon module.
 *
 * Time is kept as integer nanoseconds: CLOCK_REALTIME since the Unix epoch for stamps that
 * land in files, CLOCK_MONOTONIC for schedules and durations (it never jumps). The text form
 * is the RunLog `ts`: UTC, ISO-8601, milliseconds, "+00:00" offset, byte-for-byte what
 * Python's datetime.now(tz=UTC).isoformat(timespec="milliseconds") prints.
 */
#ifndef RUNMON_RM_TIME_H
#define RUNMON_RM_TIME_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RM_NS_PER_SEC 1000000000LL
#define RM_NS_PER_MS 1000000LL
/* "2026-11-21T10:15:02.113+00:00" is 29 characters; room for the NUL and a 5-digit year. */
#define RM_TS_BUFSZ 40

int64_t rm_now_realtime_ns(void);
int64_t rm_now_monotonic_ns(void);

/* Writes the `ts` text of epoch_ns into buf (RM_TS_BUFSZ bytes), truncating to the
 * millisecond as Python does. Returns the length written. */
size_t rm_format_ts(int64_t epoch_ns, char *buf);

/* Parses an ISO-8601 / nvidia-smi style date-time of exactly len bytes into nanoseconds since
 * the epoch. Accepted: "YYYY-MM-DDTHH:MM:SS[.frac][Z|+HH:MM|-HH:MM]", with ' ' instead of
 * 'T', and '/' instead of '-' in the date (nvidia-smi's "2026/11/21 10:15:02.113").
 * Without an offset the time is taken as UTC. Returns 0 on success, -1 if the text is not a
 * valid date-time (out-of-range fields included). */
int rm_parse_ts(const char *s, size_t len, int64_t *epoch_ns);

/* Days since 1970-01-01 of a proleptic Gregorian date (no time-zone database involved). */
int64_t rm_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Seconds as a double, rounded to the millisecond (the RunLog's "seconds" field). */
double rm_ns_to_seconds_ms(int64_t ns);

/* Sleeps until the absolute CLOCK_MONOTONIC deadline, resuming after signals.
 * Returns 0, or -1 if interrupted and *stop became non-zero. stop may be NULL. */
int rm_sleep_until_mono(int64_t deadline_ns, const atomic_int *stop);

#endif
