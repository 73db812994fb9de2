#!/usr/bin/env bash
# Per-phase figures survive retention: a sealed segment's aggregate keeps the part of every
# phase it overlaps, so the summary of a session whose segments were pruned (their files
# deleted by a later recorder's retention) gives the same phase figures as before pruning.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1 RUNMON
K=$T/sink

# Phases across many small segments: one entered twice, one nested in it.
"$RUNMON" record -q -o "$K" -i 0.1 --rollover-mb 0.002 --retention-files 0 --retention-total-mb 0 \
    -- sh -c '"$RUNMON" phase load -- "$RUNMON" phase inner -- sleep 1.5
              "$RUNMON" phase idle -- sleep 1
              "$RUNMON" phase load -- sleep 1.2'
expect_eq "record with phases: exit 0" 0 $?
s=$(readlink "$K/latest")
sealed=$(ls "$K/$s" | grep -c '^gpu-[0-9]*\.csv$')
check "several sealed gpu segments ($sealed)" test "$sealed" -ge 4
m=$K/$s/state.json  # the session's segments and their aggregates
expect_eq "sealed gpu aggregates keep phase partials" true \
    "$(jq '[.segments[] | select(.stream == "gpu" and .state == "sealed") | .aggregate.phases | type == "array"] | all' "$m")"
expect_eq "a partial names its phase by path, its GPUs by key" true \
    "$(jq '[.segments[] | .aggregate.phases // [] | .[] | (.path | type == "string") and (.gpus | all(.key and .stats.samples >= 0))] | all' "$m")"

norm='del(.generated_at, .data_quality.files, .sink)'
"$RUNMON" summary "$K" --session "$s" --format json >"$T/before.json" 2>/dev/null
expect_eq "before pruning: nothing pruned" 0 "$(jq .sink.pruned_segments "$T/before.json")"
expect_eq "three phases, with samples" "idle load load/inner" \
    "$(jq -r '[.phases[] | select(.gpus[0].samples > 0) | .path] | sort | join(" ")' "$T/before.json")"

# A later recorder's retention (one sealed segment per stream in the whole sink) prunes them.
"$RUNMON" record -q -o "$K" -i 0.1 --retention-files 1 -- true
left=$(ls "$K/$s" | grep -c '^gpu-[0-9]*\.csv$')
check "retention deleted sealed files ($sealed -> $left)" test "$left" -lt "$sealed"
"$RUNMON" summary "$K" --session "$s" --format json >"$T/after.json" 2>/dev/null
expect_eq "after pruning: exit 0" 0 $?
pruned=$(jq .sink.pruned_segments "$T/after.json")
check "the summary used pruned segments' aggregates ($pruned)" test "$pruned" -ge 3
expect_eq "phase figures after pruning = before" "$(jq -S '.phases' "$T/before.json")" \
    "$(jq -S '.phases' "$T/after.json")"
expect_eq "the whole summary after pruning = before" "$(jq -S "$norm" "$T/before.json")" \
    "$(jq -S "$norm" "$T/after.json")"

# --phase selects among the partials by path.
"$RUNMON" summary "$K" --session "$s" --phase '^load' --format json >"$T/sel.json" 2>/dev/null
expect_eq "--phase after pruning: the same figures for the phases kept" \
    "$(jq -S '[.phases[] | select(.path | test("^load"))]' "$T/before.json")" "$(jq -S '.phases' "$T/sel.json")"

done_testing
