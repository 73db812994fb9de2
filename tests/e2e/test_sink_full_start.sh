#!/usr/bin/env bash
# A full disk never costs the user their run, and what a full disk costs is counted (issue
# 35, items 1, 3 and 7): a sink whose file system is full at the start (a real 3 MB tmpfs),
# or where even the session folder cannot be made (its inodes used up), still runs the
# command and passes its exit code; rows lost while the disk is full are counted through an
# end that cannot write state.json, and the summary the end could not write is written by
# the next open once there is room; a file-size limit is named as such (EFBIG), a killed
# recorder's lock file goes with its recovery, and a RUNMON_HOSTNAME with a newline is said.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2
unset RUNMON_HOSTNAME

M=$T/mnt
mkdir -p "$M"
if mount -t tmpfs -o size=3m tmpfs "$M" 2>/dev/null; then
    trap 'umount "$M" 2>/dev/null; _t_cleanup' EXIT
    # --- item 1: full at the start, a sink that exists and one that does not -----------------
    "$RUNMON" record -q -o "$M/old" --no-gpu -i 0.2 -- true
    head -c 4M /dev/zero >"$M/filler" 2>/dev/null
    expect_eq "full: the disk is full" 0 "$(df --output=avail "$M" | tail -1 | tr -d ' ')"
    for sink in old new; do
        rm -f "$T/ran"
        "$RUNMON" record -o "$M/$sink" -i 0.2 -- sh -c "touch '$T/ran'; exit 3" 2>"$T/$sink.err"
        expect_eq "full at the start ($sink sink): the command's exit code" 3 $?
        check "full at the start ($sink sink): the command ran" test -e "$T/ran"
        expect_match "full at the start ($sink sink): said on stderr" "No space left on device" \
            "$(cat "$T/$sink.err")"
    done
    rm -f "$M/filler"

    # --- item 3: rows lost on a full disk are counted through an end that cannot write -------
    "$RUNMON" record -i 0.1 --flush-seconds 0.2 -o "$M/k" -- \
        sh -c "sleep 1; head -c 4M /dev/zero >'$M/filler' 2>/dev/null; sleep 2; exit 7" \
        2>"$T/k.err"
    expect_eq "full at the end: the command's exit code" 7 $?
    s=$M/k/$(readlink "$M/k/latest")
    expect_eq "full at the end: the disk is full" 0 "$(df --output=avail "$M" | tail -1 | tr -d ' ')"
    expect_match "full at the end: the text summary says how it ended, not 'running'" \
        "status failed .* exit 7" "$(grep '^session ' "$T/k.err")"
    check "full at the end: summary.json could not be written" test ! -e "$s/summary.json"
    rm -f "$M/filler"
    "$RUNMON" sessions "$M/k" >/dev/null 2>&1 # the next open, with room again
    dropped=$(jq '[.session.sink.rows_dropped[]] | add' "$s/state.json")
    check "room again: state.json counts the rows dropped ($dropped)" test "$dropped" -gt 0
    check "room again: and the write errors" test "$(jq .session.sink.write_errors "$s/state.json")" -gt 0
    # the rows lost are a hole in gpu.csv, between two rows or from its last row to the end
    gap=$( (tail -n +2 "$s/gpu.csv" | cut -d, -f1; jq -r .session.ended_at "$s/state.json") |
        awk '{ gsub(/[-:T+]/, " "); split($0, a, " "); t = a[4] * 3600 + a[5] * 60 + a[6];
            if (p && t - p > g) g = t - p; p = t } END { print g + 0 }')
    check "room again: gpu.csv has the hole ($gap s)" awk -v g="$gap" 'BEGIN { exit !(g >= 1) }'
    expect_eq "room again: sink.json's counters = state.json's" \
        "$dropped $(jq .session.sink.write_errors "$s/state.json")" \
        "$(jq -r '.counters | "\(.rows_dropped) \(.write_errors)"' "$M/k/sink.json")"
    check "room again: the next open wrote summary.json" test -s "$s/summary.json"
    expect_eq "room again: summary.json: failed, exit 7, the rows dropped" "failed 7 $dropped" \
        "$(jq -r '"\(.session.status) \(.session.exit_code) \([.sink.rows_dropped[]] | add)"' "$s/summary.json")"
    umount "$M"

    # --- item 1: the session folder cannot be made (no inode left): the command still runs ---
    mount -t tmpfs -o size=3m,nr_inodes=64 tmpfs "$M"
    mkdir "$M/sink"
    i=0
    while touch "$M/f$i" 2>/dev/null; do i=$((i + 1)); done
    rm -f "$T/ran"
    "$RUNMON" record -o "$M/sink" -i 0.2 -- \
        sh -c "echo \"dir=\${RUNMON_SESSION_DIR-unset}\" >'$T/ran'; exit 5" 2>"$T/noinode.err"
    expect_eq "no session folder: the command's exit code" 5 $?
    expect_eq "no session folder: the command ran, without a session to name" "dir=unset" \
        "$(cat "$T/ran" 2>/dev/null)"
    expect_match "no session folder: said why, and that nothing is recorded" \
        "cannot create $M/sink/[^ ]*: No space left on device
runmon record: nothing of this run is recorded; the command runs all the same" "$(cat "$T/noinode.err")"
    umount "$M"
else
    ok "# SKIP cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN): the full disk is not tested"
fi

# --- item 3: a file-size limit: what the sink_degraded event counted, the end counts too ---
K=$T/ulimit
(
    ulimit -f 4
    exec "$RUNMON" record -q -o "$K" -i 0.1 --flush-seconds 0.3 --rollover-mb 0 -- sh -c 'sleep 3; exit 7'
)
expect_eq "ulimit -f: the command's exit code" 7 $?
s=$K/$(readlink "$K/latest")
"$RUNMON" sessions "$K" >/dev/null
# The episode's sink_degraded event counts the rows dropped when it is raised: 0 when the
# first write to fail is state.json's (it grew past the limit before gpu.csv did since
# stall.csv joined the streams); the rows dropped after it are counted through the end.
said=$(event_data "$s" sink_degraded | jq -s 'map(.rows_dropped) | max // -1')
final=$(jq '[.session.sink.rows_dropped[]] | add' "$s/state.json")
check "ulimit -f: a sink_degraded event was raised (its count $said)" test "$said" -ge 0
check "ulimit -f: the end counts the rows dropped ($final)" test "$final" -gt 0
check "ulimit -f: the final count ($final) is at least the event's" test "$final" -ge "$said"
expect_eq "ulimit -f: sink.json counts them too" "$final" "$(jq .counters.rows_dropped "$K/sink.json")"
check "ulimit -f: summary.json written by the next open" test -s "$s/summary.json"

# --- item 7: an append cut short by the file-size limit is "File too large" ---------------
K=$T/efbig
# sessions until index.jsonl ends less than 300 bytes before a KiB: a line appended then
# crosses the limit set at that KiB
for n in $(seq 1 30); do
    "$RUNMON" record -q --no-gpu -o "$K" -i 0.2 -- true
    size=$(stat -c %s "$K/index.jsonl")
    room=$(((size + 1023) / 1024 * 1024 - size))
    [ "$room" -gt 0 ] && [ "$room" -lt 300 ] && break
done
check "ulimit -f: an index that ends $room bytes before a KiB" test "$room" -gt 0 -a "$room" -lt 300
(
    ulimit -f $(((size + 1023) / 1024))
    exec "$RUNMON" record --no-gpu -o "$K" -i 0.2 -- true
) 2>"$T/efbig.err" >/dev/null
expect_match "ulimit -f: the index append is said to be File too large" \
    "index.jsonl[^ ]*: File too large" "$(cat "$T/efbig.err")"
expect_eq "ulimit -f: never 'No space left on device'" "" "$(grep -i 'no space' "$T/efbig.err")"

# --- item 7: a killed recorder's lock file goes when recovery ends its session -----------
K=$T/killed
"$RUNMON" record -q -o "$K" -i 0.2 -- sh -c "echo \$\$ >'$T/cmd.pid'; exec sleep 30" &
rpid=$!
track "$rpid"
wait_for "test -s $T/cmd.pid && test -e $K/latest/cpu.csv" 20
track "$(cat "$T/cmd.pid")" # the command outlives its recorder
kill -9 "$rpid"
wait "$rpid" 2>/dev/null
s=$K/$(readlink "$K/latest")
check "kill -9: the lock file is there before recovery" test -e "$s/.recorder.lock"
"$RUNMON" sessions "$K" >/dev/null
expect_eq "kill -9: recovery ends it interrupted" interrupted "$(jq -r .session.status "$s/state.json")"
check "kill -9: and removes the lock file" test ! -e "$s/.recorder.lock"

# --- item 7: RUNMON_HOSTNAME with a newline: said once, the machine's name used ------------
RUNMON_HOSTNAME=$'evil\nhost' "$RUNMON" record -o "$T/host" --no-gpu -i 0.2 -- true 2>"$T/host.err"
expect_eq "RUNMON_HOSTNAME with a newline: said once" 1 "$(grep -c 'RUNMON_HOSTNAME ignored' "$T/host.err")"
expect_match "... why, and the name used instead" \
    "RUNMON_HOSTNAME ignored: it holds a control character .*; the host name is $(hostname)" \
    "$(cat "$T/host.err")"
expect_eq "... the session has the machine's name" "$(hostname)" \
    "$(jq -r .host "$(session_dir "$T/host")/session.json")"

done_testing
