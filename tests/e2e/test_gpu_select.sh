#!/usr/bin/env bash
# Issue 21 §1: only the job's GPUs. The environment names them (CUDA_VISIBLE_DEVICES,
# SLURM_STEP_GPUS, SLURM_JOB_GPUS, NVIDIA_VISIBLE_DEVICES); every nvidia-smi child gets -i;
# malformed values get a clear message and the run goes on recording what it can.
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=4
unset CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS SLURM_STEP_GPUS NVIDIA_VISIBLE_DEVICES SLURM_JOB_ID \
    SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID RUNMON_SWEEP CUDA_DEVICE_ORDER
n=0
# rec ENV... -- ARGS: one recording in its own sink ($K); stderr in $T/err.
rec() {
    n=$((n + 1)); K=$T/k$n
    env "$@" "$RUNMON" record -o "$K" -i 0.2 -- sleep 1.2 >/dev/null 2>"$T/err"
}
indices() { jq -r '.gpus | map(.index) | join(",")' "$(session_dir "$K")/session.json"; }
# The GPU indices in FILE's rows (its index/gpu column), as "0,2".
rows_of() {
    local f=$(session_dir "$K")/$1 col
    col=$(head -1 "$f" | tr ',' '\n' | grep -nxE 'index|gpu' | head -1 | cut -d: -f1)
    tail -n +2 "$f" | cut -d, -f"$col" | sort -un | paste -sd,
}
uuid() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$1"; }

# The fake honours -i with UUIDs as the real one does, in every mode the recorder runs.
expect_eq "fake dmon -i UUID,UUID: those GPUs" "1 3" \
    "$(nvidia-smi dmon -c 1 -i "$(uuid 1),$(uuid 3)" | grep -v '^#' | awk '{print $1}' | xargs)"
out=$(nvidia-smi dmon -c 1 -i GPU-ffffffff 2>&1); rc=$?
expect_eq "fake dmon -i of no GPU: exit 6, the real message" "6 No devices were found" "$rc $out"

rec CUDA_VISIBLE_DEVICES=2,0; rc=$?
expect_eq "CUDA_VISIBLE_DEVICES=2,0: exit 0" 0 "$rc"
expect_eq "  session.json: GPUs 0 and 2" "0,2" "$(indices)"
expect_eq "  gpu.csv, dmon.csv, apps.csv: their rows only" "0,2 0,2 0,2" \
    "$(rows_of gpu.csv) $(rows_of dmon.csv) $(rows_of apps.csv)"
expect_eq "  gpu_selection says which variable and what it held" \
    '{"by":"CUDA_VISIBLE_DEVICES","value":"2,0","visible":4,"warnings":[]}' \
    "$(jq -c .gpu_selection "$(session_dir "$K")/session.json")"
expect_eq "  no job outside SLURM" null "$(jq -c .job "$(session_dir "$K")/session.json")"

rec CUDA_VISIBLE_DEVICES=0,,x; rc=$?
expect_eq "CUDA_VISIBLE_DEVICES=0,,x: the run goes on (exit 0)" 0 "$rc"
expect_eq "  read as CUDA does: GPU 0 only" "0" "$(indices)"
expect_match "  a clear message naming the cut" "entry 2 \(''\) names no GPU here.*ignored: ',x'" "$(cat "$T/err")"
expect_eq "  the warning is an event of the run log" 1 "$(count_event "$(session_dir "$K")" gpu_selection)"

rec CUDA_VISIBLE_DEVICES=GPU-ffffffff-0000-0000-0000-000000000000; rc=$?
expect_eq "a UUID of no GPU here: exit 0" 0 "$rc"
expect_eq "  every GPU recorded" "0,1,2,3" "$(indices)"
expect_match "  said so" "names none of the 4 GPUs here: recording them all" "$(cat "$T/err")"

rec CUDA_VISIBLE_DEVICES="$(uuid 3),1"
expect_eq "UUIDs and indices mixed: GPUs 1 and 3" "1,3" "$(indices)"

rec $'CUDA_VISIBLE_DEVICES=0,\e[31mred'; rc=$?
expect_eq "control bytes in CUDA_VISIBLE_DEVICES: exit 0" "0 0" "$rc $(indices)"
check "  no raw escape byte on stderr" bash -c "! grep -q \$'\\e' '$T/err'"

# The cgroup trap: the job holds node GPUs 2,3, nvidia-smi shows only those, as 0 and 1.
rec FAKE_SMI_GPUS=2 SLURM_JOB_ID=9 SLURM_JOB_GPUS=2,3
expect_eq "cgroup: SLURM_JOB_GPUS=2,3, 2 GPUs visible: both recorded" "0,1" "$(indices)"
expect_eq "  no warning" "[]" "$(jq -c .gpu_selection.warnings "$(session_dir "$K")/session.json")"
expect_eq "  the job's GPU list kept as SLURM gave it" "2,3" "$(jq -r .job.gpus "$(session_dir "$K")/session.json")"
rec SLURM_JOB_ID=9 SLURM_JOB_GPUS=1,3
expect_eq "no cgroup: SLURM_JOB_GPUS=1,3 of 4: node indices" "1,3 1,3" "$(indices) $(rows_of dmon.csv)"
rec SLURM_JOB_ID=9 SLURM_JOB_GPUS=0,1 SLURM_STEP_GPUS=1
expect_eq "SLURM_STEP_GPUS before SLURM_JOB_GPUS" "1" "$(indices)"
rec NVIDIA_VISIBLE_DEVICES="$(uuid 2)"
expect_eq "NVIDIA_VISIBLE_DEVICES with a UUID" "2" "$(indices)"

n=$((n + 1)); K=$T/k$n
CUDA_VISIBLE_DEVICES=1 "$RUNMON" record -q --all-gpus -o "$K" -i 0.2 -- sleep 0.5
expect_eq "--all-gpus: every GPU, whatever the environment says" "0,1,2,3 --all-gpus" \
    "$(indices) $(jq -r .gpu_selection.by "$(session_dir "$K")/session.json")"

# A SLURM array is a sweep unless --sweep says otherwise.
n=$((n + 1)); K=$T/k$n
SLURM_JOB_ID=12 SLURM_ARRAY_JOB_ID=10 SLURM_ARRAY_TASK_ID=2 "$RUNMON" record -q -o "$K" -- true
expect_eq "array task: sweep slurm-10, params {array_task: 2}" '["slurm-10",{"array_task":2}]' \
    "$(jq -c '[.sweep, .params]' "$(session_dir "$K")/session.json")"
n=$((n + 1)); K=$T/k$n
SLURM_JOB_ID=12 SLURM_ARRAY_JOB_ID=10 SLURM_ARRAY_TASK_ID=2 "$RUNMON" record -q -o "$K" \
    --sweep lr-scan --param lr=0.1 -- true
expect_eq "--sweep names another: its params only" '["lr-scan",{"lr":0.1}]' \
    "$(jq -c '[.sweep, .params]' "$(session_dir "$K")/session.json")"
n=$((n + 1)); K=$T/k$n
SLURM_JOB_ID=12 SLURM_ARRAY_JOB_ID=$'10\e[2J' SLURM_ARRAY_TASK_ID=2 "$RUNMON" record -q -o "$K" \
    -- true 2>"$T/err"; rc=$?
expect_eq "an array id with control bytes: the run goes on, no sweep" "0 null" \
    "$rc $(jq -c .sweep "$(session_dir "$K")/session.json")"
expect_match "  said, escaped" "SLURM_ARRAY_JOB_ID '10.x1b.2J': the id holds a control character" "$(cat "$T/err")"
check "  no raw escape byte on stderr" bash -c "! grep -q \$'\\e' '$T/err'"
done_testing
