#!/usr/bin/env bash
# The README's recipes, run as written (paths aside): tail -F of a live run log through jq,
# a jq one-liner over summary.json, and a sweep recorded as one session with a table per
# configuration.
. "$(dirname "$0")/lib.sh"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
mkdir -p "$T/bin" && ln -s "$RUNMON" "$T/bin/runmon"
export PATH="$T/bin:$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
cd "$T"

# A sweep recorded as one session; tail -F follows the live run log through `latest`.
runmon record -q -o sweep -i 0.2 -- sh -c 'sleep 0.5; for bs in 32 64; do runmon phase "bs$bs" -- sleep 0.6; done' &
rpid=$!; track "$rpid"
wait_for "test -e sweep/latest/runlog.jsonl" 10
tail -F sweep/latest/runlog.jsonl 2>/dev/null | jq -c --unbuffered 'select(.type == "phase_exit") | {path, seconds, status}' >"$T/live.txt" &
tpid=$!; track "$tpid"
wait "$rpid"; rc=$?
expect_eq "sweep: record exits 0" 0 "$rc"
check "tail -F | jq shows both phases as they end" wait_for "test \$(wc -l <$T/live.txt) -ge 2" 20
kill "$tpid" 2>/dev/null; pkill -P "$tpid" 2>/dev/null
expect_match "tail -F | jq: first phase line" '^\{"path":"bs32","seconds":0\.[0-9]+,"status":"ok"\}$' "$(head -1 "$T/live.txt")"

out=$(jq -r '.gpus[] | "\(.index) \(.name): peak \(.vram_mb.peak) MiB, \(.energy_wh) Wh"' sweep/latest/summary.json)
expect_match "jq over summary.json: one line per GPU" '^0 NVIDIA H200: peak [0-9]+ MiB, [0-9.]+ Wh
1 NVIDIA H200: peak [0-9]+ MiB, [0-9.]+ Wh$' "$out"

table=$(jq -r '.phases[] | select(.depth == 0) | [.path, ([.gpus[].vram_mb.peak] | max), ([.gpus[].energy_wh] | add)] | @tsv' sweep/latest/summary.json)
expect_eq "per-configuration table: one row per configuration" "bs32 bs64" "$(cut -f1 <<<"$table" | tr '\n' ' ' | sed 's/ $//')"
check "per-configuration table: peak VRAM and energy are numbers" test -z "$(awk -F'\t' '$2 !~ /^[0-9]+$/ || $3 !~ /^[0-9.]+$/' <<<"$table")"

# "Your workload's memory": the two jq recipes over a session recorded on a real H100 with torch.
cp -r "$FIXTURES/sessions/h100-torch-phases" "$T/h100"
"$RUNMON" summary "$T/h100" --format json -o "$T/h100/summary.json"
mem=$(jq -r '.phases[] | [.path, ([.gpus[].workload_vram_mb.peak] | max), .framework_peak_mb.max] | @tsv' "$T/h100/summary.json")
expect_eq "workload recipe: per phase, nvidia-smi's workload peak and torch's own peak" \
    "$(printf 'load\t1030\t512\ntrain\t4420\t2720\ntrain/step\t4420\t2720')" "$mem"
procs=$(jq -r '.gpus[].processes[] | select(.in_workload) | "\(.gpu) \(.pid) \(.name) \(.peak_mb) MiB"' "$T/h100/summary.json")
expect_eq "workload recipe: the workload's processes" "0 496 python3 4420 MiB" "$procs"
done_testing
