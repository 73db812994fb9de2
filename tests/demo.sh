#!/usr/bin/env bash
# make demo: the main job. Part 1 shows the run log on its own (a tiny scripted "sweep"
# with `runmon phase` and `runmon log`, shown as written and through jq). Part 2 records a
# sweep with `runmon record`: on this machine's nvidia-smi when there is a GPU, else on the
# bundled fake nvidia-smi replaying real H200 captures, and prints the session's summary.
# Needs no input. Part 1 works in a temporary directory; part 2 keeps its session in
# ./runmon-demo/ so it can be looked at afterwards.
set -euo pipefail
: "${BUILD:?run through make demo}"
RUNMON=$BUILD/runmon
D=$(mktemp -d "${TMPDIR:-/tmp}/runmon-demo.XXXXXX")
trap 'rm -rf "$D"' EXIT
export RUNMON_RUNLOG=$D/runlog.jsonl
unset RUNMON_PHASE_PATH

# One "training run" per learning rate; the script itself nests phases with runmon phase.
cat >"$D/train.sh" <<'SH'
#!/usr/bin/env bash
set -e
lr=$1
runmon phase load_data -- sleep 0.05
for epoch in 1 2; do
    runmon phase "epoch$epoch" "lr=$lr" -- sleep 0.1
    runmon log event checkpoint "epoch=$epoch" "loss=0.$((RANDOM % 900 + 100))" path="ckpt/$lr/$epoch.pt"
done
SH
chmod +x "$D/train.sh"
mkdir -p "$D/bin" && ln -s "$RUNMON" "$D/bin/runmon"
export PATH=$D/bin:$PATH

echo "== a sweep over two learning rates, logged to $RUNMON_RUNLOG"
runmon log event sweep_start 'lrs:=[0.1,0.01]' host="$(hostname)"
for lr in 0.1 0.01; do
    runmon phase "run_lr$lr" -- "$D/train.sh" "$lr"
done
runmon log phase report 0.75 pages=3
runmon phase flaky -- sh -c 'exit 3' || echo "(the phase 'flaky' exited $?, as intended)"

echo
echo "== the run log, one JSON object per line"
cat "$RUNMON_RUNLOG"

echo
echo "== jq: completed phases by path, with seconds and status"
jq -r 'select(.type == "phase_exit") | "\(.path)\t\(.seconds)s\t\(.status)"' "$RUNMON_RUNLOG" | awk -F'\t' '{ printf "%-28s %8s  %s\n", $1, $2, $3 }'
echo
echo "== jq: checkpoint losses"
jq -c 'select(.event == "checkpoint") | {ts, epoch: .data.epoch, loss: .data.loss}' "$RUNMON_RUNLOG"

echo
echo "== jq: total seconds per top-level run"
jq -s -r 'map(select(.type == "phase_exit" and .depth == 0)) | .[] | "\(.name): \(.seconds)s (exit \(.exit_code))"' "$RUNMON_RUNLOG"

echo
echo "================================================================================"
echo "== part 2: a recorded sweep (runmon record), GPU + CPU + phases"
REPO=$(cd "$(dirname "$0")/.." && pwd)
SINK=$REPO/runmon-demo
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "== using this machine's nvidia-smi: $(command -v nvidia-smi)"
else
    echo "== no GPU here: using the fake nvidia-smi (2 H200s replaying real captures)"
    export PATH=$BUILD/fakebin:$PATH
    export FAKE_SMI_CAPTURES=$REPO/fixtures/captures FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
    # The fake's pmon shows the processes listed here: another user's job on GPU 1, and the
    # sweep's own process on GPU 0 (the sweep adds itself, as a CUDA program would appear).
    export FAKE_SMI_APPS=$D/gpu-processes.txt FAKE_SMI_PMON_MS=200
    echo "1 $$ C 2048 - - bash" >"$FAKE_SMI_APPS" # this demo script: not under runmon record
fi
cat >"$D/sweep.sh" <<'SH'
#!/usr/bin/env bash
# One session, one phase per configuration: what a hyper-parameter sweep looks like.
set -e
runmon phase setup -- sleep 0.4
for bs in 32 64; do
    # On the fake nvidia-smi, this process "holds" 40 MiB per sample of the batch.
    [ -n "${FAKE_SMI_APPS:-}" ] && echo "0 $$ C $((bs * 40)) 90 20 bash" >>"$FAKE_SMI_APPS"
    runmon phase "bs$bs" batch_size=$bs -- sh -c 'runmon phase forward -- sleep 0.6; runmon phase backward -- sleep 0.6'
    [ -n "${FAKE_SMI_APPS:-}" ] && sed -i "/ $$ /d" "$FAKE_SMI_APPS"
    runmon log event eval "batch_size=$bs" "accuracy=0.9$((bs / 8))"
done
SH
chmod +x "$D/sweep.sh"
unset RUNMON_RUNLOG
runmon record -o "$SINK" -i 0.2 -- "$D/sweep.sh"
SESSION=$(ls -1dt "$SINK"/*/ | head -n 1)
SESSION=${SESSION%/}
echo
echo "== the session folder: $SESSION"
ls -l "$SESSION"
echo
echo "== jq: peak VRAM, mean GPU utilization and energy per configuration (from summary.json)"
jq -r '.phases[] | select(.path | test("^bs[0-9]+$"))
        | [.path, ([.gpus[].vram_mb.peak] | max), (([.gpus[].util_pct.mean] | add) / (.gpus | length) | . * 10 | round / 10), ([.gpus[].energy_wh] | add | . * 1000 | round / 1000)]
        | @tsv' "$SESSION/summary.json" | awk -F'\t' 'BEGIN { printf "%-8s %14s %12s %10s\n", "config", "peak VRAM MiB", "mean util %", "energy Wh" }
                                            { printf "%-8s %14s %12s %10s\n", $1, $2, $3, $4 }'
echo
echo "== jq: the sweep's own GPU memory per configuration (apps.csv: its processes only), and who else was there"
jq -r '.phases[] | select(.path | test("^bs[0-9]+$")) | "\(.path): workload VRAM peak \([.gpus[].workload_vram_mb.peak // empty] | max) MiB"' "$SESSION/summary.json"
jq -r '.gpus[] | .index as $g | .processes[]? | "GPU \($g): pid \(.pid) \(.name) peak \(.peak_mb) MiB, \(if .in_workload then "the sweep" elif .in_workload == false then "not the sweep" else "unknown" end)"' "$SESSION/summary.json"
echo
echo "== jq: the monitor's own events in the run log"
jq -c 'select(.type == "event" and (.event | test("^(session|collector)"))) | {ts, event, data}' "$SESSION/runlog.jsonl"

echo
echo "== the HTML report of this session (open it in any browser)"
runmon report "$SINK"

echo
echo "================================================================================"
echo "== part 3: a sweep of three runs (one session each), compared on one page"
# Each run says which sweep it belongs to and its parameters (--sweep, --param); on the fake
# nvidia-smi each run's process "holds" 40 MiB of GPU memory per sample of its batch.
cat >"$D/train_batch.sh" <<'SH'
#!/usr/bin/env bash
set -e
bs=$2 # train_batch.sh --batch N
[ -n "${FAKE_SMI_APPS:-}" ] && echo "0 $$ C $((bs * 40)) 90 20 bash" >>"$FAKE_SMI_APPS"
runmon log objective acc:max # what the runs are judged by (the sweep table's ACC:MAX column)
runmon phase train -- sleep $((bs / 32)).2
for step in 1 2 3 4 5; do # what the run achieved: a larger batch learns more here, at more cost
    runmon log --step $step metric $(awk -v s=$step -v b=$bs \
        'BEGIN { printf "loss=%.4f acc=%.4f", 2 / (s * (1 + b / 64)), 0.5 + s * (0.05 + b / 4000) }')
done
runmon phase eval -- sleep 0.3
[ -n "${FAKE_SMI_APPS:-}" ] && sed -i "/ $$ /d" "$FAKE_SMI_APPS"
exit 0
SH
chmod +x "$D/train_batch.sh"
SWEEP=batch-$(date -u +%Y%m%dT%H%M%S) # one name per demo: the sink keeps earlier demos' runs
for bs in 32 64 128; do
    runmon record -q -o "$SINK" -i 0.2 --sweep "$SWEEP" --param batch=$bs -- "$D/train_batch.sh" --batch $bs
done
echo "== the sweep table: what each run cost, and what it achieved (ACC:MAX, the Pareto front)"
COLUMNS=100 runmon sessions "$SINK" --summary --sweep "$SWEEP" --format text
echo
echo "== the time and energy each run took to reach loss <= 0.5"
COLUMNS=100 runmon sessions "$SINK" --summary --sweep "$SWEEP" --format text --target 'loss<=0.5' |
    sed -n '1,4p'
echo
echo "== the page that compares the runs (open it in any browser)"
runmon report --sweep "$SWEEP" "$SINK"
