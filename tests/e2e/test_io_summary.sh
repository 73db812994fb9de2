#!/usr/bin/env bash
# The summary's io.csv figures (issue 36): a share of time is at most 100 % and an interval
# too short to measure gives none (item 3); a session's sealed io.csv segments lose no
# interval where one ends (item 5).
. "$(dirname "$0")/lib.sh"

H=ts,kind,name,read_bytes,write_bytes,busy_ms,rx_bytes,tx_bytes,some_us,full_us,procs,unreadable

# ---- item 3: pressure shares --------------------------------------------------------------
# What a session whose command was not found wrote: two rows 9 ms apart, 9,529 us of cpu
# stall between them (the kernel's totals lag its clock, the times are whole ms). Before:
# "cpu 105.9/0.0".
printf '%s\n' "$H" \
    '2026-11-27T10:00:00.000+00:00,pressure,cpu,,,,,,1000000,0,,' \
    '2026-11-27T10:00:00.009+00:00,pressure,cpu,,,,,,1009529,0,,' >"$T/short.csv"
J=$("$RUNMON" summary --io-csv "$T/short.csv" --format json 2>/dev/null)
expect_eq "a 9 ms interval is too short to measure a share of: no cpu pressure figure" \
    '[null,null]' "$(jq -c '[.io.cpu_some_pct, .io.cpu_full_pct]' <<<"$J")"
expect_match "text: the share is '-', never above 100" 'pressure \(some/full % of the time\)  cpu -/-' \
    "$("$RUNMON" summary --io-csv "$T/short.csv" --format text 2>/dev/null)"
# A long interval whose stall reads a little over its time (whole-ms row times): 100 at most.
printf '%s\n' "$H" \
    '2026-11-27T10:00:00.000+00:00,pressure,io,,,,,,0,0,,' \
    '2026-11-27T10:00:01.000+00:00,pressure,io,,,,,,1000700,500000,,' \
    '2026-11-27T10:00:00.000+00:00,disk,vda,0,0,0,,,,,,' \
    '2026-11-27T10:00:01.000+00:00,disk,vda,0,0,1004,,,,,,' >"$T/over.csv"
J=$("$RUNMON" summary --io-csv "$T/over.csv" --format json 2>/dev/null)
expect_eq "1,000,700 us stalled in 1.000 s: io some 100 %, full 50 %" '[100,50]' \
    "$(jq -c '[.io.io_some_pct, .io.io_full_pct]' <<<"$J")"
expect_eq "a disk busy 1,004 ms in 1.000 s: busy_pct 100" 100 "$(jq '.io.disks[0].busy_pct' <<<"$J")"
# The short interval after a long one adds nothing; the long one's share stands.
printf '%s\n' "$H" \
    '2026-11-27T10:00:00.000+00:00,pressure,memory,,,,,,0,0,,' \
    '2026-11-27T10:00:01.000+00:00,pressure,memory,,,,,,250000,0,,' \
    '2026-11-27T10:00:01.009+00:00,pressure,memory,,,,,,259529,0,,' >"$T/tail.csv"
J=$("$RUNMON" summary --io-csv "$T/tail.csv" --format json 2>/dev/null)
expect_eq "a 9 ms tail adds nothing: memory some 25 % over the 1 s before it" 25 \
    "$(jq '.io.memory_some_pct' <<<"$J")"

# ---- item 5: sealed segments ---------------------------------------------------------------
# A session's io.csv sealed at 1 s: io-000001.csv ends with the row at 1 s, io.csv starts with
# the row at 2 s. The 4 MB read between them is one interval, as in one file (the report
# reads it so); before, the summary lost it: 2 MB in 2 s.
D=$T/seg
mkdir -p "$D"
printf '%s\n' "$H" \
    '2026-11-27T10:00:00.000+00:00,disk,vda,0,0,0,,,,,,' \
    '2026-11-27T10:00:01.000+00:00,disk,vda,1000000,0,100,,,,,,' >"$D/io-000001.csv"
printf '%s\n' "$H" \
    '2026-11-27T10:00:02.000+00:00,disk,vda,5000000,0,600,,,,,,' \
    '2026-11-27T10:00:03.000+00:00,disk,vda,6000000,0,700,,,,,,' >"$D/io.csv"
# Phases: p over [0.5, 2.5] s, q inside the boundary's interval [1.2, 1.8] s.
t0=1795773600 # 2026-11-27T10:00:00Z
phase() { printf '{"type":"phase_%s","pid":7,"t":%s,"name":"%s","path":"%s","depth":0%s}\n' "$@"; }
{
    phase enter $t0.5 p p ''
    phase exit $t0.9 p p ',"seconds":0.4,"status":"ok"'
    phase enter $((t0 + 1)).2 q q ''
    phase exit $((t0 + 1)).8 q q ',"seconds":0.6,"status":"ok"'
    phase enter $((t0 + 2)).1 p p ''
    phase exit $((t0 + 2)).5 p p ',"seconds":0.4,"status":"ok"'
} >"$D/runlog.jsonl"
J=$("$RUNMON" summary "$D" --format json 2>/dev/null)
expect_eq "segments: 6 MB read over 3 s, the interval across the seal included" '[2,6,3,23.3]' \
    "$(jq -c '[.io.disk_read_mb_s, .io.disks[0].read_mb, .io.disks[0].seconds, .io.disks[0].busy_pct]' <<<"$J")"
expect_eq "segments: each sample row counted once" 4 "$(jq '.io.rows' <<<"$J")"
expect_eq "segments: phase p (0.4 s at 1 MB/s, 0.4 s at 1 MB/s) and q (inside the seal's interval: 4 MB/s)" \
    '{"p":1,"q":4}' "$(jq -c '[.phases[] | {(.path): .io.disk_read_mb_s}] | add' <<<"$J")"

done_testing
