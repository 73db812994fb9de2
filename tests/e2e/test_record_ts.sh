#!/usr/bin/env bash
# What a GPU row's ts is (issue 24): nvidia-smi's own `timestamp`, converted to UTC with the
# local zone's rules, unless it is further than max(3 intervals, 2 s) from the row's arrival
# (a wrong zone, a DST fold, a clock step): then the arrival time, counted in the session's
# health (session.json collectors.gpu.arrival_ts_rows) and summary.json's data_quality, and
# logged once per stretch (event gpu_time_fallback). The fake nvidia-smi replays real captures
# and stamps its rows with the time of its own zone (TZ), as nvidia-smi does.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures" PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
unset FAKE_SMI_VIRTUAL_START FAKE_SMI_OVERRIDE FAKE_SMI_FAULT_ONLY FAKE_SMI_HANG_AFTER

# Each row: the gap in ms between its ts and its timestamp read in zone $1, as python does
# (zoneinfo, fold=0), one number per row.
ts_minus_timestamp() {
    python3 - "$1" "$2" <<'PY'
import csv, sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo
zone = ZoneInfo(sys.argv[1])
for r in csv.DictReader(open(sys.argv[2])):
    ts = datetime.fromisoformat(r["ts"])
    local = datetime.strptime(r["timestamp"], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=zone)
    print(round((ts - local.astimezone(timezone.utc)).total_seconds() * 1000))
PY
}

# --- the same zone for both: ts is the sample's time, to the millisecond --------------------
TZ=America/New_York FAKE_SMI_GPUS=2 "$RUNMON" record -q -o "$T/ny" -i 0.2 -- sleep 2; rc=$?
expect_eq "New York: exit 0" 0 "$rc"
s=$(session_dir "$T/ny")
check "New York: gpu rows" test "$(rows "$s/gpu.csv")" -ge 10
expect_eq "New York: every ts is nvidia-smi's timestamp in UTC" "0" \
    "$(ts_minus_timestamp America/New_York "$s/gpu.csv" | sort -u | tr '\n' ' ' | sed 's/ $//')"
expect_eq "New York: no row stamped with its arrival" 0 \
    "$(jq .collectors.gpu.arrival_ts_rows "$s/session.json")"
expect_eq "New York: summary.json's data_quality says 0" 0 \
    "$(jq .data_quality.arrival_ts_rows "$s/summary.json")"
expect_eq "New York: no gpu_time_fallback event" 0 "$(count_event "$s" gpu_time_fallback)"
# dmon rows have no time column (runmon runs dmon without -o DT): their ts is the arrival.
check "New York: dmon rows keep their arrival ts" test "$(rows "$s/dmon.csv")" -ge 1

# --- a wrong zone: nvidia-smi's clock reads Tokyo time, runmon's New York -------------------
mkdir -p "$T/tokyo-bin"
printf '#!/bin/sh\nTZ=Asia/Tokyo exec "%s/nvidia-smi" "$@"\n' "$FAKEBIN" >"$T/tokyo-bin/nvidia-smi"
chmod +x "$T/tokyo-bin/nvidia-smi"
before=$(date +%s.%N)
TZ=America/New_York PATH="$T/tokyo-bin:$PATH" FAKE_SMI_GPUS=2 \
    "$RUNMON" record -q -o "$T/tokyo" -i 0.2 -- sleep 2; rc=$?
after=$(date +%s.%N)
expect_eq "wrong zone: exit 0" 0 "$rc"
s=$(session_dir "$T/tokyo")
n=$(rows "$s/gpu.csv")
check "wrong zone: gpu rows ($n)" test "$n" -ge 10
expect_eq "wrong zone: every row counted as stamped on arrival" "$n" \
    "$(jq .collectors.gpu.arrival_ts_rows "$s/session.json")"
expect_eq "wrong zone: summary.json's data_quality counts them" "$n" \
    "$(jq .data_quality.arrival_ts_rows "$s/summary.json")"
expect_eq "wrong zone: summary.json's collectors.gpu counts them" "$n" \
    "$(jq .collectors.gpu.arrival_ts_rows "$s/summary.json")"
expect_eq "wrong zone: every ts is within the recording (the arrival)" "" \
    "$(python3 - "$before" "$after" "$s/gpu.csv" <<'PY'
import csv, sys
from datetime import datetime
a, b = float(sys.argv[1]), float(sys.argv[2])
for r in csv.DictReader(open(sys.argv[3])):
    t = datetime.fromisoformat(r["ts"]).timestamp()
    if not a - 0.01 <= t <= b:
        print(r["ts"])
PY
)"
expect_eq "wrong zone: one gpu_time_fallback event (one stretch)" 1 \
    "$(count_event "$s" gpu_time_fallback)"
d=$(event_data "$s" gpu_time_fallback)
expect_eq "wrong zone: the event names the guard (3 x 0.2 s is under 2 s)" 2 \
    "$(jq .guard_s <<<"$d")"
# Tokyo is 14 h ahead of New York in November: the timestamp read as New York time is
# 14 h after the arrival.
expect_eq "wrong zone: the event gives the difference (+14 h, within a second)" true \
    "$(jq '.difference_s - 50400 | fabs < 1' <<<"$d")"
expect_eq "wrong zone: the session is otherwise healthy" healthy \
    "$(jq -r .collectors.gpu.health "$s/session.json")"

# --- old sessions (ts = arrival, no count) stay readable: the key is absent, not 0 ---------
old=$T/old
cp -r "$s" "$old"
jq 'del(.collectors.gpu.arrival_ts_rows)' "$s/session.json" >"$old/session.json"
rm -f "$old/summary.json"
"$RUNMON" summary --format json "$old" >"$T/old.json" 2>"$T/old.err"; rc=$?
expect_eq "old session: summary exits 0" 0 "$rc"
expect_eq "old session: no arrival_ts_rows in data_quality" false \
    "$(jq '.data_quality | has("arrival_ts_rows")' "$T/old.json")"
expect_eq "old session: the GPU rows are all read" "$n" \
    "$(jq '[.gpus[].samples] | add' "$T/old.json")"

done_testing
