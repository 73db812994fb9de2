#!/usr/bin/env bash
# Issue 22 §2, the sweep table ("a sweep, not a run"): each run's energy with its error bar
# (summary.json totals.energy_wh_low/high) in text, CSV and JSON; the best energy is marked
# only when no other run's bar overlaps the best run's, else every run whose bar overlaps it
# is marked tied ("=" in text, "best_tied" in JSON); --group-by gives the mean's bar.
# The figures are set in each run's summary.json, so the overlaps are known exactly.
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
K=$T/bars
# set_energy SWEEP CFG E LOW HIGH: the run's totals (LOW "-" drops the bar, as an old summary).
set_energy() {
    local id d
    id=$(jq -r --arg s "$1" --arg c "$2" 'select(.event == "ended" and .sweep == $s and .params.cfg == $c) | .session_id' "$K/index.jsonl")
    d=$K/$id
    if [ "$4" = - ]; then
        jq --argjson e "$3" '.totals.energy_wh = $e | del(.totals.energy_wh_low, .totals.energy_wh_high)' "$d/summary.json" >"$T/s.json"
    else
        jq --argjson e "$3" --argjson l "$4" --argjson h "$5" \
            '.totals.energy_wh = $e | .totals.energy_wh_low = $l | .totals.energy_wh_high = $h' "$d/summary.json" >"$T/s.json"
    fi
    cat "$T/s.json" >"$d/summary.json"
}
for c in a b c; do "$RUNMON" record -q -o "$K" -i 0.2 --sweep tie --param cfg=$c --param g=$([ $c = c ] && echo 2 || echo 1) -- sleep 0.3; done
for c in x y z; do "$RUNMON" record -q -o "$K" -i 0.2 --sweep apart --param cfg=$c -- sleep 0.3; done
set_energy tie a 1.0 0.95 1.05
set_energy tie b 1.04 0.99 1.09 # overlaps a's bar: not told apart
set_energy tie c 2.0 1.9 2.1
set_energy apart x 1.0 0.95 1.05
set_energy apart y 1.2 1.1 1.3 # its bar starts above x's end: x is the best
set_energy apart z 1.5 - -     # no bar (an older summary): the value alone

# ---- overlapping bars: tied, none called the best ----
"$RUNMON" sessions "$K" --summary --sweep tie --format json >"$T/t.json"
expect_eq "json: each run's bar from totals" '[[1,0.95,1.05],[1.04,0.99,1.09],[2,1.9,2.1]]' \
    "$(jq -c '[.sessions[] | [.energy_wh, .energy_wh_low, .energy_wh_high]]' "$T/t.json")"
expect_eq "json: overlapping bars: energy in no run's best" '[false,false,false]' \
    "$(jq -c '[.sessions[] | .best | index("energy_wh") != null]' "$T/t.json")"
expect_eq "json: the two runs whose bars overlap are best_tied, the third not" '[true,true,false]' \
    "$(jq -c '[.sessions[] | .best_tied | index("energy_wh") != null]' "$T/t.json")"
# (The runs' durations, all about 0.3 s at -i 0.2, are tied too: within one sampling interval,
# issue 36. So only the figures other than the duration are looked at here.)
expect_eq "json: other figures keep best (no bar): best_tied holds energy only" '["energy_wh"]' \
    "$(jq -c '[.sessions[].best_tied[] | select(. != "duration_s")] | unique' "$T/t.json")"
COLUMNS=100 "$RUNMON" sessions "$K" --summary --sweep tie --format text >"$T/t.txt"
expect_match "text: a's energy with its bar, marked tied" "1\.000±0\.050 Wh=" "$(sed -n 2p "$T/t.txt")"
expect_match "text: b's, the larger side as the half-width, tied" "1\.040±0\.050 Wh=" "$(sed -n 3p "$T/t.txt")"
expect_match "text: c's, not marked" "2\.000±0\.100 Wh( |$)" "$(sed -n 4p "$T/t.txt")"
check "text: no energy cell is marked best" bash -c "! grep -q 'Wh\*' '$T/t.txt'"
expect_match "text: the legend says what = means" "=: tied for" "$(cat "$T/t.txt")"
check "text: within COLUMNS=100" test "$(python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$T/t.txt")" -le 100

# ---- bars apart: the best is the best ----
"$RUNMON" sessions "$K" --summary --sweep apart --format json >"$T/a.json"
expect_eq "json: bars apart: energy best for x only" '[true,false,false]' \
    "$(jq -c '[.sessions[] | .best | index("energy_wh") != null]' "$T/a.json")"
expect_eq "json: bars apart: no tie" '[]' "$(jq -c '[.sessions[].best_tied[] | select(. != "duration_s")]' "$T/a.json")"
expect_eq "json: a run without a bar: nulls" 'null null' \
    "$(jq -r '.sessions[2] | "\(.energy_wh_low) \(.energy_wh_high)"' "$T/a.json")"
"$RUNMON" sessions "$K" --summary --sweep apart --wide --format text >"$T/a.txt"
expect_match "text: x marked best" "1\.000±0\.050 Wh\*" "$(sed -n 2p "$T/a.txt")"
expect_match "text: a run without a bar: its value alone" " 1\.500 Wh " "$(sed -n 4p "$T/a.txt")"

# ---- CSV: the bar's columns beside energy_wh ----
"$RUNMON" sessions "$K" --summary --sweep apart --format csv >"$T/a.csv"
expect_match "csv: energy_wh_low, energy_wh_high after energy_wh" ",energy_wh,energy_wh_low,energy_wh_high(,|$)" "$(head -1 "$T/a.csv")"
expect_eq "csv: the values (empty without a bar)" "1,0.95,1.05 1.2,1.1,1.3 1.5,, " \
    "$(python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])): print(r["energy_wh"], r["energy_wh_low"], r["energy_wh_high"], sep=",", end=" ")' "$T/a.csv")"

# ---- --group-by: the mean's bar is the mean of the runs' lows and highs ----
"$RUNMON" sessions "$K" --summary --sweep tie --group-by g --format json >"$T/g.json"
expect_eq "group-by json: mean_low, mean_high" '[[1.02,0.97,1.07],[2,1.9,2.1]]' \
    "$(jq -c '[.groups[].figures.energy_wh | [.mean, .mean_low, .mean_high] | map(. * 1000 | round / 1000)]' "$T/g.json")"
expect_match "group-by csv: the bar's columns" "energy_wh_std,energy_wh_mean_low,energy_wh_mean_high" \
    "$("$RUNMON" sessions "$K" --summary --sweep tie --group-by g --format csv | head -1)"
expect_match "group-by text: mean ±bar, sd" "1\.020±0\.050 Wh sd 0\.028 Wh" \
    "$("$RUNMON" sessions "$K" --summary --sweep tie --group-by g --wide --format text | sed -n 2p)"
# ---- narrow text: the bars go before a figure is cut, the ties stay ----
COLUMNS=60 "$RUNMON" sessions "$K" --summary --sweep tie --format text >"$T/n.txt"
expect_match "narrow text: a's energy without its bar, still tied" " 1\.000 Wh=" "$(sed -n 2p "$T/n.txt")"
expect_match "narrow text: a note says the bars were left out" "error bars left out to fit the width" "$(cat "$T/n.txt")"
check "narrow text: no ± in the rows" bash -c "! sed -n '2,4p' '$T/n.txt' | grep -q '±'"

# ---- the single-session report: the run's and each GPU's energy with its bar ----
id=$(jq -r 'select(.event == "ended" and .params.cfg == "a") | .session_id' "$K/index.jsonl")
"$RUNMON" report "$K/$id" -o "$T/r.html" >/dev/null
# (and the seconds no sample covered, issue 36: the run's edges)
expect_match "report: the Energy card with its bar" 'Energy</div><div class="value">1\.00 Wh <small class="ebar">\(0\.950&#8211;1\.050(; [0-9.]+ s unsampled)?\)</small>' "$(cat "$T/r.html")"
want=$(jq -r '.gpus[0] | "\(.energy_wh) \(.energy_wh_low) \(.energy_wh_high)"' "$K/$id/summary.json" |
    awk '{ printf "<td>%.3f <small class=\"ebar\">(%.3f\\&#8211;%.3f", $1, $2, $3 }')
expect_match "report: the GPU table's energy with its bar" "$(printf '%s' "$want" | sed 's/[.()]/\\&/g')(; [0-9.]+ s unsampled)?\)</small>" "$(cat "$T/r.html")"
done_testing
