/* The time of dmon's and pmon's samples (issue 24). runmon runs both with `-o DT`, so each
 * row starts with the local date and time (whole seconds) nvidia-smi printed it at, and their
 * pipes are read at the recorder's tick rather than when they become readable: one read may
 * then hold two bursts, and a burst's rows arrive up to a slot late.
 *
 * A burst (one sample) is the rows of one Date+Time; within one second (a period under a
 * second, or jitter) a row whose GPU index is below the previous row's, or whose key (GPU,
 * and pid for pmon) the sample already has, starts the next one. A sample's ts is the middle
 * of the overlap of [DT, DT + 1 s) with the read window (when the pipe was last seen empty,
 * this read]: the burst was printed in both. No overlap (nvidia-smi's clock or zone is off):
 * DT + 0.5 s. Then
 * the guard of the query's rows (monitor/policy.h): further than max(3 periods, 2 s) from
 * the arrival, the arrival time instead, counted in the session's arrival_ts_rows for the
 * stream and logged once per stretch (event gpu_time_fallback). Two samples never share a
 * ts: a later one is at least 1 ms after the one before. Without Date and Time columns (an
 * nvidia-smi that ignored -o DT), rows keep their arrival time as before. */
#ifndef RUNMON_MONITOR_SMI_TIME_H
#define RUNMON_MONITOR_SMI_TIME_H

#include <stdint.h>

#include "base/rm_time.h"
#include "model/dmon_text.h"
#include "monitor/port.h"

#define RM_SMI_TIME_KEYS 64

/* Rows stamped with their arrival instead of nvidia-smi's own time (the guard above, shared by
 * the query's rows and dmon's and pmon's samples): every one is counted in the session's
 * arrival_ts_rows for its stream, and the first of each stretch is logged as a
 * gpu_time_fallback event, at most RM_TS_FALLBACK_LOG_MAX a session and stream. */
#define RM_TS_FALLBACK_LOG_MAX 10

struct rm_ts_fallback {
    const struct rm_port *port;
    int stream;
    int64_t guard_ns; /* max(3 periods, 2 s): monitor/policy.h */
    uint64_t rows;
    int in_stretch; /* the last row fell back (the caller clears it at one that did not) */
    int events;
};

void rm_ts_fallback_init(struct rm_ts_fallback *f, const struct rm_port *port, int stream,
                         int64_t period_ns);
/* A row whose own time is not used: counted, and logged when it starts a stretch. stamp is
 * the time as nvidia-smi printed it; sample_ns its value, when parsed. */
void rm_ts_fallback_row(struct rm_ts_fallback *f, const char *stamp, size_t stamp_len,
                        int64_t sample_ns, int64_t arrival_ns, int parsed);
/* A row of the same sample: counted only. */
void rm_ts_fallback_count(struct rm_ts_fallback *f);

struct rm_smi_time {
    const struct rm_port *port;
    struct rm_ts_fallback fallback; /* counted for dmon's or apps' stream */
    struct rm_ts_cache cache;
    int col_date, col_time, col_gpu, col_pid; /* in the last header; -1: none */
    /* The sample being received. */
    char dt[32];
    size_t dt_len;
    int64_t sample_ts;
    long last_gpu;
    uint64_t keys[RM_SMI_TIME_KEYS];
    int nkeys;
    int in_sample;
    int fell_back; /* its ts is the arrival of its first row */
    /* The read window: (read_from_ns, a row's arrival]. */
    int64_t read_from_ns;
};

/* period_ns: the child's -d (the guard is max(3 x period, 2 s)). */
void rm_smi_time_init(struct rm_smi_time *t, const struct rm_port *port, int stream,
                      int64_t period_ns);
/* A header line: finds its Date, Time, gpu and pid columns. */
void rm_smi_time_header(struct rm_smi_time *t, const struct rm_dmon_line *hdr);
/* Whether the last header had Date and Time (rows then get rm_smi_time_row's ts). */
int rm_smi_time_dated(const struct rm_smi_time *t);
/* A data row that arrived at arrival_ns: its sample's ts in *ts. Returns 1 when the row
 * starts a new sample, 0 when it belongs to the current one. */
int rm_smi_time_row(struct rm_smi_time *t, const struct rm_dmon_line *row, int64_t arrival_ns,
                    int64_t *ts);
/* Before each read of the pipe: what it returns was printed after since_real (the
 * collector's on_window). */
void rm_smi_time_window(struct rm_smi_time *t, int64_t since_real);

#endif
