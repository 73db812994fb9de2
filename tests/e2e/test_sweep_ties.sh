#!/usr/bin/env bash
# The sweep table's best marks (issue 36): figures that print the same at the shown precision
# are ties (item 2: "0.349±0.000 Wh*" was marked best over an identical-looking "0.349±0.000
# Wh"); times within one sampling interval are ties (item 5: 0.600 s "beat" 0.601 s); a bar
# whose top is unknown reaches up without end (item 1).
# The figures are set in each run's summary.json, so the ties are known exactly.
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
K=$T/ties
# set_run SWEEP CFG E LOW HIGH TRAIN_S: the run's totals and its one phase's seconds.
set_run() {
    local id d
    id=$(jq -r --arg s "$1" --arg c "$2" 'select(.event == "ended" and .sweep == $s and .params.cfg == $c) | .session_id' "$K/index.jsonl")
    d=$K/$id
    jq --argjson e "$3" --argjson l "$4" --argjson h "$5" --argjson t "$6" \
        '.totals.energy_wh = $e | .totals.energy_wh_low = $l | .totals.energy_wh_high = $h
         | .phases = [{"path": "train", "name": "train", "depth": 0, "count": 1, "total_seconds": $t}]' \
        "$d/summary.json" >"$T/s.json"
    cat "$T/s.json" >"$d/summary.json"
}
for c in a b c; do "$RUNMON" record -q -o "$K" -i 0.2 --sweep s --param cfg=$c -- sleep 0.3; done
for c in x y; do "$RUNMON" record -q -o "$K" -i 0.2 --sweep u --param cfg=$c -- sleep 0.3; done
# a and b print alike (0.349±0.000 Wh) though their bars do not overlap; c is far off.
# train: a 10.00 s, b 10.15 s (within one 0.2 s interval: a tie), c 10.60 s.
set_run s a 0.34901 0.349008 0.349012 10.00
set_run s b 0.34920 0.349198 0.349202 10.15
set_run s c 0.5 0.49 0.51 10.60
"$RUNMON" sessions "$K" --summary --sweep s --format json >"$T/s.json"
expect_eq "item 2: energies that print alike are tied, not one of them the best" \
    '[[false,true],[false,true],[false,false]]' \
    "$(jq -c '[.sessions[] | [(.best | index("energy_wh") != null), (.best_tied | index("energy_wh") != null)]]' "$T/s.json")"
"$RUNMON" sessions "$K" --summary --sweep s --wide --format text >"$T/s.txt"
expect_match "item 2 text: a's 0.349±0.000 Wh marked =" "0\.349±0\.000 Wh=" "$(sed -n 2p "$T/s.txt")"
expect_match "item 2 text: b's too" "0\.349±0\.000 Wh=" "$(sed -n 3p "$T/s.txt")"
check "item 2 text: no energy marked best" bash -c "! grep -q 'Wh\*' '$T/s.txt'"
expect_eq "item 5: 10.00 s and 10.15 s, within one 0.2 s interval: tied; 10.60 s not" \
    '[true,true,false]' "$(jq -c '[.sessions[] | .best_tied | index("phase:train") != null]' "$T/s.json")"
expect_eq "item 5: each run's sampling interval in JSON" '[0.2,0.2,0.2]' "$(jq -c '[.sessions[].interval_s]' "$T/s.json")"
expect_match "item 5 text: a's 10.0s=" " 10\.0s=" "$(sed -n 2p "$T/s.txt")"
expect_match "item 5 text: b's 10.15 s as 10.1s= or 10.2s=" " 10\.[12]s=" "$(sed -n 3p "$T/s.txt")"

# Apart: x's energy and time are the best; y's bar has an unknown top (reaches up), so it
# overlaps x's only when its low is at or under x's high.
set_run u x 1.0 0.95 1.05 10.0
set_run u y 1.2 1.1 null 11.0
"$RUNMON" sessions "$K" --summary --sweep u --format json >"$T/u.json"
expect_eq "apart: x best for energy and time, neither tied" '[["energy_wh","phase:train"],[]]' \
    "$(jq -c '[.sessions[0].best, [.sessions[].best_tied[]]] | map(map(select(. == "energy_wh" or . == "phase:train")))' "$T/u.json")"
set_run u y 1.2 1.04 null 11.0
"$RUNMON" sessions "$K" --summary --sweep u --format json >"$T/u.json"
expect_eq "item 1: a bar with an unknown top overlaps a better run's when its low reaches it" \
    '[true,true]' "$(jq -c '[.sessions[] | .best_tied | index("energy_wh") != null]' "$T/u.json")"
expect_match "item 1 text: a bar with an unknown top prints ±?" "1\.200±\? Wh=" \
    "$("$RUNMON" sessions "$K" --summary --sweep u --wide --format text | sed -n 3p)"
expect_eq "item 1: --group-by: a run whose top is unknown leaves the mean's top unknown" \
    '[[1,0.95,1.05],[1.2,1.04,null]]' \
    "$("$RUNMON" sessions "$K" --summary --sweep u --group-by cfg --format json | jq -c '[.groups[].figures.energy_wh | [.mean, .mean_low, .mean_high]]')"
"$RUNMON" report --sweep u "$K" -o "$T/u.html" >/dev/null 2>&1
check "item 1: the sweep page shows the unknown top as ±?" grep -q '1\.200<small> &#177;?</small>' "$T/u.html"
done_testing
