#!/usr/bin/env bash
# 8 processes append 2,000 lines each to one run log at the same time: 4 shell loops of
# `runmon log` (the -O2 binary, so 8,000 invocations take seconds, not minutes) and 4
# C-API writers forked by the test_runlog_append unit binary. The result must be exactly
# 16,000 whole, valid lines, each writer's lines all present and in order.
. "$(dirname "$0")/lib.sh"
unset RUNMON_RUNLOG RUNMON_PHASE_PATH
F=$T/shared.jsonl
: >"$F"

for w in 0 1 2 3; do
    (
        for i in $(seq 0 1999); do
            "$RUNMON_REL" log --file "$F" event append via=cli "writer=$w" "seq=$i" || exit 1
        done
    ) &
    pids[$w]=$!
    track ${pids[$w]}
done
# Paced so the C-API writers are still running while the CLI loops are.
sleep 0.5
RM_APPEND_FILE=$F RM_APPEND_PACE_US=1500 CMOCKA_MESSAGE_OUTPUT=TAP \
    "$BUILD/tests/test_runlog_append" >"$T/api.out" 2>&1
expect_eq "C-API writers succeeded" 0 "$?"
fails=0
for w in 0 1 2 3; do wait "${pids[$w]}" || fails=$((fails + 1)); done
expect_eq "CLI loops succeeded" 0 "$fails"

expect_eq "16,000 lines" 16000 "$(wc -l <"$F")"
expect_eq "jq reads 16,000 JSON values" 16000 "$(jq -c . "$F" | wc -l)"
expect_eq "file ends with a newline" "0a" "$(tail -c 1 "$F" | od -An -tx1 | tr -d ' ')"
bad=$(jq -c 'select((.ts | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\+00:00$") | not)
    or .type != "event" or .event != "append" or (.pid | type) != "number" or (.t | type) != "number")' "$F" | wc -l)
expect_eq "every line has ts, type, event, pid, t" 0 "$bad"
expect_eq "each writer's 2,000 lines present once and in order" \
    "api0 api1 api2 api3 cli0 cli1 cli2 cli3" \
    "$(jq -r '"\(.data.via)\(.data.writer) \(.data.seq)"' "$F" | awk '
        { n = $1; if ($2 != next_seq[n] + 0) bad[n] = 1; next_seq[n] = $2 + 1 }
        END { for (n in next_seq) if (!bad[n] && next_seq[n] == 2000) print n }' | sort | paste -sd ' ')"
# The two kinds of writer really raced: their lines alternate many times in the file.
switches=$(jq -r .data.via "$F" | uniq | wc -l)
if [ "$switches" -gt 100 ]; then ok "API and CLI lines interleave ($switches runs)"; else not_ok "API and CLI lines interleave" "only $switches runs"; fi

done_testing
