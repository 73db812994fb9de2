#!/usr/bin/env bash
# Issue 22 section 3: the energy bar against a known truth. The fake nvidia-smi's power model
# (FAKE_SMI_POWER_SEED) gives a true signal of steps, ramps and sub-window bursts seen through
# an A100/H100-like sensor (1 s average of readings taken 25 % of the time); its virtual clock
# prints a long recording at 0.1 s without sleeping. Random phases are laid on it, and each
# phase's true energy (--fake-power-truth) must lie inside summary.json's bar.
. "$(dirname "$0")/lib.sh"
export FAKE_SMI_CAPTURES=$FIXTURES/captures FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load
unset FAKE_SMI_VARY FAKE_SMI_OVERRIDE FAKE_SMI_STATE_DIR FAKE_SMI_FAULT_ONLY FAKE_SMI_NOISE \
    FAKE_SMI_HANG_AFTER FAKE_SMI_START_DELAY_MS FAKE_SMI_GPUS
export TZ=UTC FAKE_SMI_POWER_HORIZON_S=700 FAKE_SMI_VIRTUAL_START=1795255200
SEEDS=${ENERGY_SEEDS:-1 2 3 4 5 6}
ROWS=6000 # 600 s at 0.1 s

: >"$T/all.tsv"
for seed in $SEEDS; do
    export FAKE_SMI_POWER_SEED=$seed
    FAKE_SMI_EXIT_AFTER=$ROWS FAKE_SMI_EXIT_CODE=0 "$FAKEBIN/nvidia-smi" \
        --query-gpu=timestamp,index,name,power.draw --format=csv -lms 100 >"$T/gpu-$seed.csv"
    # Phases: one window each, 0.05 to 30 s, apart by 0.2 to 3 s; the truth for each.
    python3 - "$seed" "$T/runlog-$seed.jsonl" "$T/windows-$seed.txt" <<'PY'
import json, random, sys
seed, runlog, windows = int(sys.argv[1]), sys.argv[2], sys.argv[3]
r = random.Random(seed)
t0, t, k = 1795255200.0, 1.5, 0
with open(runlog, "w") as f, open(windows, "w") as w:
    while True:
        u = r.random()
        d = r.uniform(0.05, 1.0) if u < 0.25 else r.uniform(1, 10) if u < 0.6 else r.uniform(10, 30)
        d = round(d, 3)
        if t + d > 597: break
        name = "p%04d" % k
        ev = {"type": "phase_enter", "pid": 7, "t": t0 + t, "name": name, "path": name, "depth": 0}
        f.write(json.dumps(ev) + "\n")
        ev.update(type="phase_exit", t=t0 + t + d, seconds=d, status="ok")
        f.write(json.dumps(ev) + "\n")
        w.write("0 %.3f %.3f\n" % (t, t + d))
        t, k = t + d + round(r.uniform(0.2, 3), 3), k + 1
PY
    "$FAKEBIN/nvidia-smi" --fake-power-truth <"$T/windows-$seed.txt" >"$T/truth-$seed.txt"
    "$RUNMON" summary --gpu-csv "$T/gpu-$seed.csv" --runlog "$T/runlog-$seed.jsonl" \
        --interval 0.1 --format json >"$T/s-$seed.json"
    jq -r '.phases[] | [.total_seconds, .gpus[0].energy_wh, .gpus[0].energy_wh_low,
        .gpus[0].energy_wh_high, .short_phase] | @tsv' "$T/s-$seed.json" |
        paste - "$T/truth-$seed.txt" >>"$T/all.tsv"
done

# total_s energy low high short truth_j
read -r n inside short_n short_flagged median_hw long_n <<<"$(python3 - "$T/all.tsv" <<'PY'
import statistics, sys
n = inside = short_n = short_flagged = 0
hw = []
for line in open(sys.argv[1]):
    d, e, lo, hi, short, truth = line.split("\t")
    d, e, lo, hi, truth = float(d), float(e), float(lo), float(hi), float(truth) / 3600
    n += 1
    inside += lo - 1e-6 <= truth <= hi + 1e-6
    if d < 1.0:
        short_n += 1
        short_flagged += short == "true"
    if d >= 10:
        hw.append((hi - lo) / 2 / e)
print(n, inside, short_n, short_flagged, "%.4f" % statistics.median(hw), len(hw))
PY
)"
echo "# $n phases over seeds ($SEEDS): $inside with the true energy inside the bar;" \
    "median half-width of the $long_n phases >= 10 s: $median_hw of the energy"
check "hundreds of phases drawn ($n)" test "$n" -ge 200
check "the true energy inside the bar in >= 95 % of phases ($inside of $n)" \
    awk -v i="$inside" -v n="$n" 'BEGIN{exit !(i >= 0.95 * n)}'
check "phases >= 10 s at 0.1 s: median half-width <= 5 % ($median_hw, $long_n phases)" \
    awk -v h="$median_hw" -v n="$long_n" 'BEGIN{exit !(n >= 20 && h <= 0.05)}'
expect_eq "every phase under one sensor window is flagged short_phase" "$short_n" "$short_flagged"

# The same truth seen by today's rule: the energy alone is off by more than its bar is wide
# for some phases (what the bar is for).
off=$(awk -F'\t' '{t=$6/3600; if (t > 0 && ($2 - t) / t > 0.05 || ($2 - t) / t < -0.05) n++} END{print n+0}' "$T/all.tsv")
check "the bare energy misses the truth by > 5 % in some phases ($off)" test "$off" -gt 0
done_testing
