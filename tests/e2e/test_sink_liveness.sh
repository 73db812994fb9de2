#!/usr/bin/env bash
# A session whose recorder is dead is never listed "running" (issue 27, item 2). The recorder
# holds a lock on DIR/<id>/.recorder.lock for its session's life and is listed in sink.json
# before its folder exists, so recovery finds it killed at any moment: here SIGKILLed by a
# debugger at every write of its start and its end, with a truncated "ended" line, a reused
# pid, and a reader that cannot write the sink (it lists "interrupted"; the next writable
# open mends the files).
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=1

# After a kill, as `runmon sessions` leaves the sink: every folder listed once, none running,
# session.json agreeing, no temp file of a dead writer, nothing left running in sink.json,
# and the totals the bytes on disk.
check_sink() { # NAME DIR
    local name=$1 K=$2 j bad=""
    j=$("$RUNMON" sessions "$K" --format json 2>/dev/null)
    [ "$(jq -r '.sessions[].session_id' <<<"$j" | sort)" = "$(sink_folders "$K")" ] ||
        bad="$bad; folders $(sink_folders "$K" | tr '\n' ' ')listed $(jq -r '[.sessions[].session_id] | join(" ")' <<<"$j")"
    jq -e '[.sessions[] | select(.status == "running")] | length == 0' <<<"$j" >/dev/null ||
        bad="$bad; listed running: $(jq -c '[.sessions[] | select(.status == "running") | .session_id]' <<<"$j")"
    local id st
    for id in $(sink_folders "$K"); do
        [ -f "$K/$id/session.json" ] || continue
        st=$(jq -r .status "$K/$id/session.json")
        [ "$st" = "$(jq -r --arg i "$id" '.sessions[] | select(.session_id == $i) | .status' <<<"$j")" ] ||
            bad="$bad; $id/session.json says $st"
    done
    [ -z "$(find "$K" -name '*.tmp*')" ] || bad="$bad; temp files: $(find "$K" -name '*.tmp*' | tr '\n' ' ')"
    [ "$(jq -c .running "$K/sink.json")" = '{}' ] || bad="$bad; sink.json running: $(jq -c .running "$K/sink.json")"
    [ "$(sink_disk_totals "$K")" = "$(sink_json_totals "$K")" ] ||
        bad="$bad; totals $(sink_json_totals "$K") on disk $(sink_disk_totals "$K")"
    if [ -z "$bad" ]; then ok "$name"; else not_ok "$name" "${bad#; }"; fi
}

if ! have_gdb; then
    ok "# SKIP gdb cannot run programs here: the kill-at-a-moment cases are not tested"
else
    # --- SIGKILL at the Nth call of each function of the start and the end ------------------
    # rm_totals_save 1: in 0.2.0 after the "created" line, before sink.json lists the session;
    # rm_sink_open 1: the folder and session.json are there, no index line; rename N: a temp
    # file written and not yet renamed (state.json.tmp.<pid> and the like).
    K=$T/kill
    "$RUNMON" record -q -o "$K" -- true # a sink with a finished session first
    for point in rm_totals_save:1 rm_totals_save:2 rm_totals_save:3 rm_index_append:1 \
        rm_index_append:2 rm_sink_open:1 rm_session_save:1 rm_session_save:2 rename:1 rename:3 \
        rename:5 rename:7 rename:9 rm_sink_stop:1 rm_sink_close:1; do
        gdb_kill_at "${point%:*}" "${point#*:}" "$RUNMON" record -q --flush-seconds 0.2 \
            -o "$K" -- sleep 0.3
        check_sink "killed at $point: listed once, not running, files mended, totals = disk" "$K"
    done
    expect_eq "every kill left an interrupted session (or a finished one)" "" \
        "$("$RUNMON" sessions "$K" --format json | jq -r '.sessions[] | select(.status | test("^(completed|interrupted)$") | not) | .status')"

    # --- a reused pid: the session's pid is alive again, as another process ------------------
    K=$T/reuse
    gdb_kill_at rm_sink_start 1 "$RUNMON" record -q -o "$K" -- sleep 0.3
    sleep 30 &
    other=$!
    track $other
    s=$(readlink "$K/latest")
    for f in "$K/index.jsonl" "$K/sink.json"; do # the sink now names the live pid
        sed -i "s/\"pid\":[0-9]*/\"pid\":$other/g" "$f"
    done
    check "reuse: the lock file is there, unlocked" test -f "$K/$s/.recorder.lock"
    check_sink "reuse: the lock decides: interrupted, though pid $other is alive" "$K"
    kill $other
fi

# --- a truncated "ended" line: the session is not listed running ---------------------------
K=$T/torn
"$RUNMON" record -q -o "$K" -- sh -c 'exit 3'
s=$(readlink "$K/latest")
size=$(stat -c %s "$K/index.jsonl")
truncate -s $((size - 40)) "$K/index.jsonl"
check "torn: the last line is cut" test "$(tail -c 1 "$K/index.jsonl" | od -An -c | tr -d ' ')" != '\n'
j=$("$RUNMON" sessions "$K" --format json)
expect_eq "torn: listed failed, exit 3 (state.json's end)" "failed 3" \
    "$(jq -r '.sessions[0] | "\(.status) \(.exit_code)"' <<<"$j")"
expect_eq "torn: the index ends with a whole ended line again" "ended failed 3" \
    "$(tail -1 "$K/index.jsonl" | jq -r '"\(.event) \(.status) \(.exit_code)"')"
check_sink "torn: listed once, totals = disk" "$K"

# --- a reader that cannot write: lists interrupted, writes nothing; the next open mends ------
if have_gdb && command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    K=$T/ro
    chmod 755 "$T"
    gdb_kill_at rm_sink_start 1 "$RUNMON" record -q -o "$K" -- sleep 0.3
    s=$(readlink "$K/latest")
    sum_before=$(cd "$K" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
    j=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$RUNMON" sessions "$K" --format json 2>"$T/ro.err")
    expect_eq "read-only: listed interrupted" interrupted "$(jq -r '.sessions[0].status' <<<"$j")"
    expect_eq "read-only: text too" interrupted \
        "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$RUNMON" sessions "$K" --format text 2>/dev/null | awk 'NR == 2 { print $2 }')"
    expect_eq "read-only: nothing written" "$sum_before" \
        "$(cd "$K" && find . -type f -print0 | sort -z | xargs -0 sha256sum)"
    expect_eq "read-only: session.json still says running" running "$(jq -r .status "$K/$s/session.json")"
    check_sink "read-only, then a writable open: mended" "$K"
    expect_eq "mended: session.json interrupted" interrupted "$(jq -r .status "$K/$s/session.json")"
else
    ok "# SKIP no gdb or no setpriv to an unprivileged user: the read-only reader is not tested"
fi

done_testing
