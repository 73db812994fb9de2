#!/usr/bin/env bash
# The summary's metrics: per metric and per phase last/min/max/count, first and last step and
# time, from a run log written by runmon log / runmon phase; the text block; bad lines as
# counted, quoted notes (no raw byte); and the statistics, not the points: a run log with 15
# times the metric lines takes no more memory.
. "$(dirname "$0")/lib.sh"
unset RUNMON_PHASE_PATH
: "${RUNMON_REL:=$BUILD/runmon}"
export RUNMON_RUNLOG=$T/run.jsonl L=$T/run.jsonl

"$RUNMON" log event session_start
"$RUNMON" phase train -- bash -c 'for i in 0 1 2; do "$RUNMON" log metric --step $i loss=$((3 - i)).5 acc=0.$((i + 1)); done'
"$RUNMON" phase eval -- "$RUNMON" log metric acc=0.95
"$RUNMON" log objective acc:max loss:min:best
printf '%s\n' '{"ts":"2026-11-27T10:00:00.000+00:00","type":"metric","values":{"loss":"NaN","a\u001b]0;x\u0007b":2}}' \
    '{"ts":"2026-11-27T10:00:00.000+00:00","type":"metric","step":-1,"values":{"loss":1}}' >>"$L"
j=$("$RUNMON" summary --runlog "$L" --format json)
expect_eq "run metrics" '{"last":1.5,"min":1.5,"max":3.5,"count":3,"first_step":0,"last_step":2}' \
    "$(jq -c '.metrics.loss | del(.first_t, .last_t)' <<<"$j")"
expect_eq "a line without a step takes its order among the metric lines" '[0.95,3,4]' \
    "$(jq -c '.metrics.acc | [.last, .last_step, .count]' <<<"$j")"
expect_eq "first_t and last_t are the lines' epoch seconds" "true" \
    "$(jq '.metrics.loss | .first_t > 1.7e9 and .last_t >= .first_t' <<<"$j")"
expect_eq "each phase's metrics are those of the lines inside it" '[["train",["loss","acc"],0.3],["eval",["acc"],0.95]]' \
    "$(jq -c '[.phases[] | [.path, (.metrics | keys_unsorted), .metrics.acc.last]]' <<<"$j")"
expect_eq "objectives as the run log wrote them" '[{"metric":"acc","goal":"max","pick":"last"},{"metric":"loss","goal":"min","pick":"best"}]' \
    "$(jq -c .objectives <<<"$j")"
notes=$(jq -r '.data_quality.notes[]' <<<"$j")
expect_match "bad values: a counted, quoted note" 'runlog: 2 metric values ignored: .*\(first: \{"loss":"NaN"\}\)' "$notes"
expect_match "bad lines: a counted, quoted note" 'runlog: 1 metric line ignored: .*\(first: -1\)' "$notes"
txt=$("$RUNMON" summary --runlog "$L" --format text)
expect_match "text: the metrics block" 'Metrics \(the run log.s metric lines; steps first-last\)' "$txt"
expect_match "text: a metric's line" '  loss +1\.5 +1\.5 +3\.5 +3 0-2' "$txt"
expect_match "text: the objectives" 'objectives: acc:max loss:min:best' "$txt"
if LC_ALL=C grep -q $'\x1b' <<<"$txt"; then not_ok "text: no raw escape byte"; else ok "text: no raw escape byte"; fi
expect_eq "a run log without metric lines has no metrics key" "false false" \
    "$(printf '%s\n' '{"ts":"2026-11-27T10:00:00.000+00:00","type":"phase","name":"a","seconds":1}' >"$T/plain.jsonl"
       "$RUNMON" summary --runlog "$T/plain.jsonl" --format json | jq -c '[has("metrics"), has("objectives")] | join(" ")' -r)"

# The statistics, not the points: 20,000 and 300,000 metric lines in one phase take the same
# memory (the peak RSS of the two differs by less than 8 MiB; the release build, as ASan's
# quarantine holds freed memory) and the same summary size.
gen() { # N FILE
    awk -v n="$1" 'BEGIN {
        print "{\"ts\":\"2026-11-27T10:00:00.000+00:00\",\"type\":\"phase_enter\",\"name\":\"fit\",\"path\":\"fit\",\"depth\":0,\"pid\":1}"
        for (i = 0; i < n; i++)
            printf "{\"ts\":\"2026-11-27T10:%02d:%02d.%03d+00:00\",\"type\":\"metric\",\"step\":%d,\"values\":{\"loss\":%.6f,\"acc\":%.6f},\"pid\":1}\n", int(i / 6000000) % 60, int(i / 100000) % 60, int(i / 100) % 1000, i, 1 / (1 + i), i / (n + 1)
        print "{\"ts\":\"2026-11-27T10:59:59.000+00:00\",\"type\":\"phase_exit\",\"name\":\"fit\",\"path\":\"fit\",\"depth\":0,\"seconds\":3599.0,\"status\":\"ok\",\"pid\":1}"
    }' >"$2"
}
gen 20000 "$T/small.jsonl"
gen 300000 "$T/big.jsonl"
for k in small big; do
    /usr/bin/time -f %M -o "$T/$k.rss" "$RUNMON_REL" summary --runlog "$T/$k.jsonl" --format json >"$T/$k.json"
done
expect_eq "300,000 lines: every one counted, run and phase" "300000 300000 299999" \
    "$(jq -r '"\(.metrics.loss.count) \(.phases[0].metrics.acc.count) \(.metrics.loss.last_step)"' "$T/big.json")"
small=$(cat "$T/small.rss") big=$(cat "$T/big.rss")
if [ $((big - small)) -lt 8192 ]; then ok "memory does not grow with the lines ($small vs $big KiB)"
else not_ok "memory does not grow with the lines" "$small vs $big KiB"; fi
expect_eq "nor the summary" "$(jq -c '.metrics | map_values(del(.last, .min, .max, .count, .last_step, .last_t)) ' "$T/small.json" | wc -c)" \
    "$(jq -c '.metrics | map_values(del(.last, .min, .max, .count, .last_step, .last_t))' "$T/big.json" | wc -c)"
done_testing
