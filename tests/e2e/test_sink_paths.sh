#!/usr/bin/env bash
# Names read from a sink are confined to it (issue 12, items 1 and 3): sink entries whose
# session id or file name leaves the sink are ignored with a warning (retention never deletes
# outside the sink, recovery never trims or rewrites outside it), a session folder that is a
# symbolic link out of the sink is neither listed, summarized nor written into, `latest`
# pointing elsewhere is not followed, and `record --private` makes the session 0600/0700.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
umask 022

K=$T/k
O=$T/outside
mkdir -p "$O"
"$RUNMON" record -q -o "$K" -i 0.1 -- sleep 1
expect_eq "first record: exit 0" 0 $?
s1=$(readlink "$K/latest")
check "first session folder" test -f "$K/$s1/session.json"

# --- hostile manifest entries -------------------------------------------------------------
echo "victim" >"$O/victim.csv"
echo "victim 2" >"$O/gpu-000001.csv"
printf 'ts,timestamp\n1,2\n3,torn' >"$O/gpu.csv"
cp "$O/gpu.csv" "$T/gpu.csv.orig"
# Names enter through sink.json (retention's list, recovery's running sessions), a session's
# state.json and the index.
t=$K/sink.json
jq --arg s "$s1" --arg h "$(hostname)" '
  .sealed += [
    {file: "../../outside/victim.csv", stream: "gpu", session_id: $s, bytes: 7,
     last_row_at: "2000-01-01T00:00:01.000Z"},
    {file: "gpu-000001.csv", stream: "gpu", session_id: "../outside", bytes: 9,
     last_row_at: "2000-01-01T00:00:02.000Z"}]
  | .running += {"../outside": {host: $h, pid: 999999999, active_files: 0, active_bytes: 0,
     rows_dropped: 0, write_errors: 0}}' "$t" >"$t.new" && mv "$t.new" "$t"
st=$K/$s1/state.json
jq '.segments += [{file: "../../outside/victim.csv", stream: "gpu", session_id: .session.session_id,
     state: "sealed", pruned: false, first_row_at: "2000-01-01T00:00:00.000Z",
     last_row_at: "2000-01-01T00:00:01.000Z", rows: 1, bytes: 7, aggregate: null}]' "$st" >"$st.new" &&
    mv "$st.new" "$st"
echo '{"event":"created","session_id":"../outside","status":"running","started_at":"2000-01-01T00:00:00.000Z"}' >>"$K/index.jsonl"
"$RUNMON" record -q -o "$K" -i 0.1 --rollover-mb 0.002 --retention-files 1 -- sleep 3 2>"$T/rec.err"
expect_eq "record with retention over a hostile manifest: exit 0" 0 $?
check "a segment entry's file '../../outside/victim.csv' did not delete outside the sink" test -f "$O/victim.csv"
check "a segment entry of session '../outside' did not delete outside the sink" test -f "$O/gpu-000001.csv"
check "recovery did not trim a file outside the sink" cmp -s "$O/gpu.csv" "$T/gpu.csv.orig"
check "recovery wrote no session.json outside the sink" test ! -e "$O/session.json"
expect_match "a warning names the ignored file entry" 'ignored.*\.\./\.\./outside/victim\.csv|\.\./\.\./outside/victim\.csv.*ignored' "$(cat "$T/rec.err")"
expect_match "a warning names the ignored session id" "'\.\./outside'.*ignored|ignored.*'\.\./outside'" "$(cat "$T/rec.err")"
s2=$(readlink "$K/latest")
check "the recording still works: a new session" test "$s2" != "$s1" -a -f "$K/$s2/summary.json"
expect_eq "the new session completed" completed "$(jq -r .status "$K/$s2/session.json")"
check "retention still pruned the session's own segments" test "$(jq '[.segments[] | select(.pruned)] | length' "$K/$s2/state.json")" -ge 1
expect_eq "no entry outside the sink left in sink.json" 0 "$(jq '[.sealed[] | select((.session_id | contains("/")) or (.file | contains("/")))] + [.running | keys[] | select(contains("/"))] | length' "$t")"
"$RUNMON" summary "$K" --session "$s1" --format json >/dev/null 2>"$T/s1.err"
expect_match "a state.json entry leaving the sink is ignored with a warning" "state.json: segment entry '../../outside/victim.csv'.*ignored" "$(cat "$T/s1.err")"
"$RUNMON" sessions "$K" --format json >"$T/ses0.json" 2>/dev/null
expect_eq "an index line of session '../outside' is not listed" 0 "$(jq '[.sessions[] | select(.session_id | contains("/"))] | length' "$T/ses0.json")"

# --- a session folder that is a symbolic link out of the sink -----------------------------
E=$T/elsewhere
mkdir -p "$E"
cp "$K/$s2"/session.json "$K/$s2"/runlog.jsonl "$E/" && cp "$K/$s1/gpu.csv" "$E/"
evil=20991231T000000Z-evil-1
jq --arg e "$evil" '.session_id = $e | .started_at = "2099-12-31T00:00:00.000Z" | .status = "completed"' \
    "$E/session.json" >"$E/s.new" && mv "$E/s.new" "$E/session.json"
ln -s "$E" "$K/$evil"
# ...and listed in the index (a hand-edited or hostile line)
cp "$K/index.jsonl" "$T/index.keep"
echo '{"event":"created","session_id":"'"$evil"'","status":"completed","host":"x","started_at":"2099-12-31T00:00:00.000Z"}' >>"$K/index.jsonl"
"$RUNMON" report "$K" --session "$evil" >/dev/null 2>"$T/rep.err"
expect_eq "report --session <symlinked folder>: exit 2" 2 $?
expect_match "report says why" "symbolic link" "$(cat "$T/rep.err")"
check "report wrote nothing through the link" test ! -e "$E/report.html"
"$RUNMON" summary "$K" --session "$evil" --format json >/dev/null 2>"$T/sum.err"
expect_eq "summary --session <symlinked folder>: exit 2" 2 $?
expect_match "summary says why" "symbolic link" "$(cat "$T/sum.err")"
"$RUNMON" sessions "$K" --format json >"$T/ses.json" 2>"$T/ses.err"
expect_eq "sessions: exit 0" 0 $?
expect_eq "sessions does not list the symlinked folder" 0 "$(jq --arg e "$evil" '[.sessions[] | select(.session_id == $e)] | length' "$T/ses.json")"
expect_match "sessions warns about the symlinked folder" "$evil.*symbolic link" "$(cat "$T/ses.err")"
"$RUNMON" summary "$K" --format json >"$T/auto.json" 2>/dev/null
expect_eq "summary without --session does not pick the symlinked folder" "$s2" "$(jq -r .sink.session_id "$T/auto.json")"
rm "$K/$evil"
cp "$T/index.keep" "$K/index.jsonl"

# --- latest pointing out of the sink ------------------------------------------------------
X=$T/x
mkdir -p "$X"
cp "$K/$s2"/session.json "$K/$s1"/gpu.csv "$X/"
ln -sfn "$X" "$K/latest"
"$RUNMON" summary "$K" --format json >"$T/l.json" 2>/dev/null
expect_eq "summary SINK with latest out of the sink: exit 0" 0 $?
expect_eq "summary SINK does not follow latest out of the sink" "$K/$s2" "$(jq -r .path "$T/l.json")"
# A folder of session folders without a manifest: `latest` is only followed to a session id.
D=$T/plain
mkdir -p "$D"
cp "$K/$s1/gpu.csv" "$T/y.csv"
mkdir -p "$T/y" && mv "$T/y.csv" "$T/y/gpu.csv"
ln -s "$T/y" "$D/latest"
"$RUNMON" report "$D" >/dev/null 2>&1
check "report DIR does not follow latest out of DIR" test ! -e "$T/y/report.html"
"$RUNMON" summary "$D" --format json >/dev/null 2>&1
check "summary DIR does not follow latest out of DIR" test ! -e "$T/y/summary.json"
"$RUNMON" record -q -o "$K" -i 0.1 -- true
s3=$(readlink "$K/latest")
check "the next record rewrites latest to its session" test "$s3" != "$X" -a -d "$K/$s3" -a ! -L "$K/$s3"

# --- file modes -----------------------------------------------------------------------------
P=$T/private
"$RUNMON" record -q --private -o "$P" -i 0.1 --rollover-mb 0.002 -- sleep 1.5
expect_eq "record --private: exit 0" 0 $?
sp=$(readlink "$P/latest")
modes() { find "$1" "${@:2}" -exec stat -c '%a' {} + | sort -u | tr '\n' ' '; }
expect_eq "--private: every file of the session is 0600" "600 " "$(modes "$P/$sp" -type f)"
expect_eq "--private: the session folder is 0700" "700 " "$(modes "$P/$sp" -type d)"
expect_eq "--private: the sink it created is 0700" 700 "$(stat -c %a "$P")"
expect_eq "--private: index.jsonl, sink.json and .manifest.lock are 0600" "600 " "$(modes "$P" -maxdepth 1 -type f)"
check "--private: sealed segments were written" test -n "$(ls "$P/$sp" | grep -- '-[0-9]*\.csv$')"
"$RUNMON" report "$P" >/dev/null 2>&1
expect_eq "report in a private session is 0600" 600 "$(stat -c %a "$P/$sp/report.html")"
"$RUNMON" record -q -o "$P" -i 0.1 -- true
expect_eq "a later record without --private keeps index.jsonl private" 600 "$(stat -c %a "$P/index.jsonl")"
expect_eq "a later record without --private keeps sink.json private" 600 "$(stat -c %a "$P/sink.json")"

Q=$T/public
"$RUNMON" record -q -o "$Q" -i 0.1 -- sleep 1
sq=$(readlink "$Q/latest")
expect_eq "default: files 0644 under umask 022" "644 " "$(modes "$Q/$sq" -type f)"
expect_eq "default: folders 0755 under umask 022" "755 " "$(modes "$Q" -type d)"
"$RUNMON" report "$Q" >/dev/null 2>&1
expect_eq "report in a default session is 0644" 644 "$(stat -c %a "$Q/$sq/report.html")"

done_testing
