#!/usr/bin/env bash
# Issue 22 section 4: three truth fixes found outside the tests.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/summary

# 1. Coverage per GPU; the top-level figure is the worst GPU's. GPU1 loses 6 of 10 s (2 -> 8)
#    while GPU0's rows go on every second: before, the run said coverage 1.
J=$("$RUNMON" summary --gpu-csv "$S/gpu-gap-one-gpu.csv" --format json)
expect_eq "coverage per GPU" '[1,0.4]' "$(jq -c '[.gpus[].coverage]' <<<"$J")"
expect_eq "data_quality.coverage is the worst GPU's (and its sampled seconds)" '[0.4,4,1]' \
    "$(jq -c '[.data_quality.coverage, .data_quality.sampled_seconds, .data_quality.coverage_gpu]' <<<"$J")"
expect_match "the text output says whose coverage it is" 'coverage 0\.400 of 10\.0 s \(the worst of 2 GPUs: GPU 1\)' \
    "$("$RUNMON" summary --gpu-csv "$S/gpu-gap-one-gpu.csv" --format text)"

# 2. Rows without identity or time: GPUs split by the period of the name sequence. A one-shot
#    query of 7 GTX 1080 Ti and 1 GTX 1080 was read as 2 GPUs (7 samples of one "1080 Ti").
F8=name,utilization.gpu,memory.used,power.draw
J=$("$RUNMON" summary --gpu-csv "$S/gpu-noheader-8gpus-oneshot.csv" --gpu-fields $F8 --format json 2>/dev/null)
expect_eq "one-shot of 7 + 1 named GPUs without identity or time: 8 GPUs, one sample each" \
    '[8,[1,1,1,1,1,1,1,1],[0,1,2,3,4,5,6,7]]' \
    "$(jq -c '[.totals.gpu_count, [.gpus[].samples], [.gpus[].index]]' <<<"$J")"
expect_match "a note says what was assumed" \
    'no index, uuid, bus id or time: GPUs told apart by the period of the name sequence, 8 rows' \
    "$(jq -r '.data_quality.notes[]' <<<"$J")"
J=$("$RUNMON" summary --gpu-csv "$S/gpu-noheader-8gpus-loop.csv" --gpu-fields $F8 --format json 2>/dev/null)
expect_eq "three such samples: 8 GPUs, 3 samples each" '[8,[3,3,3,3,3,3,3,3]]' \
    "$(jq -c '[.totals.gpu_count, [.gpus[].samples]]' <<<"$J")"
J=$("$RUNMON" summary --gpu-csv "$S/gpu-noheader-power-only.csv" --gpu-fields power.draw --format json 2>/dev/null)
expect_match "one value a line, no names, no time: the note says nothing decides" \
    'nothing tells GPUs or samples apart.*read as 3 samples of one GPU' \
    "$(jq -r '.data_quality.notes[]' <<<"$J")"

# 3. MIG: an instance's power and energy are the whole GPU's. Two instances of one H100 (same
#    bus id) at 300 W for 2 s: 600 J for the GPU, not 1,200 J for two.
M=$S/gpu-mig-instances.csv
J=$(TZ=UTC "$RUNMON" summary --gpu-csv "$M" --format json)
expect_eq "MIG instances of one GPU: the totals count its energy once (600 J)" 0.166667 \
    "$(jq '.totals.energy_wh' <<<"$J")"
expect_eq "issue 36 item 5: the totals' power counts the GPU once too (300 W, not 600 W)" \
    '{"mean":300,"max":300}' "$(jq -c '.totals.power_w' <<<"$J")"
expect_eq "each instance row says its power and energy are the whole GPU's" \
    '[[true,"whole GPU",true],[true,"whole GPU",false]]' \
    "$(jq -c '[.gpus[] | [.mig_instance, .power_scope, .energy_counted]]' <<<"$J")"
expect_match "a note says so" "MIG: power and energy on an instance's row are the whole GPU's" \
    "$(jq -r '.data_quality.notes[]' <<<"$J")"
txt=$(TZ=UTC "$RUNMON" summary --gpu-csv "$M" --format text)
expect_match "text: instance rows marked, and the mark explained" \
    "0\.167\*.*\* MIG instance: the whole GPU's power and energy, counted once in sums" "$(tr '\n' ' ' <<<"$txt")"
printf '%s\n' '{"type":"phase_enter","pid":7,"t":1795255200.5,"name":"p","path":"p","depth":0}' \
    '{"type":"phase_exit","pid":7,"t":1795255201.5,"name":"p","path":"p","depth":0,"seconds":1.0,"status":"ok"}' >"$T/mig-runlog.jsonl"
J=$(TZ=UTC "$RUNMON" summary --gpu-csv "$M" --runlog "$T/mig-runlog.jsonl" --format json)
expect_eq "a phase's energy counts the GPU once too (300 J), and the 1 s phase is short" \
    '[0.083333,true,2]' "$(jq -c '.phases[0] | [.energy_wh, .short_phase, (.gpus | length)]' <<<"$J")"
expect_match "text: the short phase marked in the phase table" '0\.083~' \
    "$(TZ=UTC "$RUNMON" summary --gpu-csv "$M" --runlog "$T/mig-runlog.jsonl" --format text)"
mkdir -p "$T/migses" && cp "$M" "$T/migses/gpu.csv" && cp "$T/mig-runlog.jsonl" "$T/migses/runlog.jsonl"
TZ=UTC "$RUNMON" report "$T/migses" -o "$T/mig.html" >/dev/null 2>&1
check "report: the instance row says its power is the whole GPU's" \
    grep -q "MIG instance: power and energy are the whole GPU's" "$T/mig.html"
check "report: the phase table shows the bar and the short mark" \
    grep -Eq '0\.083<span class="short"[^>]*>~</span> <small>\(0\.000&#8211;0\.[0-9]+\)</small>' "$T/mig.html"
done_testing
