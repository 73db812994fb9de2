#!/usr/bin/env bash
# Issue 21 §1: runmon under a real SLURM (Debian's slurm-wlm and munge, started here by
# slurm_lib.sh): one node with 4 gres GPUs, the fake nvidia-smi showing 4. An array of 4 tasks
# with 2 GPUs each runs two at a time; each session records only its own 2 GPUs, carries its
# job, array and task ids, and the sweep table shows the 4 runs. Skips where SLURM cannot run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
export PATH="$FAKEBIN:$PATH:/usr/sbin:/sbin" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=4
unset CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS SLURM_STEP_GPUS NVIDIA_VISIBLE_DEVICES RUNMON_SWEEP
if ! slurm_up "$T/cluster" 4; then
    echo "ok 1 - # SKIP SLURM cannot run here: $SLURM_SKIP"
    echo "1..1"
    exit 0
fi
trap 'slurm_down; _t_cleanup' EXIT
ok "a one-node SLURM with 4 gres GPUs is up"
K=$T/sink
cat >"$T/task.sh" <<JOB
#!/bin/bash
exec "$RUNMON" record -q -o "$K" -i 0.2 -- sleep 2
JOB
chmod +x "$T/task.sh"
out=$(sbatch --parsable --array=0-3 --gres=gpu:2 -o "$T/task-%a.out" "$T/task.sh" 2>&1); rc=$?
expect_eq "sbatch --array=0-3 --gres=gpu:2: accepted" 0 "$rc"
job=${out%%;*}
if ! wait_for '[ -z "$(squeue -h -j "$job" 2>/dev/null)" ]' 90; then
    not_ok "the array ends within 90 s" "$(squeue 2>&1)"
fi
cat "$T"/task-*.out 2>/dev/null | sed 's/^/# task: /'
sessions=()
for d in "$K"/*/; do
    [ "$(basename "$d")" = latest ] || [ ! -f "$d/session.json" ] || sessions+=("${d%/}")
done
expect_eq "4 sessions, one per task" 4 "${#sessions[@]}"
expect_eq "task ids 0-3" "0 1 2 3" \
    "$(for s in "${sessions[@]}"; do jq -r .job.array_task_id "$s/session.json"; done | sort | xargs)"
expect_eq "every session: the array job id, its own job id" "true" \
    "$(for s in "${sessions[@]}"; do jq -c --arg j "$job" '.job.array_job_id == $j and (.job.job_id | test("^[0-9]+$")) and .job.partition == "test" and .job.nodes == 1 and .job.node != null' "$s/session.json"; done | sort -u | xargs)"
expect_eq "every session: exactly 2 GPUs, those SLURM gave it" "true" \
    "$(for s in "${sessions[@]}"; do jq -c '(.gpus | map(.index | tostring) | join(",")) == .job.gpus and (.gpus | length) == 2' "$s/session.json"; done | sort -u | xargs)"
expect_eq "the GPU pairs: 0,1 twice and 2,3 twice (two tasks at a time)" "0,1 0,1 2,3 2,3" \
    "$(for s in "${sessions[@]}"; do jq -r .job.gpus "$s/session.json"; done | sort | xargs)"
expect_eq "gpu_selection: CUDA_VISIBLE_DEVICES decided, no warning" "true" \
    "$(for s in "${sessions[@]}"; do jq -c '.gpu_selection.by == "CUDA_VISIBLE_DEVICES" and .gpu_selection.value == .job.gpus and .gpu_selection.visible == 4 and (.gpu_selection.warnings | length) == 0' "$s/session.json"; done | sort -u | xargs)"
bad=""
for s in "${sessions[@]}"; do
    want=$(jq -r '.job.gpus | split(",") | join(" ")' "$s/session.json")
    for f in gpu dmon apps; do
        col=$(head -1 "$s/$f.csv" | tr ',' '\n' | grep -nxE 'index|gpu' | head -1 | cut -d: -f1)
        got=$(tail -n +2 "$s/$f.csv" | cut -d, -f"$col" | sort -un | xargs)
        [ "$got" = "$want" ] || bad="$bad $(basename "$s")/$f.csv:[$got]!=[$want]"
    done
done
expect_eq "gpu.csv, dmon.csv, apps.csv: rows of the task's 2 GPUs only" "" "$bad"
expect_eq "sweep slurm-<array job id>, parameter array_task = the task id" "true" \
    "$(for s in "${sessions[@]}"; do jq -c --arg j "slurm-$job" '.sweep == $j and (.params.array_task | tostring) == .job.array_task_id' "$s/session.json"; done | sort -u | xargs)"
expect_eq "the index: 4 end lines with the job" "0 1 2 3" \
    "$(jq -r 'select(.event == "ended") | .job.array_task_id' "$K/index.jsonl" | sort | xargs)"
"$RUNMON" sessions "$K" --summary --sweep "slurm-$job" --format json >"$T/sweep.json"; rc=$?
expect_eq "sessions --summary --sweep slurm-<id>: exit 0" 0 "$rc"
expect_eq "the sweep table: 4 runs" 4 "$(jq '.sessions | length' "$T/sweep.json")"
expect_eq "the sweep table: array_task is its parameter" '["array_task"]' "$(jq -c .param_names "$T/sweep.json")"
expect_eq "the sweep table: tasks 0-3, one row each" "0 1 2 3" \
    "$(jq -r '.sessions[].params.array_task' "$T/sweep.json" | sort | xargs)"
"$RUNMON" sessions "$K" --summary --sweep "slurm-$job" --format text --wide >"$T/sweep.txt"
expect_match "the text table has an ARRAY_TASK column" "ARRAY_TASK" "$(head -1 "$T/sweep.txt")"

# Multi-node recipe, on this one node: a step per node (srun --ntasks-per-node=1) records,
# the workload's ranks write phases with their rank, and --job finds the job's sessions.
K2=$T/sink2
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export PYTHONPATH="$REPO/python"
cat >"$T/multi.sh" <<JOB
#!/bin/bash
srun --ntasks-per-node=1 "$RUNMON" record -q --parents -o "$K2/\$(hostname -s)" -i 0.2 -- \
    python3 -c 'import runmon, time; runmon.log_phase("step", 0.25); time.sleep(1)'
JOB
chmod +x "$T/multi.sh"
out=$(sbatch --parsable -N1 --gres=gpu:1 -o "$T/multi.out" "$T/multi.sh" 2>&1); rc=$?
expect_eq "sbatch of the srun recipe: accepted" 0 "$rc"
job2=${out%%;*}
wait_for '[ -z "$(squeue -h -j "$job2" 2>/dev/null)" ]' 60 || not_ok "the srun job ends within 60 s"
sed 's/^/# multi: /' "$T/multi.out"
s=$(session_dir "$K2/$(hostname -s)")
expect_eq "srun step: job id, step 0, 1 task, 1 GPU, no sweep" \
    "[\"$job2\",\"0\",1,1,null]" \
    "$(jq -c '[.job.job_id, .job.step_id, .job.tasks, (.gpus | length), .sweep]' "$s/session.json")"
expect_eq "the Python module's phase line carries the rank" 0 \
    "$(jq -r 'select(.type == "phase" and .name == "step") | .rank' "$s/runlog.jsonl")"
"$RUNMON" summary "$K2"/* --job "$job2" --format json >"$T/job.json" 2>"$T/job.err"; rc=$?
expect_eq "summary --job: exit 0, the node's session found" "0 $(basename "$s")" \
    "$rc $(jq -r '.session.id // .summaries[0].session.id' "$T/job.json")"

# Ranks started by srun itself: contrib/slurm/runmon-wrap records in the node's first task;
# the other task's phase lines reach the same run log with their rank.
mkdir -p "$T/bin" && ln -sf "$RUNMON" "$T/bin/runmon"
cat >"$T/wrap.sh" <<JOB
#!/bin/bash
export PATH="$T/bin:\$PATH" RUNMON_WRAP_SINK="$T/sink3" RUNMON_WRAP_ARGS="-i 0.2"
srun --ntasks=2 --ntasks-per-node=2 "$REPO/contrib/slurm/runmon-wrap" \
    python3 -c 'import runmon, time; time.sleep(0.5); runmon.log_phase("work", 0.5); time.sleep(1.5)'
JOB
chmod +x "$T/wrap.sh"
out=$(sbatch --parsable -N1 -n2 --gres=gpu:2 -o "$T/wrap.out" "$T/wrap.sh" 2>&1)
job3=${out%%;*}
wait_for '[ -z "$(squeue -h -j "$job3" 2>/dev/null)" ]' 60 || not_ok "the wrapper job ends within 60 s"
sed 's/^/# wrap: /' "$T/wrap.out"
s=$(session_dir "$T/sink3")
expect_eq "runmon-wrap: one session for the node's two tasks" 1 \
    "$(ls -d "$T"/sink3/*/ 2>/dev/null | grep -vc /latest/)"
expect_eq "runmon-wrap: both ranks' phases in its run log" "0 1" \
    "$(jq -r 'select(.type == "phase" and .name == "work") | .rank' "$s/runlog.jsonl" | sort | xargs)"
done_testing
