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
# dmon and pmon run with -o DT: a row's ts is in the second nvidia-smi printed it at (its Date
# and Time in the local zone), and dmon.csv keeps its columns (no Date, no Time).
expect_eq "New York: dmon.csv's columns (no Date or Time)" \
    "ts,gpu,pwr,gtemp,mtemp,sm,mem,enc,dec,jpg,ofa,mclk,pclk,fb,bar1,ccpm" "$(head -1 "$s/dmon.csv")"
check "New York: dmon rows" test "$(rows "$s/dmon.csv")" -ge 2
check "New York: apps rows" test "$(rows "$s/apps.csv")" -ge 2
for stream in dmon apps; do
    expect_eq "New York: no $stream row stamped with its arrival" 0 \
        "$(jq .collectors.$stream.arrival_ts_rows "$s/session.json")"
done
# The rows of one sample share its ts, and every ts is within the recording.
expect_eq "New York: dmon rows of one sample (2 GPUs) share their ts" "" \
    "$(tail -n +2 "$s/dmon.csv" | cut -d, -f1 | sort | uniq -c | awk '$1 != 2')"
expect_eq "New York: apps rows of one sample (2 GPUs) share their ts" "" \
    "$(tail -n +2 "$s/apps.csv" | cut -d, -f1 | sort | uniq -c | awk '$1 != 2')"
expect_eq "New York: dmon ts within the recording" "" "$(python3 - "$s" <<'PY'
import csv, json, sys
from datetime import datetime
j = json.load(open(sys.argv[1] + "/session.json"))
a = datetime.fromisoformat(j["started_at"]).timestamp() - 1
b = datetime.fromisoformat(j["ended_at"]).timestamp() + 0.01
for r in csv.DictReader(open(sys.argv[1] + "/dmon.csv")):
    t = datetime.fromisoformat(r["ts"]).timestamp()
    if not a <= t <= b:
        print(r["ts"])
PY
)"

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
expect_eq "wrong zone: one gpu_time_fallback event per stream (one stretch each)" "apps dmon gpu" \
    "$(jq -r 'select(.type=="event" and .event=="gpu_time_fallback") | .data.collector' "$s/runlog.jsonl" |
        sort | paste -sd' ')"
# dmon's and pmon's Date and Time are Tokyo's too: their rows fall back to the arrival.
for stream in dmon apps; do
    m=$(rows "$s/$stream.csv")
    check "wrong zone: $stream rows ($m)" test "$m" -ge 2
    expect_eq "wrong zone: every $stream row counted as stamped on arrival" "$m" \
        "$(jq .collectors.$stream.arrival_ts_rows "$s/session.json")"
done
d=$(jq -c 'select(.type=="event" and .event=="gpu_time_fallback" and .data.collector=="gpu") | .data' \
    "$s/runlog.jsonl")
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

# --- dmon's ts is when the burst was printed, to within half an interval -------------------
# A wrapper notes the time each dmon data line leaves nvidia-smi; runmon reads the pipe at its
# tick (every 0.2 s), and a sample's ts is the middle of the read window's overlap with the
# printed second: within 0.1 s (plus the wrapper's own delay) of that time.
mkdir -p "$T/note-bin"
cat >"$T/note-bin/nvidia-smi" <<SH
#!/bin/bash
[ "\$1" = dmon ] || exec "$FAKEBIN/nvidia-smi" "\$@"
"$FAKEBIN/nvidia-smi" "\$@" | while IFS= read -r l; do
    printf '%s\n' "\$l"
    case \$l in \#*) ;; *) date +%s.%N >>"$T/printed.txt" ;; esac
done
SH
chmod +x "$T/note-bin/nvidia-smi"
PATH="$T/note-bin:$PATH" FAKE_SMI_GPUS=2 "$RUNMON" record -q -o "$T/note" -i 0.2 -- sleep 4.5
expect_eq "printed: exit 0" 0 $?
s=$(session_dir "$T/note")
out=$(python3 - "$s/dmon.csv" "$T/printed.txt" <<'PY'
import csv, sys
from datetime import datetime
ts = sorted({datetime.fromisoformat(r["ts"]).timestamp() for r in csv.DictReader(open(sys.argv[1]))})
printed = [float(x) for x in open(sys.argv[2])]
worst = max(min(abs(t - p) for p in printed) for t in ts)
print(len(ts), round(worst, 3))
PY
)
check "printed: dmon samples (${out% *}, at least 3)" test "${out% *}" -ge 3
check "printed: each ts within 0.15 s of its burst's printing (worst ${out#* } s)" \
    awk -v w="${out#* }" 'BEGIN { exit !(w <= 0.15) }'
expect_eq "printed: none stamped with its arrival" 0 "$(jq .collectors.dmon.arrival_ts_rows "$s/session.json")"

done_testing
