#!/usr/bin/env bash
# The telemetry sink: rollover and retention hold their budget with counters that match the
# files, sealed segments are whole CSVs, the manifest's aggregates give the same summary as
# a rescan, session selection, `runmon sessions`, latest, tail -F across rollovers, and the
# index's compaction.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=4 FAKE_SMI_VARY=1
rows() { local n=0; [ -f "$1" ] && n=$(wc -l <"$1"); [ "$n" -gt 0 ] && n=$((n - 1)); echo "$n"; }

# --- rollover + retention at small sizes ------------------------------------------------
K=$T/sink
"$RUNMON" record -q -o "$K" -i 0.1 --rollover-mb 0.01 --retention-files 2 -- sleep 6
expect_eq "record: exit status 0" 0 $?
s=$(readlink "$K/latest")
S=$K/$s
check "latest points at the session folder" test -f "$S/session.json"
m=$S/state.json      # the session's own entry and segments
c=$K/sink.json       # the sink's counters
expect_eq "index format" runmon-sink-index "$(head -1 "$K/index.jsonl" | jq -r .format)"
expect_eq "state: session completed" completed "$(jq -r .session.status "$m")"
expect_eq "index: session completed" completed "$(grep -F "\"$s\"" "$K/index.jsonl" | tail -1 | jq -r .status)"
sealed_gpu=$(ls "$S" | grep -c '^gpu-[0-9]*\.csv$')
check "at most 2 sealed gpu segments on disk" test "$sealed_gpu" -le 2 -a "$sealed_gpu" -ge 1
for st in gpu dmon cpu proc; do
    n=$(ls "$S" | grep -c "^$st-[0-9]*\.csv$")
    check "$st: sealed within retention ($n)" test "$n" -le 2
    a=$(ls "$S" | grep -c "^$st\.csv$")
    check "$st: at most one active file" test "$a" -le 1
done
rollovers=$(jq .counters.rollover_count "$c")
pruned=$(jq .counters.pruned_segment_count "$c")
check "several rollovers ($rollovers)" test "$rollovers" -ge 3
check "pruned some ($pruned)" test "$pruned" -ge 1
sealed_on_disk=$(ls "$S" | grep -c -- '-[0-9]*\.csv$')
expect_eq "rollovers - pruned = sealed files on disk" "$sealed_on_disk" $((rollovers - pruned))
csv_files=$(ls "$S" | grep -c '\.csv$')
expect_eq "final_retained_files = csv files on disk" "$csv_files" "$(jq .counters.final_retained_files "$c")"
bytes=$(cat "$S"/*.csv | wc -c)
expect_eq "final_retained_bytes = csv bytes on disk" "$bytes" "$(jq .counters.final_retained_bytes "$c")"
pb=$(jq '[.segments[] | select(.pruned) | .bytes] | add' "$m")
expect_eq "pruned_bytes = sum of pruned entries" "$pb" "$(jq .counters.pruned_bytes "$c")"
check "pruned entries keep their aggregates" test "$(jq '[.segments[] | select(.pruned) | .aggregate.format] | unique' -c "$m")" = '["runmon-segment-stats"]'
check "sealed entries have rows, times, bytes" test "$(jq '[.segments[] | select(.state=="sealed") | (.rows > 0 and .bytes > 0 and (.first_row_at|type)=="string")] | all' "$m")" = true
f=$(ls "$S"/gpu-*.csv | head -1)
expect_match "a sealed segment starts with its own header" '^ts,timestamp,index' "$(head -1 "$f")"
expect_eq "no header mid-segment" 1 "$(grep -c '^ts,' "$f")"
expect_match "the active file starts with the header" '^ts,timestamp,index' "$(head -1 "$S/gpu.csv")"
for x in "$S"/*.csv; do
    ok=$(awk -F, 'NR==1{n=NF} NF!=n{bad=1} END{print bad?0:1}' "$x")
    [ "$ok" = 1 ] || break
done
expect_eq "every segment is a whole CSV (same field count on every line)" 1 "$ok"
check "summary.json written" test -f "$S/summary.json"
expect_eq "summary.json used the manifest" true "$(jq '.sink.segments_from_manifest > 0' "$S/summary.json")"

# --- summary from the manifest == --rescan; rows of pruned segments still counted -------
"$RUNMON" summary "$K" --format json >"$T/a.json" 2>"$T/a.err"
expect_eq "summary of a sink dir: exit 0" 0 $?
expect_match "chosen session named on stderr" "session $s" "$(cat "$T/a.err")"
"$RUNMON" summary "$K" --rescan --format json >"$T/b.json" 2>/dev/null
norm='del(.generated_at, .data_quality.files, .sink)'
expect_eq "manifest aggregates == rescan" "$(jq -S "$norm" "$T/b.json")" "$(jq -S "$norm" "$T/a.json")"
expect_eq "rescan read the files" true "$(jq .sink.rescan "$T/b.json")"
total_rows=$(jq '[.segments[] | select(.session_id=="'"$s"'" and .stream=="gpu") | .rows] | add' "$m")
gpu_rows_disk=0
for x in "$S"/gpu*.csv; do gpu_rows_disk=$((gpu_rows_disk + $(rows "$x"))); done
check "manifest knows more gpu rows than the disk keeps" test "$total_rows" -gt "$gpu_rows_disk"
samples=$(jq '[.gpus[] | .samples // .utilization_gpu.samples // empty] | length' "$T/a.json")
check "summary covers 4 GPUs" test "$(jq '.gpus | length' "$T/a.json")" -eq 4
cov=$(jq .data_quality.coverage "$T/a.json")
check "coverage spans the pruned segments too ($cov)" test "$(jq '.data_quality.coverage > 0.8' "$T/a.json")" = true

# --- a second session, session selection, runmon sessions ---------------------------------
"$RUNMON" record -q -o "$K" -i 0.2 -- sh -c 'exit 5'
expect_eq "failing command: its status" 5 $?
s2=$(readlink "$K/latest")
check "latest moved to the new session" test "$s2" != "$s"
"$RUNMON" summary "$K" --format json >"$T/c.json" 2>"$T/c.err"
expect_match "default: newest completed, not the newer failed one" "session $s\$" "$(cat "$T/c.err")"
"$RUNMON" summary "$K" --session "$s2" --format json >"$T/d.json" 2>/dev/null
expect_eq "--session picks that one" "$s2" "$(jq -r .sink.session_id "$T/d.json")"
"$RUNMON" summary "$K" --session latest --format json >"$T/l.json" 2>/dev/null
expect_eq "--session latest: where the latest link points (the failed one)" "$s2" "$(jq -r .sink.session_id "$T/l.json")"
"$RUNMON" summary "$K" --session nosuch --format json >/dev/null 2>"$T/e.err"
expect_eq "--session unknown: exit 2" 2 $?
"$RUNMON" summary "$T" --session x >/dev/null 2>&1
expect_eq "--session without a sink: exit 2" 2 $?
j=$("$RUNMON" sessions "$K" --format json)
expect_eq "sessions: two" 2 "$(jq '.sessions | length' <<<"$j")"
expect_eq "sessions: statuses" "completed failed" "$(jq -r '[.sessions[] | .status] | join(" ")' <<<"$j")"
expect_eq "sessions: exit code" 5 "$(jq --arg s "$s2" '.sessions[] | select(.session_id==$s) | .exit_code' <<<"$j")"
check "sessions: bytes counted" test "$(jq '.sessions[0].bytes > 0' <<<"$j")" = true
txt=$("$RUNMON" sessions "$K" --format text)
expect_match "sessions text: id, status, command" "$s2 +failed .*sh -c exit 5" "$txt"
"$RUNMON" sessions "$T/nothing" >/dev/null 2>&1
expect_eq "sessions on a missing dir: exit 2" 2 $?

# --- several sink dirs: one summary per host plus totals -------------------------------
"$RUNMON" record -q -o "$T/node2" -i 0.2 -- sleep 1
"$RUNMON" summary "$K" "$T/node2" --format json >"$T/set.json" 2>/dev/null
expect_eq "two sinks: a summary set" runmon-summary-set "$(jq -r .format "$T/set.json")"
expect_eq "two sinks: two summaries" 2 "$(jq '.summaries | length' "$T/set.json")"
expect_eq "two sinks: gpu total" 8 "$(jq .totals.gpu_count "$T/set.json")"
"$RUNMON" summary "$K" "$T/node2" --format text >"$T/set.txt" 2>/dev/null
expect_eq "two sinks text: a row per host and a totals row" 3 \
    "$(sed -n '/^All paths/,$p' "$T/set.txt" | grep -cE '^  [^ ]+ +[0-9]+ +[0-9.]+ ')"
expect_match "two sinks text: totals row" "TOTAL +8 " "$(cat "$T/set.txt")"

# --- tail -F follows gpu.csv across rollovers ------------------------------------------
K2=$T/tail
"$RUNMON" record -q -o "$K2" -i 0.1 --rollover-mb 0.01 --retention-files 0 -- sleep 5 &
rp=$!
track $rp
wait_for "test -f '$K2/latest/gpu.csv'" 10
tail -n +1 -F "$K2/latest/gpu.csv" >"$T/tail.out" 2>/dev/null &
tp=$!
track $tp
wait $rp
# tail has caught up once it printed the last row written (not after a fixed sleep)
last=$(tail -n 1 "$K2/latest/gpu.csv")
wait_for "grep -qxF '$last' '$T/tail.out'" 20
kill "$tp" 2>/dev/null
wait "$tp" 2>/dev/null
segs=$(ls "$K2/latest/" | grep -c '^gpu-[0-9]*\.csv$')
check "tail: the recording rolled over ($segs sealed)" test "$segs" -ge 3
headers=$(grep -c '^ts,' "$T/tail.out")
check "tail: saw several files' headers ($headers)" test "$headers" -ge 3
data=$(grep -v '^ts,' "$T/tail.out")
expect_eq "tail: no duplicate rows" 0 "$(sort <<<"$data" | uniq -d | wc -l)"
expect_eq "tail: rows in time order" "$(cut -d, -f1 <<<"$data")" "$(cut -d, -f1 <<<"$data" | sort -s)"
check "tail: rows from several segments ($(wc -l <<<"$data"))" test "$(wc -l <<<"$data")" -gt "$(rows "$K2/latest/gpu-000001.csv")"
all=$(cat $(ls "$K2"/latest/gpu-*.csv | sort) "$K2/latest/gpu.csv" | grep -v '^ts,' | wc -l)
check "tail: saw most rows ($(wc -l <<<"$data") of $all)" test "$(wc -l <<<"$data")" -ge $((all * 8 / 10))

# --- the index: two lines per session, compacted once a third of it is superseded ----------
X=$T/many
for i in $(seq 1 70); do "$RUNMON" record -q -o "$X" -i 1 --no-gpu -- true || break; done
expect_eq "70 recordings: 70 sessions listed" 70 "$("$RUNMON" sessions "$X" --format json | jq '.sessions | length')"
j=$("$RUNMON" sessions "$X" --format json)
expect_eq "listed once each: the session folders" "$(ls "$X" | grep -v -e latest -e '\.' | sort | tr '\n' ' ')" \
    "$(jq -r '.sessions[].session_id' <<<"$j" | sort | tr '\n' ' ')"
expect_eq "in the order they were made" true "$(jq '[.sessions[].started_at] | . == sort' <<<"$j")"
expect_eq "the index was compacted once" 1 "$(jq .index.compactions "$X/sink.json")"
expect_eq "index lines: the header, one per session then, two per session since" \
    "$((1 + $(jq .index.lines "$X/sink.json")))" "$(wc -l <"$X/index.jsonl")"
check "the index is shorter than two lines a session ($(wc -l <"$X/index.jsonl"))" \
    test "$(wc -l <"$X/index.jsonl")" -lt 141
expect_eq "every session completed" completed \
    "$("$RUNMON" sessions "$X" --format json | jq -r '[.sessions[].status] | unique | join(" ")')"

done_testing
