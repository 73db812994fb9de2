#!/usr/bin/env bash
# A full disk or a file-size limit at the end does not lose the end (issue 27, item 3): the
# "ended" line (small, appended to the index) still says the true status and exit code, the
# end's writes are retried within a bound, the listing says what could not be written
# ("unwritten" in JSON, a '*' in text), and once there is room again the next open writes
# state.json and session.json from that line and the totals equal the disk.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2

# --- a 2 MB tmpfs that the command fills before it exits with 7 ----------------------------
M=$T/mnt
mkdir -p "$M"
if mount -t tmpfs -o size=2m tmpfs "$M" 2>/dev/null; then
    trap 'umount "$M" 2>/dev/null; _t_cleanup' EXIT
    K=$M/k
    "$RUNMON" record -q --flush-seconds 0.2 -o "$K" -- \
        sh -c "sleep 0.5; head -c 3M /dev/zero >'$M/filler' 2>/dev/null; exit 7"
    expect_eq "tmpfs: record passes the command's exit code" 7 $?
    s=$(readlink "$K/latest")
    expect_eq "tmpfs: the disk is full" 0 "$(df --output=avail "$M" | tail -1 | tr -d ' ')"
    j=$("$RUNMON" sessions "$K" --format json 2>/dev/null)
    expect_eq "tmpfs, full: listed failed with exit code 7" "failed 7" \
        "$(jq -r '.sessions[0] | "\(.status) \(.exit_code)"' <<<"$j")"
    expect_eq "tmpfs, full: the listing names what the end could not write" \
        '["session.json","state.json","summary.json"]' "$(jq -c '.sessions[0].unwritten' <<<"$j")"
    expect_match "tmpfs, full: the text listing marks it" 'failed\* .*
\*: the end of the session could not write' "$("$RUNMON" sessions "$K" --format text 2>/dev/null)"
    expect_eq "tmpfs, full: one ended line, the true end" "ended failed 7" \
        "$(grep -F '"event":"ended"' "$K/index.jsonl" | jq -r '"\(.event) \(.status) \(.exit_code)"')"
    rm -f "$M/filler"
    j=$("$RUNMON" sessions "$K" --format json)
    expect_eq "tmpfs, room again: still failed 7" "failed 7" \
        "$(jq -r '.sessions[0] | "\(.status) \(.exit_code)"' <<<"$j")"
    expect_eq "tmpfs, room again: state.json written from the index's line" "failed 7" \
        "$(jq -r '.session | "\(.status) \(.exit_code)"' "$K/$s/state.json")"
    expect_eq "tmpfs, room again: session.json too" "failed 7" \
        "$(jq -r '"\(.status) \(.exit_code)"' "$K/$s/session.json")"
    expect_eq "tmpfs, room again: nothing running in sink.json" '{}' "$(jq -c .running "$K/sink.json")"
    expect_eq "tmpfs, room again: totals = disk" "$(sink_disk_totals "$K")" "$(sink_json_totals "$K")"
    expect_eq "tmpfs, room again: still one ended line" 1 "$(grep -cF '"event":"ended"' "$K/index.jsonl")"
    umount "$M"
else
    ok "# SKIP cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN): the full disk is not tested"
fi

# --- a file-size limit (ulimit -f 4: 4 KiB) that state.json and summary.json outgrow -------
K=$T/ulimit
(
    ulimit -f 4
    exec "$RUNMON" record -q -o "$K" -i 0.1 --flush-seconds 0.3 --rollover-mb 0.002 \
        --retention-files 0 -- sh -c 'sleep 2; exit 7'
)
expect_eq "ulimit -f: record passes the command's exit code" 7 $?
s=$(readlink "$K/latest")
j=$("$RUNMON" sessions "$K" --format json)
expect_eq "ulimit -f: listed failed with exit code 7" "failed 7" \
    "$(jq -r '.sessions[0] | "\(.status) \(.exit_code)"' <<<"$j")"
expect_eq "ulimit -f: the listing names state.json and summary.json" '["state.json","summary.json"]' \
    "$(jq -c '.sessions[0].unwritten' <<<"$j")"
expect_eq "ulimit -f: state.json written by the next open" "failed 7" \
    "$(jq -r '.session | "\(.status) \(.exit_code)"' "$K/$s/state.json")"
expect_eq "ulimit -f: session.json says failed 7" "failed 7" \
    "$(jq -r '"\(.status) \(.exit_code)"' "$K/$s/session.json")"
expect_eq "ulimit -f: totals = disk" "$(sink_disk_totals "$K")" "$(sink_json_totals "$K")"
expect_eq "ulimit -f: nothing running in sink.json" '{}' "$(jq -c .running "$K/sink.json")"

done_testing
