#!/usr/bin/env bash
# runmon log: the lines it writes, KEY=VALUE typing, every refused input (exit 2, one clear
# line, nothing written), write failures, and `tail -F` seeing each line as it is written.
. "$(dirname "$0")/lib.sh"
unset RUNMON_RUNLOG RUNMON_PHASE_PATH
L=$T/run.jsonl

out=$("$RUNMON" log --help); rc=$?
expect_eq "log --help exits 0" 0 "$rc"
expect_match "log --help shows usage" "usage: runmon log \[--file PATH\] phase NAME SECONDS" "$out"

"$RUNMON" log --file "$L" phase load 1.23456 lr=0.1 n=5 ok=true none=null tag=abc zip=007 \
    'cfg:={"layers":[1,2.5,null]}'
expect_eq "log phase exits 0" 0 "$?"
line=$(tail -n 1 "$L")
expect_match "phase line starts with ts then type" \
    '^\{"ts":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}\+00:00","type":"phase","name":"load","seconds":1\.235,' "$line"
expect_match "0.1 prints as 0.1" '"lr":0\.1,' "$line"
expect_eq "KEY=VALUE types" '[5,true,null,"abc","007",[1,2.5,null]]' \
    "$(jq -c '[.n, .ok, .none, .tag, .zip, .cfg.layers]' <<<"$line")"
expect_eq "pid and t present" "number number" "$(jq -r '[(.pid|type), (.t|type)] | join(" ")' <<<"$line")"
expect_eq "t matches ts" "true" \
    "$(jq '(.ts | sub("\\.[0-9]+\\+00:00$"; "Z") | fromdateiso8601) == (.t | floor)' <<<"$line")"

RUNMON_RUNLOG=$L "$RUNMON" log event started host=node1 gpus=8 'msg=a "quoted" \ value'
expect_eq "event via RUNMON_RUNLOG exits 0" 0 "$?"
expect_eq "event data" '{"host":"node1","gpus":8,"msg":"a \"quoted\" \\ value"}' \
    "$(tail -n 1 "$L" | jq -c .data)"
"$RUNMON" log --file="$L" event bare
expect_eq "event without data has no data key" "event bare false" \
    "$(tail -n 1 "$L" | jq -r '"\(.type) \(.event) \(has("data"))"')"
"$RUNMON" log --file "$L" event ctl "s=$(printf 'tab\there\001')"
expect_eq "control characters in values are escaped" '"tab\there\u0001"' "$(tail -n 1 "$L" | jq -c .data.s)"
expect_eq "every line is valid JSON" 4 "$(jq -c . "$L" | wc -l)"

# Every refused input: exit 2, a message naming the problem, and the file untouched.
before=$(md5sum <"$L")
refuse() { # NAME REGEX ARGS...
    local name=$1 re=$2 err rc
    shift 2
    err=$("$RUNMON" log --file "$L" "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -eq 2 ] && [[ $err =~ ^runmon\ log:\ .*$re ]] && [ "$(wc -l <<<"$err")" -eq 1 ] &&
        [ "$(md5sum <"$L")" = "$before" ]; then
        ok "refused: $name"
    else
        not_ok "refused: $name" "rc=$rc" "stderr: $err"
    fi
}
refuse "invalid KEY:=JSON" "invalid JSON for key 'k'" event e 'k:={"a":'
refuse "non-numeric SECONDS" "not a number" phase p abc
refuse "SECONDS with a unit" "not a number" phase p 5s
refuse "negative SECONDS" "negative" phase p -1.5
refuse "NaN SECONDS" "not a finite number" phase p NaN
refuse "infinite SECONDS" "not a finite number" phase p inf
refuse "overflowing SECONDS" "not a finite number" phase p 1e400
refuse "missing SECONDS" "missing SECONDS" phase p
refuse "control character in name" "phase name contains a control character" phase "$(printf 'a\tb')" 1
refuse "control character in type" "event type contains a control character" event "$(printf 'a\033b')"
refuse "control character in key" "key contains a control character" event e "$(printf 'k\001')=1"
refuse "invalid UTF-8 in name" "phase name is not valid UTF-8" phase "$(printf 'a\xffb')" 1
refuse "invalid UTF-8 in type" "event type is not valid UTF-8" event "$(printf '\xc3')"
refuse "invalid UTF-8 in value" "not valid UTF-8" event e "v=$(printf '\xfe')"
refuse "empty name" "empty phase name" phase "" 1
refuse "empty type" "empty event type" event ""
refuse "empty key" "empty key" event e =1
refuse "argument without =" "argument 'oops' has no '='" event e oops
refuse "reserved key on a phase" "key 'seconds' is reserved" phase p 1 seconds=2
refuse "unknown kind" "unknown record kind 'evnt'" evnt e
refuse "missing kind" "missing 'phase', 'event', 'metric' or 'objective'"
refuse "unknown option" "unknown option '--fiel'" --fiel x event e

err=$("$RUNMON" log event e 2>&1); rc=$?
expect_eq "no file and no RUNMON_RUNLOG exits 2" 2 "$rc"
expect_match "no file: clear message" "^runmon log: no run log given: use --file PATH or set RUNMON_RUNLOG$" "$err"
err=$(RUNMON_RUNLOG= "$RUNMON" log event e 2>&1); rc=$?
expect_eq "empty RUNMON_RUNLOG exits 2" 2 "$rc"
err=$("$RUNMON" log --file "$T/no/such/dir/x.jsonl" event e 2>&1); rc=$?
expect_eq "unwritable path exits 2" 2 "$rc"
expect_match "unwritable path is named" "^runmon log: cannot open run log $T/no/such/dir/x.jsonl: No such file or directory$" "$err"
touch "$T/ro.jsonl"; chmod 444 "$T/ro.jsonl"
if [ "$(id -u)" -ne 0 ]; then
    err=$("$RUNMON" log --file "$T/ro.jsonl" event e 2>&1); rc=$?
    expect_eq "read-only file exits 2" 2 "$rc"
    expect_match "read-only file: permission denied" "Permission denied" "$err"
fi
err=$("$RUNMON" log --file "$T" event e 2>&1); rc=$?
expect_match "directory as run log exits 2" "^2 .*Is a directory" "$rc $err"
"$RUNMON" log --file "$T/never.jsonl" phase p -1 2>/dev/null
check "bad input creates no file" test ! -e "$T/never.jsonl"

# A full disk: exit 1 and the error named.
err=$("$RUNMON" log --file /dev/full event e 2>&1); rc=$?
expect_eq "ENOSPC exits 1" 1 "$rc"
expect_match "ENOSPC named" "No space left on device" "$err"

# ulimit -f: Linux writes the part of the line that fits; it must be cut back.
F=$T/limited.jsonl
(
    ulimit -f 1 # 1024 bytes
    for i in $(seq 1 20); do
        "$RUNMON_REL" log --file "$F" event tick "i=$i" pad=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx 2>>"$T/limited.err"
        echo $?
    done
) >"$T/limited.rc"
expect_eq "ulimit -f: later writes fail with exit 1" "0 1" "$(sort -u "$T/limited.rc" | tr '\n' ' ' | sed 's/ $//')"
expect_match "ulimit -f: EFBIG reported, partial line removed" "File too large .*partial line removed" "$(head -n 1 "$T/limited.err")"
expect_eq "ulimit -f: file ends with a newline" "0a" "$(tail -c 1 "$F" | od -An -tx1 | tr -d ' ')"
expect_eq "ulimit -f: every line valid, as many as succeeded" "$(grep -c '^0$' "$T/limited.rc")" "$(jq -c . "$F" | wc -l)"

# tail -F shows each line while it still runs (a wide wait: seconds on a busy machine).
TL=$T/tailed.jsonl
: >"$TL"
tail -n 0 -F "$TL" >"$T/tail.out" 2>/dev/null &
tp=$!
track $tp
sleep 0.3
"$RUNMON" log --file "$TL" event first
if wait_for "grep -q '\"event\":\"first\"' '$T/tail.out'" 20; then ok "tail -F sees the first line"; else not_ok "tail -F sees the first line"; fi
"$RUNMON" log --file "$TL" phase second 0.5
if wait_for "grep -q '\"name\":\"second\"' '$T/tail.out'" 20; then ok "tail -F sees the next line"; else not_ok "tail -F sees the next line"; fi
kill $tp 2>/dev/null

done_testing
