#!/usr/bin/env bash
# runmon log metric / objective: the lines they write (the contract's field order, finite
# numbers as the shortest round-trip text), every refused input (exit 2, one clear line with
# no raw control byte, nothing written).
. "$(dirname "$0")/lib.sh"
unset RUNMON_RUNLOG RUNMON_PHASE_PATH
L=$T/run.jsonl

"$RUNMON" log --file "$L" metric --step 120 loss=0.41 acc=1 'top-1 acc=-2.5e-3'
expect_eq "log metric exits 0" 0 "$?"
expect_match "metric line: ts, type, step, values, pid, t" \
    '^\{"ts":"[^"]+","type":"metric","step":120,"values":\{"loss":0\.41,"acc":1\.0,"top-1 acc":-0\.0025\},"pid":[0-9]+,"t":[0-9]+\.[0-9]{3}\}$' \
    "$(tail -n 1 "$L")"
RUNMON_RUNLOG=$L "$RUNMON" log metric --step=0 loss=2.3
"$RUNMON" log --file "$L" metric -- loss=1e-5
expect_eq "step only when given" '[0,null]' "$(tail -n 2 "$L" | jq -sc '[.[].step]')"
expect_eq "values read back" '[2.3,1e-05]' "$(tail -n 2 "$L" | jq -sc '[.[].values.loss]')"
"$RUNMON" log --step 7 --file "$L" metric acc=0.5
expect_eq "--step before metric" '7 0.5' "$(tail -n 1 "$L" | jq -r '"\(.step) \(.values.acc)"')"
"$RUNMON" log --file "$L" objective acc:max loss:min:best
expect_eq "objective line" '[{"metric":"acc","goal":"max","pick":"last"},{"metric":"loss","goal":"min","pick":"best"}]' \
    "$(tail -n 1 "$L" | jq -c .objectives)"
expect_eq "every line is valid JSON" 5 "$(jq -c . "$L" | wc -l)"

before=$(md5sum <"$L")
refuse() { # NAME REGEX ARGS...
    local name=$1 re=$2 err rc
    shift 2
    err=$("$RUNMON" log --file "$L" "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -eq 2 ] && [[ $err =~ ^runmon\ log:\ .*$re ]] && [ "$(wc -l <<<"$err")" -eq 1 ] &&
        ! LC_ALL=C grep -q '[[:cntrl:]]' <<<"$err" && [ "$(md5sum <"$L")" = "$before" ]; then
        ok "refused: $name"
    else
        not_ok "refused: $name" "rc=$rc" "stderr: $err"
    fi
}
refuse "NaN" "metric 'loss': the value must be a finite number, not 'nan'" metric loss=nan
refuse "NaN spelled as Python does" "finite number, not 'NaN'" metric loss=NaN
refuse "inf" "finite number, not 'inf'" metric loss=inf
refuse "an overflow" "finite number, not '1e999'" metric loss=1e999
refuse "a string" "finite number, not 'low'" metric loss=low
refuse "an empty value" "finite number, not ''" metric loss=
refuse "a value with control bytes, quoted escaped" "not '\\\\x1b\]0;x\\\\x07'" metric "loss=$(printf '\033]0;x\007')"
refuse "a name with control bytes, quoted escaped" "metric name 'a\\\\x01b' is not UTF-8 text" metric "$(printf 'a\001b')=1"
refuse "a name with /" "contains '/'" metric train/loss=1
refuse "a name given twice" "metric 'loss' is given twice" metric loss=1 loss=2
refuse "1,000 keys in one line" "a metric line carries 1 to 256 values, not 1000" metric $(seq -f 'k%g=1' 1 1000)
refuse "no values" "missing NAME=VALUE" metric
refuse "no values after --step" "missing NAME=VALUE" metric --step 3
refuse "a negative step" "--step must be an integer >= 0, not '-1'" metric --step -1 a=1
refuse "a fractional step" "--step must be an integer >= 0, not '1.5'" metric --step 1.5 a=1
refuse "--step without N" "--step needs N" metric --step
refuse "--step on an event" "--step is for metric lines only" --step 3 event e
refuse "an argument without =" "'oops': expected NAME=VALUE" metric oops
refuse "a bad goal" "objective 'acc:up': the goal must be min or max" objective acc:up
refuse "no objective" "missing METRIC:min\|max" objective
err=$("$RUNMON" log metric a=1 2>&1); rc=$?
expect_eq "a metric line without a run log (no session): exit 2" 2 "$rc"
expect_match "... with the run log's message" "^runmon log: no run log given" "$err"
out=$("$RUNMON" log --help)
expect_match "log --help shows metric" "runmon log \[--file PATH\] metric \[--step N\] NAME=VALUE" "$out"
expect_match "log --help shows objective" "runmon log \[--file PATH\] objective METRIC:min\|max" "$out"
done_testing
