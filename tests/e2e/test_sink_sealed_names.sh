#!/usr/bin/env bash
# Retention deletes only sealed segments (issue 27, item 4): sink.json's "sealed" list and a
# state.json's sealed entries are never trusted as file names. An entry whose name does not
# fit its state (a sealed entry naming the live gpu.csv, an active entry naming a sealed file)
# is skipped with a warning on stderr and counted in sink.json's "ignored_entries"; a finished
# session's live files stay, and the totals stay the bytes on disk.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2

K=$T/k
"$RUNMON" record -q -o "$K" -i 0.1 -- sleep 0.5
a=$(readlink "$K/latest")
sum_a=$(cd "$K/$a" && sha256sum gpu.csv cpu.csv dmon.csv)
# The oldest entries retention could choose: the finished session's live files.
t=$K/sink.json
jq --arg s "$a" '.sealed = [
    {session_id: $s, file: "gpu.csv", stream: "gpu", bytes: 1, last_row_at: "2000-01-01T00:00:00.000+00:00"},
    {session_id: $s, file: "dmon.csv", stream: "dmon", bytes: 1, last_row_at: "2000-01-01T00:00:01.000+00:00"}] + .sealed' \
    "$t" >"$t.new" && mv "$t.new" "$t"
st=$K/$a/state.json
jq '.segments += [{file: "cpu.csv", stream: "cpu", session_id: .session.session_id, state: "sealed",
     pruned: false, first_row_at: "2000-01-01T00:00:00.000+00:00",
     last_row_at: "2000-01-01T00:00:02.000+00:00", rows: 1, bytes: 1, aggregate: null}]' "$st" >"$st.new" &&
    mv "$st.new" "$st"
# A rebuild takes state.json's entries into sink.json; then a recording whose retention keeps
# one sealed segment per stream (and 0.05 MB in all) prunes the oldest entries it knows.
"$RUNMON" sessions "$K" --rebuild --format json >/dev/null 2>"$T/rebuild.err"
expect_match "rebuild: the sealed entry naming cpu.csv is ignored, said on stderr" \
    "segment entry 'cpu.csv' of session '$a' ignored: a sealed segment is named" "$(cat "$T/rebuild.err")"
jq --arg s "$a" '.sealed = [
    {session_id: $s, file: "gpu.csv", stream: "gpu", bytes: 1, last_row_at: "2000-01-01T00:00:00.000+00:00"}] + .sealed' \
    "$t" >"$t.new" && mv "$t.new" "$t"
"$RUNMON" record -q -o "$K" -i 0.1 --rollover-mb 0.002 --retention-files 1 --retention-total-mb 0.05 \
    -- sleep 2 2>"$T/rec.err"
expect_eq "record with retention: exit 0" 0 $?
b=$(readlink "$K/latest")
expect_eq "the finished session's live files are all there, unchanged" "$sum_a" \
    "$(cd "$K/$a" && sha256sum gpu.csv cpu.csv dmon.csv 2>&1)"
expect_match "a warning names the sealed entry naming gpu.csv" \
    "segment entry 'gpu.csv' of session '$a' ignored: a sealed segment is named <stream>-NNNNNN.csv" \
    "$(cat "$T/rec.err")"
check "sink.json counts the ignored entries" test "$(jq '.ignored_entries // 0' "$t")" -ge 2
expect_eq "no sealed entry of sink.json names an active file" 0 \
    "$(jq '[.sealed[] | select(.file | test("-[0-9]+\\.csv$") | not)] | length' "$t")"
check "retention still pruned the new session's own sealed segments" \
    test "$(jq '[.segments[] | select(.pruned)] | length' "$K/$b/state.json")" -ge 1
expect_eq "totals = disk" "$(sink_disk_totals "$K")" "$(sink_json_totals "$K")"
check "no cpu.csv entry marked sealed in the old session's state.json" \
    test "$(jq '[.segments[] | select(.file == "cpu.csv" and .state == "sealed")] | length' "$st")" = 0

done_testing
