#!/usr/bin/env bash
# `-o` naming a device, a FIFO or a link to one is written in place, as the shell's `>` would:
# an atomic write (temp file renamed over the target) would replace it with a regular file, and
# run as root, `runmon summary -o /dev/null` replaced the machine's /dev/null (seen here). Tested
# on a FIFO and on a copy of /dev/null's device made in the scratch folder, never on /dev/null.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:$PATH"
export FAKE_SMI_GPUS=1

K=$T/sink
"$RUNMON" record -q -o "$K" -- sleep 0.3
S=$K/$(readlink "$K/latest")

# read_fifo FIFO OUT CMD...: runs CMD while a reader drains FIFO into OUT; CMD's exit status.
read_fifo() {
    local fifo=$1 out=$2 rc
    shift 2
    timeout 60 cat "$fifo" >"$out" &
    local reader=$!
    track $reader
    timeout 60 "$@" >/dev/null 2>"$T/err"
    rc=$?
    wait $reader
    return $rc
}

mkfifo "$T/fifo"
read_fifo "$T/fifo" "$T/got.json" "$RUNMON" summary "$S" --format json -o "$T/fifo"
expect_eq "summary -o FIFO: exit 0" 0 $?
check "summary -o FIFO: still a FIFO" test -p "$T/fifo"
expect_eq "summary -o FIFO: the reader got the summary" "$(jq -r .session.session_id "$S/summary.json")" \
    "$(jq -r .session.session_id "$T/got.json" 2>/dev/null)"

read_fifo "$T/fifo" "$T/got.html" "$RUNMON" report "$S" -o "$T/fifo"
expect_eq "report -o FIFO: exit 0" 0 $?
check "report -o FIFO: still a FIFO" test -p "$T/fifo"
check "report -o FIFO: the reader got the page" grep -q '</html>' "$T/got.html"

ln -s "$T/fifo" "$T/link"
read_fifo "$T/fifo" "$T/got2.json" "$RUNMON" summary "$S" --format json -o "$T/link"
check "summary -o a link to a FIFO: the link and the FIFO stay" test -L "$T/link" -a -p "$T/fifo"
check "summary -o a link to a FIFO: the reader got it" jq -e .session "$T/got2.json"

if mknod "$T/null" c 1 3 2>/dev/null; then
    "$RUNMON" summary "$S" --format json -o "$T/null"
    expect_eq "summary -o a null device: exit 0" 0 $?
    check "summary -o a null device: still a character device" test -c "$T/null"
    "$RUNMON" report "$S" -o "$T/null" >/dev/null
    expect_eq "report -o a null device: exit 0" 0 $?
    check "report -o a null device: still a character device" test -c "$T/null"
    expect_eq "no temp file left beside it" "" "$(cd "$T" && ls -A | grep -F 'null.tmp' || true)"
else
    ok "# SKIP mknod not permitted here: the device cases are not tested"
fi

# A regular file is still replaced atomically (the old or the new one, never a mix).
echo old >"$T/plain.json"
"$RUNMON" summary "$S" --format json -o "$T/plain.json"
check "summary -o a regular file: replaced by the summary" jq -e .session "$T/plain.json"

done_testing
