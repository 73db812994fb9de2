#!/usr/bin/env bash
# Issue 12's measured defects of `runmon summary`: header-less files (--gpu-fields), GPUs
# without identity columns, phase energy only inside the phase's windows, gaps per GPU.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/summary

# Phase energy: rows at t=0..5 s (power 100,20,80,10,160,30 W), phase `fwd` in [1,3) and
# [3.7,4.5). The sample at t=3 is outside the phase: nothing between 2 and 4 is bridged.
P=$S/phase-windows
J=$("$RUNMON" summary --gpu-csv "$P/gpu.csv" --runlog "$P/runlog.jsonl" --format json)
# Independent: the clipped integral of the straight line between neighbouring samples.
want=$(python3 - "$P/gpu.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
t = [float(r[0][17:23]) for r in rows]
p = [float(r[3]) for r in rows]
e = s = 0.0
for a, b in [(1, 3), (3.7, 4.5)]:
    for i in range(len(t) - 1):
        x, y = max(a, t[i]), min(b, t[i + 1])
        if y <= x: continue
        at = lambda u: p[i] + (p[i + 1] - p[i]) * (u - t[i]) / (t[i + 1] - t[i])
        e += (y - x) * (at(x) + at(y)) / 2
        s += y - x
print('%.6f %.3f' % (e / 3600, s))
PY
)
expect_eq "phase windows: independent integral is 200 J over 2.8 s" "0.055556 2.800" "$want"
got=$(jq -r '.phases[0].gpus[0] | "\(.energy_wh) \(.sampled_seconds)"' <<<"$J")
expect_eq "phase energy only inside its windows (200 J, not bridged over t=3)" \
    "$(awk '{printf "%s %s", $1+0, $2+0}' <<<"$want")" "$got"
dur=$(jq '.phases[0].total_seconds' <<<"$J")
check "phase sampled seconds never exceed its duration" \
    awk -v s="$(jq '.phases[0].gpus[0].sampled_seconds' <<<"$J")" -v d="$dur" 'BEGIN{exit !(s <= d)}'

# GPUs without index/uuid/pci/timestamp: the cycle of names, never rows of two names merged.
J=$("$RUNMON" summary --gpu-csv "$S/gpu-two-names.csv" --format json)
expect_eq "two named GPUs without identity stay two" \
    '[[0,"NVIDIA GeForce GTX 1080 Ti",3,90,11000,240],[1,"NVIDIA GeForce GTX 1060 6GB",3,10,2000,50]]' \
    "$(jq -c '[.gpus[]|[.index,.name,.samples,.util_pct.mean,.vram_mb.peak,.power_w.mean]]' <<<"$J")"

# Same names with a time column: the time groups the sample, position k is GPU k.
printf '%s\n' 'timestamp, name, power.draw [W]' \
    '2026/11/21 10:00:00.000, NVIDIA H100, 100 W' '2026/11/21 10:00:00.000, NVIDIA H100, 300 W' \
    '2026/11/21 10:00:01.000, NVIDIA H100, 100 W' '2026/11/21 10:00:01.000, NVIDIA H100, 300 W' >"$T/same.csv"
expect_eq "identical names with a time column: GPU k by position" '[[0,100],[1,300]]' \
    "$("$RUNMON" summary --gpu-csv "$T/same.csv" --format json | jq -c '[.gpus[]|[.index,.power_w.mean]]')"

# Gaps per GPU: GPU1 has a 6 s hole (2 -> 8) while GPU0's rows go on every second.
J=$("$RUNMON" summary --gpu-csv "$S/gpu-gap-one-gpu.csv" --format json)
expect_eq "gaps per GPU" '[{"count":0,"seconds":0},{"count":1,"seconds":6}]' \
    "$(jq -c '[.gpus[].gaps]' <<<"$J")"
expect_eq "data_quality.gaps is the sum over GPUs" '[{"count":1,"seconds":6},{"count":1,"seconds":6}]' \
    "$(jq -c '[.data_quality.gaps, .data_quality.files[0].gaps]' <<<"$J")"

# Header-less 3-column file: --gpu-fields gives its fields; without it the error says why.
F=$S/gpu-noheader-power.csv
J=$(TZ=UTC "$RUNMON" summary --gpu-csv "$F" --gpu-fields timestamp,index,power.draw --format json); rc=$?
expect_eq "--gpu-fields: exit 0" 0 "$rc"
# 150,250,150 W one second apart: 200 + 200 J.
expect_eq "--gpu-fields: power and energy" '[0,183.333,0.111111]' \
    "$(jq -c '[.gpus[0].index,.gpus[0].power_w.mean,.gpus[0].energy_wh]' <<<"$J")"
expect_match "--gpu-fields named in the note" "assumed columns timestamp,index,power.draw \(--gpu-fields\)" \
    "$(jq -r '.data_quality.notes[0]' <<<"$J")"
err=$("$RUNMON" summary --gpu-csv "$F" --format json 2>&1 >/dev/null); rc=$?
expect_eq "no list fits: exit 2" 2 "$rc"
expect_match "no list fits: column count and the list assumed" \
    "the rows have 3 columns, the list assumed \(legacy list\) has 9: timestamp,utilization.gpu,.*--gpu-fields" "$err"
expect_match "--help names --gpu-fields" "--gpu-fields LIST" "$("$RUNMON" summary --help)"
done_testing
