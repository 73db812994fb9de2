#!/usr/bin/env bash
# make demo: the run log in action. A tiny scripted "sweep" writes phases and events with
# `runmon phase` and `runmon log`, then the file is shown as written and through jq.
# Needs no input; everything happens in a temporary directory.
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
