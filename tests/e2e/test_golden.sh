#!/usr/bin/env bash
# Every fixture session, sink and capture through `runmon summary` gives exactly the output
# recorded in fixtures/golden/out (apart from generated_at). Recorded before the layering of
# issue 9; it proves that a change meant to keep behaviour keeps it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../golden/lib.sh"
n=0
while IFS=$'\t' read -r name args; do
    want=$FIXTURES/golden/out/$name
    # shellcheck disable=SC2086
    golden_run "$RUNMON" "$name" $args >"$T/$name"
    if [ -f "$want" ] && cmp -s "$want" "$T/$name"; then
        ok "golden: $name"
    else
        not_ok "golden: $name" "$(diff "$want" "$T/$name" 2>&1 | head -20)"
    fi
    n=$((n + 1))
done < <(golden_cases)
check "golden: more than 60 cases ran ($n)" test "$n" -gt 60
done_testing
