#!/usr/bin/env bash
# Issue 25: what `runmon top` (and the other readers of a sink) show a new user. The live
# session is the one shown while a recording runs (a dead recorder's session settled first),
# the sink is found from the current folder, and completed phases written by the Python
# module (Debian's python3) show their name.
. "$(dirname "$0")/lib.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_APPS RUNMON_RUNLOG \
    RUNMON_PHASE_PATH NO_COLOR
title() { "$RUNMON" top --once --width 200 "$@" 2>/dev/null | head -1; }

# (1) the live session, not the previous finished one.
"$RUNMON" record -q -o "$T/s" -i 0.2 -- sleep 0.3 >/dev/null
expect_eq "a first, finished session" 0 "$?"
first=$(session_dir "$T/s")
"$RUNMON" record -q -o "$T/s" -i 0.2 -- sleep 20 >/dev/null 2>&1 &
rec=$!
track "$rec"
check "a second session records" wait_for \
    "[ \"\$(ls -d '$T'/s/2*/ | wc -l)\" -ge 2 ] && [ \"\$(rows '$T/s/latest/gpu.csv')\" -ge 2 ]" 15
live=$(basename "$(readlink "$T/s/latest")")
expect_match "top SINK shows the live session" "^runmon top .*$live.* running " "$(title "$T/s")"
"$RUNMON" top --once "$T/s" 2>"$T/live.err" >/dev/null
expect_eq "top SINK names the live session on stderr" "runmon top: session $live" "$(cat "$T/live.err")"
# Its recorder killed: the session is settled as the sink's recovery does, and shown so.
kids=$(cat /proc/"$rec"/task/*/children 2>/dev/null)
{ kill -9 "$rec"; wait "$rec"; } 2>/dev/null
for k in $kids; do kill -9 "$k" 2>/dev/null; done # its command and collectors, by pid
expect_match "a dead recorder's session: shown settled (interrupted)" \
    "^runmon top .*$live.* interrupted " "$(title "$T/s")"
expect_eq "... and the index says so" interrupted \
    "$(jq -r "select(.session_id == \"$live\") | .status" "$T/s/index.jsonl" | tail -1)"
check "the first session is still there" test -f "$first/session.json"

# (2) the sink found from the current folder.
mkdir -p "$T/p"
"$RUNMON" record -q -o "$T/p/runmon" -i 0.2 -- sleep 0.3 >/dev/null
psid=$(basename "$(session_dir "$T/p/runmon")")
check "a sink in p/runmon" test -n "$psid"
for dir in "$T/p/runmon" "$T/p"; do
    where=${dir#"$T/"}
    (cd "$dir" && "$RUNMON" top --once >"$T/cwd.out" 2>"$T/cwd.err")
    expect_eq "cd $where; top --once exits 0" 0 "$?"
    expect_match "cd $where; top --once: the sink's session" "$psid" "$(head -1 "$T/cwd.out")"
    (cd "$dir" && "$RUNMON" summary --format json >"$T/cwd.json" 2>"$T/cwd.err")
    expect_eq "cd $where; summary exits 0" 0 "$?"
    expect_eq "cd $where; summary: the sink's session" "$psid" \
        "$(jq -r .sink.session_id "$T/cwd.json")"
    (cd "$dir" && "$RUNMON" sessions --format json >"$T/cwd.json" 2>"$T/cwd.err")
    expect_eq "cd $where; sessions exits 0" 0 "$?"
    expect_eq "cd $where; sessions lists the session" "$psid" \
        "$(jq -r '.sessions[0].session_id' "$T/cwd.json")"
    rm -f "$T/p/runmon/$psid/report.html"
    (cd "$dir" && "$RUNMON" report >"$T/cwd.out" 2>"$T/cwd.err")
    expect_eq "cd $where; report exits 0" 0 "$?"
    check "cd $where; report writes the session's report" test -s "$T/p/runmon/$psid/report.html"
done
t=$(cd "$T/p/runmon" && "$RUNMON" top --once . 2>/dev/null | head -1)
expect_match "top --once . in a sink" "$psid" "$t"
t=$(cd "$T/p/runmon/$psid" && "$RUNMON" top --once 2>/dev/null | head -1)
expect_match "top --once in a session folder: that session" "$psid" "$t"
mkdir -p "$T/nothing"
for cmd in "top --once" summary report sessions; do
    (cd "$T/nothing" && $RUNMON $cmd >/dev/null 2>"$T/none.err")
    rc=$?
    expect_eq "cd to a folder without a sink; $cmd exits 2" 2 "$rc"
    check "... and says where it looked" grep -q "no sink here" "$T/none.err"
done
for cmd in top summary report sessions; do
    check "$cmd --help says how the sink is found" \
        grep -q "current folder" <("$RUNMON" $cmd --help)
done

# (3) completed phases from the Python module: top shows their name.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
PYTHONPATH="$REPO/python" "$RUNMON" record -q -o "$T/py" -i 0.2 -- "$PY" -c '
import runmon, time
runmon.log_phase("eval_step", 0.25, accuracy=0.9)
with runmon.phase("train"):
    time.sleep(0.3)
' >/dev/null
expect_eq "python3 writes a run log during a record" 0 "$?"
check "the run log holds the completed phase" \
    grep -q '"type":"phase","name":"eval_step"' "$(session_dir "$T/py")/runlog.jsonl"
frame=$("$RUNMON" top --once --width 120 "$T/py" 2>/dev/null)
check "top: the completed phase's name (log_phase)" \
    grep -qE '^(done|    ) +eval_step +0\.250s' <<<"$frame"
check "top: the with-block phase's name" grep -qE '^(done|    ) +train +0\.[0-9]+s ok' <<<"$frame"

done_testing
