#!/usr/bin/env bash
# Issue 39: what each run achieved for what it cost, on real recorded runs. A 4-configuration
# sweep of a Python script (Debian's python3 and the module) that logs loss and accuracy under
# the fake nvidia-smi; the sweep table in text, CSV and JSON: the objective columns, the best
# marks, the Pareto marks and the target figures; the run log's objective lines; bad options.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
K=$T/sink
cat >"$T/train.py" <<'PY'
import sys, time, runmon
lr, steps = float(sys.argv[1]), int(sys.argv[2])
runmon.params(lr=lr, steps=steps, sweep="lrs")
runmon.objective("acc:max", "loss:min:best")
loss = 2.0
with runmon.phase("train"):
    for step in range(steps):
        loss = loss * (1 - lr)
        runmon.metric(step=step, loss=loss, acc=1 - loss / 2)
        time.sleep(0.05)
PY
# lr 0.5 reaches loss 0.3 in 3 steps, 0.3 in 6, 0.2 in 9; 0.05 never in 8. The last acc:
# 1 - 0.7^8 = 0.942 (lr 0.3) beats 1 - 0.5^4 = 0.9375 (lr 0.5) and 1 - 0.8^12 = 0.931.
for cfg in "0.5 4" "0.3 8" "0.2 12" "0.05 8"; do
    set -- $cfg
    "$RUNMON" record -q -o "$K" -i 0.2 --sweep lrs -- "$PY" "$T/train.py" "$1" "$2" ||
        not_ok "record lr=$1"
done
expect_eq "4 runs, each with a summary's metrics" "4" \
    "$(cat "$K"/2*/summary.json | jq -s '[.[] | select(.metrics.loss.count > 0)] | length')"

# JSON: the run logs' objectives (none given), each value, the best, the front.
j=$("$RUNMON" sessions "$K" --summary --sweep lrs --format json)
expect_eq "json: the objectives the run logs named, the default cost" '[["acc:max","loss:min:best"],"energy"]' \
    "$(jq -c '[.objectives, .cost]' <<<"$j")"
expect_eq "json: each run's acc is its metric's last value" "true" \
    "$(jq '[.sessions[] | .objectives[0].value == .metrics.acc.last] | all' <<<"$j")"
expect_eq "json: loss:min:best is the metric's min" "true" \
    "$(jq '[.sessions[] | .objectives[1].value == .metrics.loss.min] | all' <<<"$j")"
expect_eq "json: the best acc is lr 0.3's (the most accurate run)" '[0.3]' \
    "$(jq -c '[.sessions[] | select(.objectives[0].best) | .params.lr]' <<<"$j")"
expect_eq "json: every run has a front mark" "true" \
    "$(jq '[.sessions[] | .objectives[] | .front | IN("on", "within_bar", "no")] | all' <<<"$j")"
expect_eq "json: the best run is on the front or within its bar" "true" \
    "$(jq '[.sessions[] | .objectives[0] | select(.best) | .front != "no"] | all' <<<"$j")"
expect_eq "json: the cost is the energy with its bar" "true" \
    "$(jq '[.sessions[] | .cost.name == "energy" and .cost.value == .energy_wh and .cost.low == .energy_wh_low] | all' <<<"$j")"
# The front checked against its definition on these very numbers (model/pareto.h).
expect_eq "json: front marks agree with the definition" "true" "$(jq '
  [.sessions[] | {v: .objectives[0].value, c: .cost.value, lo: .cost.low, hi: .cost.high, f: .objectives[0].front}] as $r
  | [$r[] as $p | ([$r[] | select((.v >= $p.v and .c <= $p.c) and (.v > $p.v or .c < $p.c))]) as $d
     | (if ($d | length) == 0 then "on" elif ([$d[] | select(.c < $p.lo or .c > $p.hi)] | length) == 0 and $p.lo < $p.hi then "within_bar" else "no" end) == $p.f]
  | all' <<<"$j")"

# --target: the time and energy to the first metric line meeting it.
j=$("$RUNMON" sessions "$K" --summary --sweep lrs --objective acc:max --cost duration --target 'loss<=0.3' --format json)
expect_eq "json --target: reached by lr 0.5, 0.3, 0.2, not by 0.05" '[[0.05,false],[0.2,true],[0.3,true],[0.5,true]]' \
    "$(jq -c '[.sessions[] | [.params.lr, .target.reached]] | sort' <<<"$j")"
expect_eq "json --target: the faster rate reaches it sooner" "true" \
    "$(jq '[.sessions[] | select(.target.reached)] | sort_by(-.params.lr) | [.[].target.seconds] | . == sort' <<<"$j")"
expect_eq "json --target: energy to it within the run's" "true" \
    "$(jq '[.sessions[] | select(.target.reached) | .target.energy_wh >= 0 and .target.energy_wh <= .energy_wh] | all' <<<"$j")"
expect_eq "json --cost duration: no bar" '["duration",null]' "$(jq -c '[.cost, .sessions[0].cost.low]' <<<"$j")"
expect_eq "json --objective replaces the run logs'" '["acc:max"]' "$(jq -c .objectives <<<"$j")"

# CSV: the same figures as columns.
c=$("$RUNMON" sessions "$K" --summary --sweep lrs --objective acc:max --target 'loss<=0.3' --format csv)
expect_match "csv: the judged columns" ',objective:acc:max,objective:acc:max:best,objective:acc:max:front,cost:energy,cost_low,cost_high,target_reached,target_seconds,target_energy_wh$' \
    "$(head -1 <<<"$c")"
expect_eq "csv: one best, the reached ones" "1 3" \
    "$("$PY" -c 'import csv, sys; r = list(csv.DictReader(sys.stdin)); print(sum(x["objective:acc:max:best"] == "true" for x in r), sum(x["target_reached"] == "true" for x in r))' <<<"$c")"

# Text: the objective's column with its marks, the target's, the legend.
t=$(COLUMNS=200 "$RUNMON" sessions "$K" --summary --sweep lrs --objective acc:max --target 'loss<=0.3' --format text --wide)
expect_match "text: the objective's column" 'ACC:MAX' "$(head -1 <<<"$t")"
expect_match "text: the target's column" 'TO LOSS<=0\.3' "$(head -1 <<<"$t")"
expect_eq "text: one best mark" 1 "$(grep -cE ' [0-9.]+\^[*~]? ' <<<"$t")"
expect_match "text: a front mark" ' [0-9.]+\^?[*~] ' "$t"
expect_match "text: 'not reached'" 'not reached' "$t"
expect_match "text: reached: seconds and Wh" ' [0-9.]+ s [0-9.e+-]+ Wh' "$t"
expect_match "text: the legend names the marks" '\^ the best of the column;' "$t"
expect_match "text: ... and the front's" '\* on the Pareto front of the objective against energy' "$t"

# Bad input: a metric no run logged, bad specs.
err=$("$RUNMON" sessions "$K" --summary --objective tput:max 2>&1 >/dev/null); rc=$?
expect_eq "an objective naming no logged metric: exit 2" 2 "$rc"
expect_match "... with the metric names that exist" "no run logged metric 'tput' \(the runs' metrics: loss, acc\)" "$err"
err=$("$RUNMON" sessions "$K" --summary --target 'tput>=1' 2>&1 >/dev/null); rc=$?
expect_eq "a target naming no logged metric: exit 2" 2 "$rc"
for bad in "--objective acc" "--objective acc:up" "--cost watts" "--target loss<0.3" "--target loss<=nan"; do
    err=$("$RUNMON" sessions "$K" --summary $bad 2>&1 >/dev/null); rc=$?
    expect_eq "bad $bad: exit 2" 2 "$rc"
done
err=$("$RUNMON" sessions "$K" --objective acc:max 2>&1 >/dev/null); rc=$?
expect_eq "--objective without --summary: exit 2" 2 "$rc"
# The same option errors, word for word, from both commands (sweep/sweep_judge.c's rm_judge_opt).
many=() && for i in $(seq 65); do many+=(--objective "m$i:max"); done
for cmd in sessions report; do
    case $cmd in sessions) extra=(--summary) ;; report) extra=(--sweep lrs) ;; esac
    err=$("$RUNMON" "$cmd" "$K" "${extra[@]}" "${many[@]}" 2>&1 >/dev/null); rc=$?
    expect_eq "$cmd: 65 --objective: exit 2, the limit named" "2 runmon $cmd: at most 64 --objective" "$rc $err"
    err=$("$RUNMON" "$cmd" "$K" "${extra[@]}" --cost watts 2>&1 >/dev/null); rc=$?
    expect_match "$cmd: a bad --cost: exit 2, the costs named" "^2 runmon $cmd: --cost: cost 'watts': expected .*gpu_hours" "$rc $err"
    err=$("$RUNMON" "$cmd" "$K" "${extra[@]}" --target 'loss<0.3' 2>&1 >/dev/null); rc=$?
    expect_match "$cmd: a bad --target: exit 2, saying why" "^2 runmon $cmd: --target: .*loss<0.3" "$rc $err"
done

# report --sweep: the same options, the rows judged before the page.
"$RUNMON" report --sweep lrs "$K" --objective acc:max --cost vram --target 'acc>=0.9' -o "$T/p.html" >/dev/null
expect_eq "report --sweep --objective: exit 0, a page" "0 yes" "$? $([ -s "$T/p.html" ] && echo yes)"
err=$("$RUNMON" report --sweep lrs "$K" --objective tput:max -o "$T/q.html" 2>&1 >/dev/null); rc=$?
expect_eq "report --sweep, an objective naming no logged metric: exit 2" 2 "$rc"
expect_match "... with the metric names that exist" "runmon report: --objective tput:max: no run logged metric 'tput' \(the runs' metrics: loss, acc\)" "$err"
err=$("$RUNMON" report "$K" --objective acc:max 2>&1 >/dev/null); rc=$?
expect_eq "report of one session with --objective: exit 2" 2 "$rc"

# GPU-hours of runs on 2 GPUs: `report S1 S2` judges them as `sessions --summary` does. Its
# rows had no gpu_count, so its judge took 1 GPU: half the cost on the page.
K2=$T/sink2
for cfg in "0.5 4" "0.3 8"; do
    set -- $cfg
    FAKE_SMI_GPUS=2 "$RUNMON" record -q -o "$K2" -i 0.2 --sweep two -- "$PY" "$T/train.py" "$1" "$2" ||
        not_ok "record lr=$1 on 2 GPUs"
done
j=$("$RUNMON" sessions "$K2" --summary --sweep two --cost gpu_hours --format json)
expect_eq "sessions --summary: 2 GPUs each" "[2,2]" "$(jq -c '[.sessions[].gpu_count]' <<<"$j")"
expect_eq "... GPU-hours = duration x 2 / 3600" "true" \
    "$(jq '[.sessions[] | (.cost.value - .duration_s * 2 / 3600) | fabs < 1e-9] | all' <<<"$j")"
"$RUNMON" report "$K2"/2* --cost gpu_hours -o "$T/two.html" 2>/dev/null
for v in $(jq -r '.sessions[].cost.value' <<<"$j"); do
    want=$(printf '%.4g' "$v")
    check "report S1 S2 --cost gpu_hours: the page's cost $want GPU-h (2 GPUs)" grep -qF " $want GPU-h" "$T/two.html"
done
done_testing
