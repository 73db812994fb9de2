#!/usr/bin/env bash
# runmon phase: exit codes, phase_enter/phase_exit lines, nested paths through
# RUNMON_PHASE_PATH, signal forwarding, and refused input.
. "$(dirname "$0")/lib.sh"
unset RUNMON_RUNLOG RUNMON_PHASE_PATH
L=$T/run.jsonl
last_exit() { grep '"type":"phase_exit"' "$L" | tail -n 1; }

out=$("$RUNMON" phase --help); rc=$?
expect_eq "phase --help exits 0" 0 "$rc"
expect_match "phase --help shows usage" "usage: runmon phase \[--file PATH\] NAME" "$out"

out=$("$RUNMON" phase --file "$L" hello -- echo hi there); rc=$?
expect_eq "exit 0 passes through" 0 "$rc"
expect_eq "command keeps stdout" "hi there" "$out"
expect_eq "enter then exit" "phase_enter phase_exit" "$(jq -r .type "$L" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "enter fields" '{"name":"hello","path":"hello","depth":0}' \
    "$(head -n 1 "$L" | jq -c '{name, path, depth}')"
expect_eq "exit fields" '{"name":"hello","path":"hello","depth":0,"status":"ok","exit_code":0}' \
    "$(last_exit | jq -c '{name, path, depth, status, exit_code}')"
expect_eq "exit has seconds" number "$(last_exit | jq -r '.seconds | type')"

echo in | "$RUNMON" phase --file "$L" stdin -- sh -c 'read x; [ "$x" = in ] && echo err >&2' 2>"$T/err"
expect_eq "command inherits stdin and stderr" "err" "$(cat "$T/err")"

"$RUNMON" phase --file "$L" three lr=0.5 -- sh -c 'exit 3'; rc=$?
expect_eq "exit 3 passes through" 3 "$rc"
expect_eq "exit 3 is an error" '{"status":"error","exit_code":3,"lr":0.5}' "$(last_exit | jq -c '{status, exit_code, lr}')"

"$RUNMON" phase --file "$L" slow -- sleep 0.25
expect_match "seconds measure the command" "^0\.(2[5-9]|[3-9])" "$(last_exit | jq -r .seconds)"

"$RUNMON" phase --file "$L" killed -- sh -c 'kill -9 $$'; rc=$?
expect_eq "kill -9 gives 128+9" 137 "$rc"
expect_eq "killed phase recorded" '{"status":"error","exit_code":137,"signal":9}' \
    "$(last_exit | jq -c '{status, exit_code, signal}')"

err=$("$RUNMON" phase --file "$L" missing -- /no/such/command 2>&1); rc=$?
expect_eq "command not found exits 127" 127 "$rc"
expect_match "command not found message" "^runmon phase: cannot run '/no/such/command': No such file or directory$" "$err"
expect_eq "not found recorded as error" '{"name":"missing","status":"error","exit_code":127}' \
    "$(last_exit | jq -c '{name, status, exit_code}')"
"$RUNMON" phase --file "$L" missing2 -- no-such-command-on-path-xyz 2>/dev/null; rc=$?
expect_eq "PATH lookup failure exits 127" 127 "$rc"
printf 'x' >"$T/notexec"
"$RUNMON" phase --file "$L" noexec -- "$T/notexec" 2>/dev/null; rc=$?
expect_eq "not executable exits 126" 126 "$rc"

# Nested: a script that runs runmon phase runs scripts that run runmon phase.
N=$T/nested.jsonl
cat >"$T/inner.sh" <<EOF
#!/bin/sh
"$RUNMON" phase forward -- true
"$RUNMON" phase backward -- "$RUNMON" phase allreduce -- true
"$RUNMON" log event step_done
EOF
chmod +x "$T/inner.sh"
RUNMON_PHASE_PATH=sweep "$RUNMON" phase --file "$N" train -- "$T/inner.sh"
expect_eq "nested exits 0" 0 "$?"
expect_eq "nested paths in order" \
    "phase_enter sweep/train 1|phase_enter sweep/train/forward 2|phase_exit sweep/train/forward 2|phase_enter sweep/train/backward 2|phase_enter sweep/train/backward/allreduce 3|phase_exit sweep/train/backward/allreduce 3|phase_exit sweep/train/backward 2|phase_exit sweep/train 1" \
    "$(jq -r 'select(.type | startswith("phase")) | "\(.type) \(.path) \(.depth)"' "$N" | paste -sd '|')"
expect_eq "nested children wrote to the parent's --file" 1 "$(grep -c '"event":"step_done"' "$N")"
(cd "$T" && "$RUNMON" phase --file rel.jsonl outer -- sh -c 'cd / && "$0" phase inner -- true' "$RUNMON")
expect_eq "relative --file is inherited as an absolute path" "outer/inner" \
    "$(jq -r 'select(.type=="phase_exit") | .path' "$T/rel.jsonl" | head -n 1)"

# A signal sent to runmon with kill(1) reaches the command; runmon still writes phase_exit.
S=$T/sig.jsonl
"$RUNMON" phase --file "$S" victim -- sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.05; done' >"$T/sig.out" &
rp=$!
track $rp
wait_for "grep -q ready '$T/sig.out'" 10
kill -TERM $rp
wait $rp; rc=$?
expect_eq "SIGTERM forwarded: the command's own exit status" 7 "$rc"
expect_eq "the command saw SIGTERM" "got-term" "$(grep got-term "$T/sig.out")"
expect_eq "phase_exit after the signal" '{"status":"error","exit_code":7}' \
    "$(grep phase_exit "$S" | jq -c '{status, exit_code}')"
# Background jobs of a script start with SIGINT ignored; env gives it back its default.
env --default-signal=INT "$RUNMON" phase --file "$S" victim2 -- sleep 30 &
rp=$!
track $rp
wait_for "grep -q victim2 '$S'" 10
kill -INT $rp
wait $rp; rc=$?
expect_eq "SIGINT forwarded to a command that dies of it: 128+2" 130 "$rc"

# Refused input: exit 2, nothing written, the command not run.
before=$(md5sum <"$L")
refuse() { # NAME REGEX ARGS...
    local name=$1 re=$2 err rc
    shift 2
    err=$("$RUNMON" phase --file "$L" "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -eq 2 ] && [[ $err =~ ^runmon\ phase:\ .*$re ]] && [ "$(md5sum <"$L")" = "$before" ] &&
        [ ! -e "$T/ran" ]; then
        ok "refused: $name"
    else
        not_ok "refused: $name" "rc=$rc" "stderr: $err"
    fi
}
refuse "missing --" "missing '--'" p touch "$T/ran"
refuse "missing command" "missing COMMAND" p --
refuse "missing name" "missing phase NAME" -- touch "$T/ran"
refuse "empty name" "empty phase name" "" -- touch "$T/ran"
refuse "slash in name" "contains '/'" a/b -- touch "$T/ran"
refuse "control character in name" "control character" "$(printf 'a\nb')" -- touch "$T/ran"
refuse "bad KEY:=JSON" "invalid JSON for key 'x'" p 'x:=[' -- touch "$T/ran"
refuse "reserved key" "key 'path' is reserved" p path=x -- touch "$T/ran"
err=$(RUNMON_PHASE_PATH='a//b' "$RUNMON" phase --file "$L" p -- touch "$T/ran" 2>&1); rc=$?
expect_eq "bad RUNMON_PHASE_PATH exits 2" "2 runmon phase: bad RUNMON_PHASE_PATH: phase path 'a//b' has an empty component" "$rc $err"
err=$("$RUNMON" phase p -- touch "$T/ran" 2>&1); rc=$?
expect_eq "no run log exits 2" 2 "$rc"
err=$("$RUNMON" phase --file "$T/no/dir/x" p -- touch "$T/ran" 2>&1); rc=$?
expect_match "unwritable run log exits 2 without running" "^2 runmon phase: cannot open run log" "$rc $err"
check "refused phases never ran the command" test ! -e "$T/ran"

done_testing
