#!/usr/bin/env bash
# Issue 36 item 1: energy over part of a run, with a bar that holds the rest. The time the
# samples do not cover (the run's edges, gaps, a phase's windows past them) is in the bar, from
# 0 W up to the GPU's power limit (enforced.power.limit, else power.limit), or with no known
# top when no limit was recorded; the figure says how much was not sampled; with no interval
# the energy is unknown. Before, a 1 s run sampled every 0.5 s read "0.087 Wh (0.087 to 0.087)".
. "$(dirname "$0")/lib.sh"

t0=1795773600 # 2026-11-27T10:00:00Z
q() { jq -c "$2" <<<"$1"; }

# ---- the issue's run: 1.02 s, two samples 0.5 s apart at 627.4 W, limit 700 W ------------
D=$T/half
mkdir -p "$D"
printf '{"format":"runmon-session","schema_version":1,"session_id":"20261127T100000Z-vm-1","status":"completed","started_at":"2026-11-27T10:00:00.000+00:00","ended_at":"2026-11-27T10:00:01.020+00:00","interval_s":0.5}\n' >"$D/session.json"
printf '%s\n' "ts,index,name,power.draw [W],enforced.power.limit [W]" \
    "2026-11-27T10:00:00.250+00:00,0,NVIDIA H200,627.40,700.00" \
    "2026-11-27T10:00:00.750+00:00,0,NVIDIA H200,627.40,700.00" >"$D/gpu.csv"
J=$("$RUNMON" summary "$D" --format json)
# 627.4 W x 0.5 s = 313.7 J (0.087139 Wh) sampled; 0.52 s not: up to 700 W x 0.52 s = 364 J.
expect_eq "the figure: the sampled 0.5 s only; 0.52 s of 1.02 not sampled" '[0.087139,0.52]' \
    "$(q "$J" '[.totals.energy_wh, .totals.energy_uncovered_s]')"
expect_eq "the bar: low as the readings give it, high + 700 W x 0.52 s + the resolution's 0.0025 J" '[0.087138,0.188251]' \
    "$(q "$J" '[.totals.energy_wh_low, .totals.energy_wh_high]')"
expect_eq "the true energy at 627.4 W for the whole 1.02 s (0.177763 Wh) lies in the bar" true \
    "$(q "$J" '(627.4 * 1.02 / 3600) as $e | .totals.energy_wh_low <= $e and $e <= .totals.energy_wh_high')"
expect_eq "the GPU's row the same" '[0.087139,0.087138,0.188251,0.52]' \
    "$(q "$J" '.gpus[0] | [.energy_wh, .energy_wh_low, .energy_wh_high, .energy_uncovered_s]')"
expect_match "text: the bar and what was not sampled" \
    'GPU energy 0\.087 Wh \(0\.087 to 0\.188; 0\.52 s unsampled\)' "$("$RUNMON" summary "$D" --format text)"

# ---- no power limit recorded: the bar's top is unknown ------------------------------------
cut -d, -f1-4 "$D/gpu.csv" >"$T/nolimit.csv" && cp "$T/nolimit.csv" "$D/gpu.csv"
J=$("$RUNMON" summary "$D" --format json)
expect_eq "no limit: the figure and the low stand, the top is null" '[0.087139,0.087138,null]' \
    "$(q "$J" '[.totals.energy_wh, .totals.energy_wh_low, .totals.energy_wh_high]')"
expect_match "text: '?' for the unknown top" 'GPU energy 0\.087 Wh \(0\.087 to \?; 0\.52 s unsampled\)' \
    "$("$RUNMON" summary "$D" --format text)"
# power.limit alone (no enforced.power.limit column) is a limit too.
sed -e '1s/$/,power.limit [W]/' -e '2,$s/$/,350.00/' "$T/nolimit.csv" >"$D/gpu.csv"
expect_eq "power.limit when no enforced.power.limit: top at max(350 W, the 627.4 W read) x 0.52 s" \
    0.177764 "$("$RUNMON" summary "$D" --format json | jq '.totals.energy_wh_high')"

# ---- one row: no interval, no energy --------------------------------------------------------
printf '%s\n' "ts,index,name,power.draw [W],enforced.power.limit [W]" \
    "2026-11-27T10:00:00.250+00:00,0,NVIDIA H200,627.40,700.00" >"$T/one.csv"
J=$("$RUNMON" summary --gpu-csv "$T/one.csv" --format json)
expect_eq "one row: energy unknown (null), not 0" '[null,null,null,null]' \
    "$(q "$J" '[.totals.energy_wh, .totals.energy_wh_low, .totals.energy_wh_high, .gpus[0].energy_wh]')"
expect_match "one row text: '-', not 0.000 Wh (0.000 to 0.000)" 'GPU energy - Wh$' \
    "$("$RUNMON" summary --gpu-csv "$T/one.csv" --format text | grep 'GPU energy')"

# ---- a 10 s run sampled from 2 s to 7 s, a gap, and a phase past the samples ----------------
D=$T/ten
mkdir -p "$D"
printf '{"format":"runmon-session","schema_version":1,"session_id":"20261127T100000Z-vm-1","status":"completed","started_at":"2026-11-27T10:00:00.000+00:00","ended_at":"2026-11-27T10:00:10.000+00:00","interval_s":1}\n' >"$D/session.json"
{
    echo "ts,index,name,power.draw [W],enforced.power.limit [W]"
    for i in 2 3 4 5 6 7; do echo "2026-11-27T10:00:0$i.000+00:00,0,NVIDIA H100,300.00,700.00"; done
} >"$D/gpu.csv"
printf '%s\n' "{\"type\":\"phase_enter\",\"pid\":7,\"t\":$((t0 + 1)),\"name\":\"P\",\"path\":\"P\",\"depth\":0}" \
    "{\"type\":\"phase_exit\",\"pid\":7,\"t\":$((t0 + 4)),\"name\":\"P\",\"path\":\"P\",\"depth\":0,\"seconds\":3.0,\"status\":\"ok\"}" >"$D/runlog.jsonl"
J=$("$RUNMON" summary "$D" --format json)
# Run: 1,500 J sampled (5 s at 300 W), 5 s not: + 3,500 J; the readings' own bar 0.025 J.
expect_eq "run edges: 1,500 J sampled, high + 700 W x 5 s" '[0.416667,0.41666,1.388896,5]' \
    "$(q "$J" '.totals | [.energy_wh, .energy_wh_low, .energy_wh_high, .energy_uncovered_s]')"
# Phase P [1 s, 4 s]: 600 J sampled over [2, 4]; [1, 2] not sampled: + 700 J; its end's lag
# (the sensor's 1 s average) + 150 J, the resolution 0.01 J: 1,450.01 J.
expect_eq "a phase starting before the first sample: its unsampled second in its bar" \
    '[0.166667,0.166664,0.402781,1,false]' \
    "$(q "$J" '.phases[0] | [.energy_wh, .energy_wh_low, .energy_wh_high, .energy_uncovered_s, .short_phase]')"
# A gap: rows at 0-3 s and 8-10 s (5 s apart: over 3 intervals): 5 s sampled, 5 s not.
{
    echo "ts,index,name,power.draw [W],enforced.power.limit [W]"
    for i in 00 01 02 03 08 09 10; do echo "2026-11-27T10:00:$i.000+00:00,0,NVIDIA H100,300.00,700.00"; done
} >"$D/gpu.csv"
J=$("$RUNMON" summary "$D" --format json)
expect_eq "a gap's 5 s are in the bar, as unsampled time" '[0.416667,1.388896,5,1]' \
    "$(q "$J" '[.totals.energy_wh, .totals.energy_wh_high, .totals.energy_uncovered_s, .data_quality.gaps.count]')"
done_testing
