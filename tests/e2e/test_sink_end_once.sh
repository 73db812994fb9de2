#!/usr/bin/env bash
# A session's end is written once (issue 27, item 1): one "ended" index line per session and
# its contribution moved into sink.json's finished sums once, whatever the sink thread does
# between the session's status being set and the sink's close; so sink.json's totals are the
# bytes on disk after sequential and concurrent sessions.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=1
ended_counts() { # "N" per session: its "ended" lines, one line per session, sorted
    jq -r 'select(.event == "ended") | .session_id' "$1/index.jsonl" | sort | uniq -c |
        awk '{ print $1 }' | sort | uniq -c | awk '{ printf "%s sessions x %s; ", $1, $2 }'
}

# --- the moment of the bug: the sink thread runs its rounds while the main thread is between
# setting the session's status and closing the sink (held there by a debugger) ---------------
if have_gdb; then
    K=$T/held
    gdb_hold_at rm_prom_close 0.7 "$RUNMON" record -q --flush-seconds 0.2 -o "$K" -- sleep 0.3
    s=$(readlink "$K/latest")
    expect_eq "held at the end for 3 sink rounds: one ended line" 1 \
        "$(grep -cF '"event":"ended"' "$K/index.jsonl")"
    expect_eq "held: the session completed" completed \
        "$("$RUNMON" sessions "$K" --format json | jq -r '.sessions[0].status')"
    expect_eq "held: sink.json's totals are the files on disk" "$(sink_disk_totals "$K")" \
        "$(sink_json_totals "$K")"
    expect_eq "held: finished once (its 7 active files: gpu dmon cpu proc apps io stall)" 7 "$(jq .finished.active_files "$K/sink.json")"
    expect_eq "held: nothing left running in sink.json" '{}' "$(jq -c .running "$K/sink.json")"
    expect_eq "held: state.json says completed" completed "$(jq -r .session.status "$K/$s/state.json")"
    check "held: the recorder's lock file is gone with it" test ! -e "$K/$s/.recorder.lock"
else
    ok "# SKIP gdb cannot run programs here: the held-at-the-end case is not tested"
fi

# --- 12 sessions one after the other, at a short flush period ------------------------------
K=$T/seq
for i in $(seq 12); do
    "$RUNMON" record -q --flush-seconds 0.2 -o "$K" -- sleep 0.3
done
expect_eq "sequential: 12 sessions, one ended line each" "12 sessions x 1; " "$(ended_counts "$K")"
expect_eq "sequential: sink.json's totals are the files on disk" "$(sink_disk_totals "$K")" \
    "$(sink_json_totals "$K")"
expect_eq "sequential: 12 sessions listed, all completed" "12 completed" \
    "$("$RUNMON" sessions "$K" --format json | jq -r '"\(.sessions | length) \([.sessions[].status] | unique | join(","))"')"

# --- 8 recorders at once, with rollover and retention working across them -----------------
K=$T/conc
pids=()
for i in $(seq 8); do
    "$RUNMON" record -q --flush-seconds 0.2 -i 0.1 --rollover-mb 0.004 --retention-files 3 \
        -o "$K" -- sleep "0.$((3 + i % 5))" &
    pids+=($!)
    track $!
done
for p in "${pids[@]}"; do wait "$p"; done
expect_eq "concurrent: 8 sessions, one ended line each" "8 sessions x 1; " "$(ended_counts "$K")"
expect_eq "concurrent: sink.json's totals are the files on disk" "$(sink_disk_totals "$K")" \
    "$(sink_json_totals "$K")"
expect_eq "concurrent: nothing left running" '{}' "$(jq -c .running "$K/sink.json")"
check "concurrent: retention kept at most 3 sealed segments per stream" \
    test "$(find "$K" -name 'gpu-*.csv' | wc -l)" -le 3

done_testing
