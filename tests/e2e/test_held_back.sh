#!/usr/bin/env bash
# "Held back by" on real recordings (issue 23): a phase whose CPU-saturating data loader
# (a python3 worker process, real /proc: it holds a core) runs beside an idle fake GPU gets the
# input-bound line; a phase on a GPU
# that reports the power-cap throttle reason with its SM clock held low gets the power-capped
# line (recorded with the default fields); a busy GPU at full clock with a sleeping workload
# gets no line. In the summary JSON (with the figures), its text output and the report's
# phase table. Since issue 38 the rules read the workload's own waiting for a CPU, so each
# recording runs boosted (lib.sh): the other work on the shared test machine does not make
# these workloads CPU-starved (tests/e2e/test_held_stall.sh tests that rule).
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_DMON_MS=200 FAKE_SMI_PMON_MS=200
unset FAKE_SMI_OVERRIDE FAKE_SMI_THROTTLE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_VARY \
    RUNMON_RUNLOG RUNMON_PHASE_PATH
FIELDS=timestamp,index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used
FIELDS+=,memory.total,power.draw,temperature.gpu,clocks.current.sm,clocks.current.memory
FIELDS+=,clocks.max.sm,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap

# record SINK PHASE COMMAND...: one session, COMMAND run as the phase PHASE, with $FIELDS
# (empty: the default fields, which take the clock fields the driver offers).
record() {
    local sink=$1 phase=$2
    shift 2
    # shellcheck disable=SC2086 # RECORD_EXTRA: words by design
    boosted "$RUNMON" record -q -o "$sink" -i 0.2 ${FIELDS:+--gpu-fields "$FIELDS"} ${RECORD_EXTRA:-} -- \
        "$RUNMON" phase "$phase" -- "$@"
}
# The held_back_by of the phase PATH in the summary of session S ("null" when absent).
held() { "$RUNMON" summary "$1" --format json | jq -c --arg p "$2" '.phases[] | select(.path == $p) | .held_back_by'; }

# --- input-bound: a data loader with a busy worker, the GPU idle ----------------------------
LOADER='import multiprocessing as mp, time
def burn(_):
    end, n = time.time() + 3, 0
    while time.time() < end:
        n += 1
    return n
with mp.Pool(1) as pool:
    pool.map(burn, range(1))'
FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-idle record "$T/in" load python3 -c "$LOADER"
expect_eq "input: record exit 0" 0 $?
S=$(session_dir "$T/in")
h=$(held "$S" load)
echo "# input phase: $h"
expect_eq "input: one finding, input_bound on GPU 0" '["input_bound",0]' \
    "$(jq -c '[.[].rule, .[].gpu]' <<<"$h")"
# Saturated: the loader holds a core (the host's CPUs busy alone are no longer a reason).
check "input: its figures: GPU busy 0 %, the CPU saturated" \
    jq -e '.[0].figures | .gpu_busy_pct == 0 and .workload_cpu_pct >= 90' <<<"$h"
cpu=$("$RUNMON" summary "$S" --format json | jq '.phases[0].proc.cpu_pct.mean')
expect_eq "input: the figure is the phase's proc cpu_pct mean" "$cpu" \
    "$(jq '.[0].figures.workload_cpu_pct' <<<"$h")"
check "input: the GPU reported gpu_idle, which is no cap" \
    jq -e '.phases[0].gpus[0].throttle_share == {"gpu_idle": 1}' "$S/summary.json"
"$RUNMON" summary "$S" --format text >"$T/in.txt"
check "input: text output has the line under the phase" \
    grep -qE -A1 '^    held back by input-bound: GPU 0 busy 0 % while the CPU was saturated \(the workload' "$T/in.txt"
check "input: text output wraps it within 100 columns" \
    test -z "$(awk 'length($0) > 100' "$T/in.txt")"
"$RUNMON" report "$S" -o "$T/in.html" >/dev/null 2>&1
check "input: the report's phase table has the line" \
    grep -q '<tr class="held"><td class="l" colspan="[0-9]*"[^>]*>held back by input-bound: GPU 0 busy 0 %' "$T/in.html"

# --- power capped: sw_power_cap active, the SM clock held at 765 of 2145 MHz ----------------
# The rtx2080super 595.71.05 captures: its load row (8 % busy), with the reason and the SM
# clock that GPU's idle capture recorded while sw_power_cap was active. Default fields: the
# rule fires on a recording made without --gpu-fields.
FIELDS='' FAKE_SMI_MODEL=rtx2080super-595.71.05-linux-load FAKE_SMI_THROTTLE=sw_power_cap \
    FAKE_SMI_OVERRIDE="clocks.current.sm=765" record "$T/cap" step sleep 2.5
expect_eq "capped: record exit 0" 0 $?
S=$(session_dir "$T/cap")
check "capped: the default fields recorded the fake's reason as nvidia-smi prints it" \
    grep -q ',765,[0-9]*,2145,0x0000000000000004,' "$S/gpu.csv"
h=$(held "$S" step)
echo "# capped phase: $h"
expect_eq "capped: one finding, power_capped on GPU 0" '["power_capped",0]' \
    "$(jq -c '[.[].rule, .[].gpu]' <<<"$h")"
expect_eq "capped: its figures" \
    '{"sw_power_cap_share":1,"sm_clock_mean_mhz":765,"sm_clock_max_mhz":2145,"sm_clock_max_source":"clocks.max.sm"}' \
    "$(jq -c '.[0].figures' <<<"$h")"
expect_eq "capped: its text" \
    '"power capped: GPU 0 sw_power_cap active in 100 % of samples, SM clock 765 of 2145 MHz"' \
    "$(jq -c '.[0].text' <<<"$h")"
check "capped: the phase's GPU has throttle_share and sm_clock_max_mhz" \
    jq -e '.phases[0].gpus[0] | .throttle_share == {"sw_power_cap": 1} and .sm_clock_max_mhz == 2145' \
    "$S/summary.json"
"$RUNMON" summary "$S" --format text >"$T/cap.txt"
check "capped: text output has the line" grep -q '^    held back by power capped: GPU 0' "$T/cap.txt"
# Sealed segments: the sink's stored aggregates (state.json) carry the throttle counts, so
# the sink's summary from them equals a rescan of the rows.
FIELDS='' FAKE_SMI_MODEL=rtx2080super-595.71.05-linux-load FAKE_SMI_THROTTLE=sw_power_cap \
    FAKE_SMI_OVERRIDE="clocks.current.sm=765" RECORD_EXTRA="--rollover-mb 0.001" \
    record "$T/seg" step sleep 2.5
S=$(session_dir "$T/seg")
check "segments: the recording sealed gpu segments" compgen -G "$S/gpu-*.csv"
agg=$("$RUNMON" summary "$T/seg" --format json 2>/dev/null | jq -c '.phases[0] | [.held_back_by[].rule, .gpus[0].throttle_share]')
re=$("$RUNMON" summary "$T/seg" --rescan --format json 2>/dev/null | jq -c '.phases[0] | [.held_back_by[].rule, .gpus[0].throttle_share]')
expect_eq "segments: from the stored aggregates" '["power_capped",{"sw_power_cap":1}]' "$agg"
expect_eq "segments: the same from a rescan" "$agg" "$re"

# --- neither: a busy GPU at its full clock, no reason active, the workload asleep -----------
FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load record "$T/none" train sleep 2.5
expect_eq "neither: record exit 0" 0 $?
S=$(session_dir "$T/none")
expect_eq "neither: no held_back_by" null "$(held "$S" train)"
check "neither: the recorder's own summary.json agrees" \
    jq -e '.phases[0] | has("held_back_by") | not' "$S/summary.json"
"$RUNMON" summary "$S" --format text >"$T/none.txt"
check "neither: no line in the text output" sh -c "! grep -q 'held back by' '$T/none.txt'"
"$RUNMON" report "$S" -o "$T/none.html" >/dev/null 2>&1
check "neither: no line in the report" sh -c "! grep -q 'class=\"held\"' '$T/none.html'"

# --- the README's recipe (the program as written there) over all three ----------------------
PROG='.phases[] | select(.held_back_by) | "\(.path)\t\(.held_back_by[].text)"'
check "README recipe: the README has it" grep -qF "jq -r '$PROG' runs/latest/summary.json" \
    "$(dirname "$0")/../../README.md"
got=$(for s in in cap none; do jq -r "$PROG" "$T/$s/latest/summary.json"; done)
echo "$got" | sed 's/^/# recipe: /'
expect_eq "README recipe: one line per finding, path and text" \
    $'load\tinput-bound\nstep\tpower capped' "$(sed -E 's/(\t[a-z -]+):.*/\1/' <<<"$got")"
done_testing
