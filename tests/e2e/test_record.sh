#!/usr/bin/env bash
# runmon record end to end: real /proc, real child processes, real signals, and the fake
# nvidia-smi (fixtures/nvidia-smi) replaying real captures with its fault modes.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export FAKE_SMI_CAPTURES="$FIXTURES/captures"

# --- a machine without a GPU: CPU only, exit 0 -------------------------------------------
out=$(PATH=$SYSPATH:$(dirname "$RUNMON") "$RUNMON" record -o "$T/nogpu" -i 0.2 -- sleep 3 2>"$T/nogpu.err"); rc=$?
expect_eq "no GPU: record exits 0" 0 "$rc"
s=$(session_dir "$T/nogpu")
check "no GPU: session folder made" test -d "$s"
n=$(rows "$s/cpu.csv")
# Counted loosely: a busy machine skips slots (never bursts), so at most the grid's 15 (+2
# for the edges), and a few at least.
check "no GPU: cpu rows on the 0.2 s grid over 3 s: 3..17 (got $n)" test "$n" -ge 3 -a "$n" -le 17
expect_eq "no GPU: cpu.csv header" "ts,cpu,usr_pct,nice_pct,sys_pct,iowait_pct,irq_pct,softirq_pct,steal_pct,idle_pct,mem_total_mb,mem_available_mb,mem_used_mb" "$(head -1 "$s/cpu.csv")"
expect_eq "no GPU: one collector_unavailable per GPU collector (gpu, dmon, apps)" 3 "$(count_event "$s" collector_unavailable)"
check "no GPU: no gpu.csv" test ! -e "$s/gpu.csv"
expect_eq "no GPU: session completed" completed "$(jq -r .status "$s/session.json")"
expect_eq "no GPU: exit code recorded" 0 "$(jq -r .exit_code "$s/session.json")"
check "no GPU: proc.csv has rows of the command's tree" test "$(rows "$s/proc.csv")" -ge 2
expect_match "no GPU: cpu rows are well formed" "^[0-9T:.+-]+,all,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+$" "$(sed -n 3p "$s/cpu.csv")"
expect_eq "no GPU: the run log is valid JSON throughout" "$(wc -l <"$s/runlog.jsonl")" "$(jq -c . "$s/runlog.jsonl" | wc -l)"

# --- eight fake GPUs ---------------------------------------------------------------------
export PATH="$FAKEBIN:$SYSPATH"
st=$T/state8; mkdir -p "$st"
FAKE_SMI_GPUS=8 FAKE_SMI_STATE_DIR=$st FAKE_SMI_DMON_MS=200 "$RUNMON" record -q -o "$T/eight" -i 0.2 -- sleep 2.5; rc=$?
expect_eq "8 GPUs: exit 0" 0 "$rc"
s=$(session_dir "$T/eight")
expect_eq "8 GPUs: inventory has 8 GPUs" 8 "$(jq '.gpus | length' "$s/session.json")"
expect_eq "8 GPUs: driver recorded" "590.48.01" "$(jq -r .driver_version "$s/session.json")"
# The default fields, then the power fields the driver offers (probed at the start, issue 22).
expect_eq "8 GPUs: gpu.csv names the asked fields after ts" "ts,timestamp,index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,temperature.gpu,clocks.current.sm,clocks.current.memory,clocks.max.sm,clocks_event_reasons.active,power.draw.instant,power.draw.average,enforced.power.limit" "$(head -1 "$s/gpu.csv")"
expect_eq "8 GPUs: every GPU index has rows" "0 1 2 3 4 5 6 7" "$(tail -n +2 "$s/gpu.csv" | cut -d, -f3 | sort -un | tr '\n' ' ' | sed 's/ $//')"
check "8 GPUs: at least 2 samples of each" test "$(rows "$s/gpu.csv")" -ge 16
expect_eq "8 GPUs: dmon.csv header is dmon's own names" "ts,gpu,pwr,gtemp,mtemp,sm,mem,enc,dec,jpg,ofa,mclk,pclk,fb,bar1,ccpm" "$(head -1 "$s/dmon.csv")"
check "8 GPUs: dmon rows" test "$(rows "$s/dmon.csv")" -ge 8
expect_eq "8 GPUs: no degraded collector" 0 "$(count_event "$s" collector_degraded)"
check "8 GPUs: no nvidia-smi left" no_fake_left "$st"
expect_eq "8 GPUs: every gpu row has 19 fields" "" "$(tail -n +2 "$s/gpu.csv" | awk -F, 'NF != 19' | head -1)"

# --- the command's environment and exit status --------------------------------------------
"$RUNMON" record -q -o "$T/env" -i 0.2 -- sh -c '"$0" log event from_inside n=1 && test -n "$RUNMON_SESSION_ID" && test -d "$RUNMON_SESSION_DIR"' "$RUNMON"; rc=$?
expect_eq "env: command sees RUNMON_RUNLOG/SESSION_ID/SESSION_DIR" 0 "$rc"
s=$(session_dir "$T/env")
expect_eq "env: the command's event is in the session's run log" 1 "$(count_event "$s" from_inside)"
"$RUNMON" record -q -o "$T/x3" -i 0.2 -- sh -c 'exit 3'; rc=$?
expect_eq "exit status of the command is passed through" 3 "$rc"
expect_eq "a failing command marks the session failed" failed "$(jq -r .status "$(session_dir "$T/x3")/session.json")"
"$RUNMON" record -q -o "$T/x9" -i 0.2 -- sh -c 'kill -9 $$'; rc=$?
expect_eq "a command killed by signal 9 gives 137" 137 "$rc"
"$RUNMON" record -q -o "$T/x127" -i 0.2 -- /nonexistent/cmd 2>"$T/x127.err"; rc=$?
expect_eq "a command that does not exist gives 127" 127 "$rc"
expect_match "... with a message naming it" "/nonexistent/cmd" "$(cat "$T/x127.err")"

# --- bad options ---------------------------------------------------------------------------
for bad in "-i 0.05" "-i abc" "--warning-threshold 99 --critical-threshold 50" "--dmon-metrics xyz" "--bogus" "--duration 5 -- true"; do
    # shellcheck disable=SC2086
    "$RUNMON" record -o "$T/bad" $bad >/dev/null 2>"$T/bad.err"; rc=$?
    expect_eq "bad option '$bad' exits 2" 2 "$rc"
done
check "bad options make no session" test ! -e "$T/bad"
"$RUNMON" record --help >"$T/help.txt"; rc=$?
expect_eq "record --help exits 0" 0 "$rc"
expect_match "record --help lists --interval" "--interval" "$(cat "$T/help.txt")"

done_testing
