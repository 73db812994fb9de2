#!/usr/bin/env bash
# The per-process GPU collector (apps.csv) end to end: runmon record on the fake nvidia-smi,
# whose `pmon` replays the processes listed in $FAKE_SMI_APPS (the layout of the real H100
# capture in fixtures/captures/apps/). The workload writes its own pid into that file; a
# foreign process (started here, outside the recorded command) holds memory on GPU 0 too.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_PMON_MS=200
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH
APPS=$T/apps.txt
export FAKE_SMI_APPS=$APPS

# A foreign process: alive, not under runmon, "holding" 2000 MiB on GPU 0.
sleep 60 &
FOREIGN=$!
track "$FOREIGN"
echo "0 $FOREIGN C 2000 - - sleep" >"$APPS"

# The workload: its own pid (the recorded command, bash) holds 1000 MiB on GPU 0 during the
# phase "train"; before and after it holds nothing. A pid that does not exist in this pid
# namespace (as inside a container) holds 300 MiB on GPU 0: unknown, never guessed.
# pmon's rows are read at the recorder's tick and stamped with the middle of the read window
# (monitor/smi_time.h): a sample's ts is its own time to within a slot (0.2 s here), so the
# file changes half a second away from the phases' edges.
cat >"$T/work.sh" <<'SH'
sleep 0.8
echo "0 $$ C 1000 50 5 bash" >>"$FAKE_SMI_APPS"
echo "0 9999999 C 300 - - python3" >>"$FAKE_SMI_APPS"
sleep 0.5
"$RUNMON" phase train -- sleep 2
sleep 0.5
grep -v " $$ " "$FAKE_SMI_APPS" >"$FAKE_SMI_APPS.new"; mv "$FAKE_SMI_APPS.new" "$FAKE_SMI_APPS"
sleep 0.5
"$RUNMON" phase cooldown -- sleep 1
SH
RUNMON="$RUNMON" "$RUNMON" record -q -o "$T/s" -i 0.2 --prom-textfile "$T/live.prom" \
    -- bash "$T/work.sh" &
rec=$!
track "$rec"
check "prom: the workload's process is exported while it runs" \
    wait_for "grep -q '^runmon_gpu_process_memory_bytes{gpu=\"0\"' '$T/live.prom'" 8
cp "$T/live.prom" "$T/live-copy.prom"
wait "$rec"
expect_eq "record exits 0" 0 "$?"
s=$(session_dir "$T/s")
sj=$s/summary.json

expect_eq "apps.csv header" "ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload" "$(head -1 "$s/apps.csv")"
wl_pid=$(awk -F, '$5 == "bash" { print $4; exit }' "$s/apps.csv")
check "apps.csv: the workload's pid appears" test -n "$wl_pid"
expect_eq "apps.csv: the workload's rows are in_workload 1" "1" \
    "$(awk -F, -v p="$wl_pid" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
expect_eq "apps.csv: the foreign rows are in_workload 0" "0" \
    "$(awk -F, -v p="$FOREIGN" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
expect_eq "apps.csv: a pid of another namespace is unknown (empty)" "" \
    "$(awk -F, '$4 == 9999999 { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
check "apps.csv: GPU 1 has idle rows (no pid)" \
    test "$(awk -F, '$2 == 1 && $4 == ""' "$s/apps.csv" | wc -l)" -gt 3
expect_eq "apps.csv: uuid from the inventory" \
    "$(jq -r '.gpus[0].uuid' "$s/session.json")" "$(awk -F, 'NR == 2 { print $3 }' "$s/apps.csv")"
expect_eq "apps.csv: rows of one sample share their ts (GPU 0 and 1 alike)" 0 \
    "$(awk -F, 'NR > 1 { n[$1]++ } END { for (t in n) if (n[t] < 2) bad++; print bad + 0 }' "$s/apps.csv")"

# The figures the issue asks for.
expect_eq "gpus[0].workload_vram_mb.peak == N (1000)" 1000 "$(jq '.gpus[0].workload_vram_mb.peak' "$sj")"
expect_eq "gpus[0].other_vram_mb.peak == M (2000)" 2000 "$(jq '.gpus[0].other_vram_mb.peak' "$sj")"
expect_eq "gpus[0].unknown_vram_mb.peak: the other namespace's 300" 300 "$(jq '.gpus[0].unknown_vram_mb.peak' "$sj")"
expect_eq "phase train: workload_vram_mb.peak on GPU 0 == N" 1000 \
    "$(jq '.phases[] | select(.path == "train") | .gpus[] | select(.index == 0) | .workload_vram_mb.peak' "$sj")"
expect_eq "phase train: workload_vram_mb.mean on GPU 0 == N (held the whole phase)" 1000 \
    "$(jq '.phases[] | select(.path == "train") | .gpus[] | select(.index == 0) | .workload_vram_mb.mean' "$sj")"
expect_eq "phase cooldown: the workload held nothing" 0 \
    "$(jq '.phases[] | select(.path == "cooldown") | .gpus[] | select(.index == 0) | .workload_vram_mb.peak' "$sj")"
expect_eq "idle GPU 1: workload 0, other 0 (seen, empty)" "0 0" \
    "$(jq -r '.gpus[1] | "\(.workload_vram_mb.peak) \(.other_vram_mb.peak)"' "$sj")"
expect_eq "top level workload_peak_vram_mb" 1000 "$(jq '.workload_peak_vram_mb' "$sj")"
expect_eq "processes of GPU 0: pid, workload flag, peak" \
    "$FOREIGN:false:2000 $wl_pid:true:1000 9999999:null:300" \
    "$(jq -r '[.gpus[0].processes[] | "\(.pid):\(.in_workload):\(.peak_mb)"] | sort_by(.) | join(" ")' "$sj" |
        tr ' ' '\n' | sort -t: -k3,3nr | paste -sd' ')"
expect_eq "collector apps healthy" healthy "$(jq -r '.collectors.apps.health' "$sj")"
"$RUNMON" summary "$s" --format text >"$T/sum.txt"
check "text summary: a Processes table" grep -q '^Processes' "$T/sum.txt"
check "text summary: the workload's row says yes" grep -Eq "^  0 +$wl_pid +bash +yes +1000" "$T/sum.txt"
check "text summary: memory by phase" grep -Eq '^  train +1000 +1000.0 +-' "$T/sum.txt"

# Prometheus: only the workload's processes, with gpu, uuid, pid and process labels.
f=$(cat "$T/live-copy.prom")
expect_match "prom: workload process memory in bytes" \
    "runmon_gpu_process_memory_bytes\\{gpu=\"0\",uuid=\"GPU-[^\"]+\",pid=\"$wl_pid\",process=\"bash\",host=\"[^\"]+\",session=\"[^\"]+\"\\} 1048576000" "$f"
check "prom: the foreign process is not exported" test -z "$(grep "pid=\"$FOREIGN\"" "$T/live-copy.prom")"
if command -v promtool >/dev/null; then
    check "prom: promtool accepts the file" promtool check metrics <"$T/live-copy.prom"
fi

# --- a stalled collector is not an idle GPU ---------------------------------------------------
# pmon prints its header and then nothing (hangs): no rows, so no figure, and the collector
# is reported degraded; the idle GPU above had figures of 0.
FAKE_SMI_FAULT_ONLY=pmon FAKE_SMI_HANG_AFTER=0 "$RUNMON" record -q -o "$T/h" -i 0.2 -- sleep 6.5
expect_eq "stalled: record exits 0" 0 "$?"
s2=$(session_dir "$T/h")
expect_eq "stalled: no workload figure for GPU 0 (null, not 0)" null \
    "$(jq '.gpus[0].workload_vram_mb.peak // null' "$s2/summary.json")"
expect_eq "stalled: top-level workload_peak_vram_mb null" null "$(jq '.workload_peak_vram_mb' "$s2/summary.json")"
expect_eq "stalled: apps collector degraded" degraded "$(jq -r '.collectors.apps.health' "$s2/summary.json")"
expect_eq "stalled: a collector_degraded event names apps" apps \
    "$(jq -r 'select(.event == "collector_degraded") | .data.collector' "$s2/runlog.jsonl" | head -1)"

# --- --no-apps ----------------------------------------------------------------------------------
"$RUNMON" record -q -o "$T/n" -i 0.2 --no-apps -- sleep 0.5
s3=$(session_dir "$T/n")
check "--no-apps: no apps.csv" test ! -e "$s3/apps.csv"
expect_eq "--no-apps: collector disabled in session.json" disabled "$(jq -r '.collectors.apps.health' "$s3/session.json")"
expect_eq "--no-apps: no pmon was started" "" "$(grep -c pmon "$s3/runlog.jsonl" | grep -v '^0$')"

# --- no nvidia-smi at all: apps is unavailable like gpu and dmon ---------------------------------
PATH=$SYSPATH "$RUNMON" record -q -o "$T/x" -i 0.2 --nvidia-smi /nonexistent/nvidia-smi -- sleep 0.3
s4=$(session_dir "$T/x")
expect_eq "no nvidia-smi: gpu dmon apps unavailable" "apps dmon gpu" \
    "$(jq -r 'select(.event == "collector_unavailable") | .data.collector' "$s4/runlog.jsonl" | sort | paste -sd' ')"

kill "$FOREIGN" 2>/dev/null
done_testing
