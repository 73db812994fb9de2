#!/usr/bin/env bash
# Issue 25: a gap is judged against each stream's own period. dmon's rows come once a second
# (nvidia-smi dmon -d takes whole seconds) while the gpu query and the cpu sampler run at
# -i 0.2: a short session at 0.2 s has no gaps, and a real hole (the fake nvidia-smi stopped
# for 5 s with SIGSTOP) is still one, in the gpu and the dmon files.
. "$(dirname "$0")/lib.sh"

export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_APPS RUNMON_RUNLOG \
    RUNMON_PHASE_PATH
fq() { jq -r --arg f "$2" ".data_quality.files[] | select(.path | endswith(\"/\" + \$f)) | $3" "$1"; }

# (1) a demo-like session: 2.8 s at 0.2 s.
"$RUNMON" record -q -o "$T/demo" -i 0.2 -- sleep 2.8 >/dev/null
expect_eq "a 2.8 s session at -i 0.2 records" 0 "$?"
"$RUNMON" summary --format json "$T/demo" >"$T/demo.json" 2>/dev/null
check "its dmon.csv has rows a second apart" test "$(rows "$(session_dir "$T/demo")/dmon.csv")" -ge 4
expect_eq "no gaps in all" 0 "$(jq .data_quality.gaps.count "$T/demo.json")"
expect_eq "dmon.csv: judged against its 1 s period" "1 0" \
    "$(fq "$T/demo.json" dmon.csv '"\(.interval_s) \(.gaps.count)"')"
expect_eq "gpu.csv: against the 0.2 s query interval" "0.2 0" \
    "$(fq "$T/demo.json" gpu.csv '"\(.interval_s) \(.gaps.count)"')"
expect_eq "cpu.csv: against the 0.2 s interval" "0.2 0" \
    "$(fq "$T/demo.json" cpu.csv '"\(.interval_s) \(.gaps.count)"')"
expect_eq "the recorder's own summary.json agrees" 0 \
    "$(jq .data_quality.gaps.count "$(session_dir "$T/demo")/summary.json")"
expect_eq "session.json's dmon_interval_s" 1 \
    "$(jq .dmon_interval_s "$(session_dir "$T/demo")/session.json")"
"$RUNMON" summary --format text "$T/demo" >"$T/demo.txt" 2>/dev/null
check "text: gaps 0" grep -q "gaps 0 (0.0 s)" "$T/demo.txt"

# (2) a real hole: every fake nvidia-smi stopped for 5 s (over dmon's 3 s threshold).
mkdir -p "$T/state"
FAKE_SMI_STATE_DIR="$T/state" "$RUNMON" record -q -o "$T/hole" -i 0.2 -- sleep 10 >/dev/null &
rec=$!
track "$rec"
check "the recording's dmon rows come" wait_for \
    "[ \"\$(rows '$T/hole/latest/dmon.csv')\" -ge 4 ] && grep -q ' gpu$' '$T/state/pids' && grep -q ' dmon$' '$T/state/pids'" 15
smi=$(awk '$2 == "gpu" || $2 == "dmon" { print $1 }' "$T/state/pids")
for p in $smi; do kill -STOP "$p" 2>/dev/null; done
sleep 5
for p in $smi; do kill -CONT "$p" 2>/dev/null; done
wait "$rec"
expect_eq "the recording ends" 0 "$?"
"$RUNMON" summary --format json "$T/hole" >"$T/hole.json" 2>/dev/null
check "dmon.csv: the hole is a gap (one per GPU)" test "$(fq "$T/hole.json" dmon.csv .gaps.count)" -ge 2
check "dmon.csv: of about 4 s or more per GPU" \
    awk -v s="$(fq "$T/hole.json" dmon.csv .gaps.seconds)" 'BEGIN { exit !(s >= 8) }'
check "gpu.csv: the hole is a gap" test "$(fq "$T/hole.json" gpu.csv .gaps.count)" -ge 2
check "cpu.csv: the host's sampler went on (no gap)" test "$(fq "$T/hole.json" cpu.csv .gaps.count)" -eq 0

done_testing
