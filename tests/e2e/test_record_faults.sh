#!/usr/bin/env bash
# Every way nvidia-smi misbehaves, and every way runmon is stopped: the fake nvidia-smi's
# fault modes must each produce exactly the documented events and no invented rows, and no
# nvidia-smi may outlive runmon.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_DMON_MS=200

# --- the gpu collector's child exits once: degraded, restarted after 1 s, recovered -------
st=$T/s_exit; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_FAULT_TIMES=1 FAKE_SMI_EXIT_AFTER=3 \
    "$RUNMON" record -q -o "$T/exit" -i 0.2 --duration 3
s=$(session_dir "$T/exit")
expect_eq "exit: one collector_degraded" 1 "$(count_event "$s" collector_degraded)"
d=$(event_data "$s" collector_degraded)
expect_eq "exit: degraded names the gpu collector" gpu "$(jq -r .collector <<<"$d")"
expect_match "exit: reason says how it ended" "exited with status 1" "$(jq -r .reason <<<"$d")"
expect_eq "exit: first retry after 1 s" 1 "$(jq -r .retry_in_s <<<"$d")"
expect_eq "exit: consecutive failures counted" 1 "$(jq -r .consecutive_failures <<<"$d")"
expect_eq "exit: one collector_recovered" 1 "$(count_event "$s" collector_recovered)"
check "exit: recovered says how long it was down" test "$(event_data "$s" collector_recovered | jq '.down_s >= 0.9')" = true
expect_eq "exit: health back to healthy" healthy "$(jq -r .collectors.gpu.health "$s/session.json")"
expect_eq "exit: failure event counted" 1 "$(jq -r .collectors.gpu.failure_event_count "$s/session.json")"
check "exit: rows after the restart (more than the 3 before it)" test "$(rows "$s/gpu.csv")" -gt 3
check "exit: no nvidia-smi left" no_fake_left "$st"

# --- NVML error: the child's own words are the reason, no rows written -------------------
st=$T/s_nvml; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st FAKE_SMI_NVML_ERROR=1 FAKE_SMI_FAULT_ONLY=gpu,dmon \
    "$RUNMON" record -q -o "$T/nvml" -i 0.2 --duration 2.5
s=$(session_dir "$T/nvml")
expect_match "nvml: degraded reason quotes nvidia-smi" "Failed to initialize NVML: Driver/library version mismatch" "$(event_data "$s" collector_degraded | head -1 | jq -r .reason)"
expect_match "nvml: and its exit status 18" "status 18" "$(event_data "$s" collector_degraded | head -1 | jq -r .reason)"
check "nvml: backoff doubles (1 s then 2 s)" test "$(event_data "$s" collector_degraded | jq -s '[.[] | select(.collector=="gpu") | .retry_in_s] | .[0:2] == [1,2]')" = true
expect_eq "nvml: no gpu rows invented" 0 "$(rows "$s/gpu.csv")"
expect_eq "nvml: no dmon rows invented" 0 "$(rows "$s/dmon.csv")"
expect_eq "nvml: gpu health degraded at the end" degraded "$(jq -r .collectors.gpu.health "$s/session.json")"
check "nvml: no nvidia-smi left" no_fake_left "$st"

# --- no libnvidia-ml.so: two lines, exit 12; the reason quotes the first, which names it ----
st=$T/s_nonvml; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st FAKE_SMI_NO_NVML=1 FAKE_SMI_FAULT_ONLY=gpu \
    "$RUNMON" record -q -o "$T/nonvml" -i 0.2 --duration 1.5
s=$(session_dir "$T/nonvml")
r=$(event_data "$s" collector_degraded | jq -r 'select(.collector=="gpu") | .reason' | head -1)
expect_match "no nvml: degraded reason quotes the first line" \
    "^nvidia-smi exited: NVIDIA-SMI couldn't find libnvidia-ml.so library in your system\. Please make sure" "$r"
expect_match "no nvml: and its exit status 12" "status 12" "$r"
expect_eq "no nvml: not the advice line after it" "" "$(grep -o 'Please also try' <<<"$r")"
expect_match "no nvml: session.json's last_error quotes the first line" \
    "^nvidia-smi exited: NVIDIA-SMI couldn't find libnvidia-ml.so library" "$(jq -r .collectors.gpu.last_error "$s/session.json")"
check "no nvml: no nvidia-smi left" no_fake_left "$st"

# --- hung nvidia-smi that ignores SIGTERM: stale after 5 s, killed, restarted -------------
st=$T/s_hang; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_FAULT_TIMES=1 FAKE_SMI_HANG_AFTER=2 \
    FAKE_SMI_IGNORE_TERM=1 "$RUNMON" record -q -o "$T/hang" -i 0.2 --duration 8
s=$(session_dir "$T/hang")
expect_eq "hang: one collector_degraded" 1 "$(count_event "$s" collector_degraded)"
expect_match "hang: reason is the silence" "no valid row for [5-6]\.[0-9] s" "$(event_data "$s" collector_degraded | jq -r .reason)"
expect_eq "hang: recovered after the restart" 1 "$(count_event "$s" collector_recovered)"
check "hang: the TERM-ignoring child was killed" no_fake_left "$st"

# --- event notices and garbage between rows: counted and logged, never data --------------
st=$T/s_noise; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st FAKE_SMI_NOISE=1 FAKE_SMI_GPUS=2 "$RUNMON" record -q -o "$T/noise" -i 0.2 --duration 2
s=$(session_dir "$T/noise")
check "noise: nonconforming_output events recorded" test "$(count_event "$s" nonconforming_output)" -ge 3
expect_match "noise: the Xid text is kept" "Xid" "$(event_data "$s" nonconforming_output | jq -r .text | tr '\n' ' ')"
expect_eq "noise: every gpu row has the asked 19 fields (with the probed clock and power fields)" "" "$(tail -n +2 "$s/gpu.csv" | awk -F, 'NF != 19' | head -1)"
expect_eq "noise: every dmon row has 16 fields" "" "$(tail -n +2 "$s/dmon.csv" | awk -F, 'NF != 16' | head -1)"
expect_eq "noise: no degraded collector" 0 "$(count_event "$s" collector_degraded)"
check "noise: non-data lines counted in session.json" test "$(jq .collectors.gpu.nonconforming_lines "$s/session.json")" -ge 2

# --- slow start within the staleness limit: no fault ---------------------------------------
FAKE_SMI_START_DELAY_MS=1500 "$RUNMON" record -q -o "$T/slow" -i 0.2 --duration 3.5
s=$(session_dir "$T/slow")
expect_eq "slow start: not degraded" 0 "$(count_event "$s" collector_degraded)"
check "slow start: rows arrive" test "$(rows "$s/gpu.csv")" -ge 3

# --- memory thresholds: one event per crossing, re-armed when use falls -------------------
FAKE_SMI_OVERRIDE="memory.used=100,950,960,990,100,100,950;memory.total=1000" \
    "$RUNMON" record -q -o "$T/thr" -i 0.2 --duration 3 --warning-threshold 90 --critical-threshold 98
s=$(session_dir "$T/thr")
w=$(count_event "$s" warning); c=$(count_event "$s" critical)
# The crossings in the rows recorded (however many samples the machine managed): up through
# 90 % (950 after 100; 960 stays above) and through 98 % (990).
read -r xw xc < <(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) k[$i] = i; next}
    {u = $k["memory.used"]; if (u == 950 && prev == 100) w++; if (u == 990) c++; prev = u}
    END {print w + 0, c + 0}' "$s/gpu.csv")
check "thresholds: the rows hold crossings ($xw up through 90 %, $xc through 98 %)" test "$xw" -ge 1 -a "$xc" -ge 1
expect_eq "thresholds: warnings once per crossing" "$xw" "$w"
expect_eq "thresholds: critical once per crossing" "$xc" "$c"
expect_eq "thresholds: event carries GPU and use" "0 95" "$(event_data "$s" warning | head -1 | jq -r '"\(.gpu) \(.pct)"')"
# Each event names its sample by the row's own ts (logged up to 0.5 s later at -i 0.2): the
# rows that crossed 90 %, in order.
expect_eq "thresholds: each warning's sample_ts is its row's ts" \
    "$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) k[$i] = i; next}
        {u = $k["memory.used"]; if (u == 950 && prev == 100) print $1; prev = u}' "$s/gpu.csv")" \
    "$(event_data "$s" warning | jq -r .sample_ts)"
expect_eq "thresholds: summary.json's alerts keep it" \
    "$(event_data "$s" warning | head -1 | jq -r .sample_ts)" \
    "$(jq -r '[.alerts.events[] | select(.level == "warning")][0].sample_ts' "$s/summary.json")"

# --- kill -9 of runmon: no nvidia-smi left, the command keeps running ----------------------
st=$T/s_kill; mkdir -p "$st"
marker=$T/alive
FAKE_SMI_STATE_DIR=$st "$RUNMON" record -q -o "$T/kill" -i 0.2 -- sh -c "sleep 4; touch $marker" &
rpid=$!
track "$rpid"
wait_for "test \$(cat $T/kill/*/gpu.csv 2>/dev/null | wc -l) -ge 3" 10
kill -9 "$rpid"
wait "$rpid" 2>/dev/null
check "kill -9: no nvidia-smi left behind" wait_for "no_fake_left '$st' >/dev/null" 20
no_fake_left "$st" >/dev/null || no_fake_left "$st" # says which, when it failed
check "kill -9: the command survives and finishes" wait_for "test -e $marker" 20
s=$(session_dir "$T/kill")
expect_eq "kill -9: the files written so far stay readable" "$(wc -l <"$s/runlog.jsonl")" "$(jq -c . "$s/runlog.jsonl" | wc -l)"

# --- SIGINT without a command: clean stop, everything flushed -------------------------------
st=$T/s_int; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st "$RUNMON" record -q -o "$T/int" -i 0.2 &
rpid=$!
track "$rpid"
wait_for "test \$(cat $T/int/*/cpu.csv 2>/dev/null | wc -l) -ge 4" 10
kill -INT "$rpid"
wait "$rpid"; rc=$?
expect_eq "SIGINT: exit 0" 0 "$rc"
s=$(session_dir "$T/int")
expect_eq "SIGINT: session completed" completed "$(jq -r .status "$s/session.json")"
expect_eq "SIGINT: session_end is the last event" session_end "$(jq -r 'select(.type=="event") | .event' "$s/runlog.jsonl" | tail -1)"
check "SIGINT: no nvidia-smi left" no_fake_left "$st"
check "SIGINT: cpu.csv ends with a whole row" test "$(tail -c 1 "$s/cpu.csv" | od -An -c | tr -d ' ')" = '\n'

# --- SIGTERM to runmon is passed on to the command -----------------------------------------
"$RUNMON" record -q -o "$T/term" -i 0.2 -- sh -c 'trap "exit 7" TERM; touch "$0"; while :; do sleep 0.1; done' "$T/trapped" &
rpid=$!
track "$rpid"
wait_for "test -e '$T/trapped'" 30 # the command runs, its trap set
kill -TERM "$rpid"
wait "$rpid"; rc=$?
expect_eq "SIGTERM: forwarded, the command's status comes back" 7 "$rc"

done_testing
