/* Time helpers shared by every runmon module, and the one home of reading times from text.
 *
 * Time is kept as integer nanoseconds: CLOCK_REALTIME since the Unix epoch for stamps that
 * land in files, CLOCK_MONOTONIC for schedules and durations (it never jumps). The text form
 * is the RunLog `ts`: UTC, ISO-8601, milliseconds, "+00:00" offset, byte-for-byte what
 * Python's datetime.now(tz=UTC).isoformat(timespec="milliseconds") prints.
 */
#ifndef RUNMON_RM_TIME_H
#define RUNMON_RM_TIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/memeq.h"

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

/* Times the readers of files accept: years 1970 to 2199, so nanosecond values and their
 * differences never overflow int64 (rm_parse_ts itself takes any four-digit year). */
#define RM_MAX_EPOCH_S 7000000000.0
/* rm_parse_ts of such a time only; -1 for any other. */
int rm_parse_ts_checked(const char *s, size_t len, int64_t *ns);

/* Local-time conversion cache (one per thread). */
struct rm_tzcache {
    int64_t key;
    int64_t offset_s;
};

/* Parses a time field: epoch seconds (a number above 1e8), or a date-time as rm_parse_ts
 * accepts it. A date-time without a UTC offset is taken as local time in the TZ of this
 * process when local is true (nvidia-smi's `timestamp`), as UTC otherwise. tz may be NULL.
 * Returns 0 or -1. */
int rm_parse_time_field(const char *s, size_t len, bool local, struct rm_tzcache *tz, int64_t *ns);

/* rm_parse_time_field for a column whose rows mostly repeat the previous time (the rows of
 * one sample) or move only its time of day: the same text is not parsed again, and a time of
 * the same date and zone moves by the time of day alone (a local time then takes the zone's
 * offset at its new time, so a DST change is crossed as the general parser crosses it). Same
 * results. */
struct rm_ts_cache {
    struct rm_tzcache tz;
    char last[48];
    size_t last_len;
    int64_t last_ns;
    int64_t last_tod_ns;   /* its time of day, else -1 */
    int64_t last_naive_ns; /* a local time's value before its zone's offset, as UTC */
    bool last_local;       /* it was read as a local time, and had no offset of its own */
};
void rm_ts_cache_init(struct rm_ts_cache *c);
int rm_ts_cache_parse_new(struct rm_ts_cache *c, const char *s, size_t len, bool local,
                          int64_t *ns);
/* Whether s is the text the cache parsed last (only a text that parsed is kept). */
static inline bool rm_ts_cache_holds(const struct rm_ts_cache *c, const char *s, size_t len)
{
    return len == c->last_len && len < sizeof c->last && rm_memeq(c->last, s, len);
}

/* Inline: the summary's GPU reader calls it once per row, at GB/s. */
static inline int rm_ts_cache_parse(struct rm_ts_cache *c, const char *s, size_t len, bool local,
                                    int64_t *ns)
{
    if (rm_ts_cache_holds(c, s, len)) {
        *ns = c->last_ns;
        return 0;
    }
    return rm_ts_cache_parse_new(c, s, len, local, ns);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (no time-zone database involved). */
int64_t rm_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Seconds as a double, rounded to the millisecond (the RunLog's "seconds" field). */
double rm_ns_to_seconds_ms(int64_t ns);

/* Sleeps until the absolute CLOCK_MONOTONIC deadline, resuming after signals.
 * Returns 0, or -1 if interrupted and *stop became non-zero. stop may be NULL. */
int rm_sleep_until_mono(int64_t deadline_ns, const atomic_int *stop);

#endif
