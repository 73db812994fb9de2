#!/usr/bin/env bash
# The sink's metadata after a power loss (issue 24 section 2): state.json and sink.json are
# replaced atomically every --flush-seconds round but made durable only every 30 s (and when a
# segment is sealed or pruned, a session starts or ends), so after a power loss they may be
# stale, empty or torn. Each of those is simulated on a copy of a sink (a recorder killed
# with SIGKILL, and one that ended): the next open lists every session once with its status,
# and the totals are the bytes on disk again.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
rows() { local n=0; [ -f "$1" ] && n=$(wc -l <"$1"); [ "$n" -gt 0 ] && n=$((n - 1)); echo "$n"; }
disk_rows() { local n=0 x; for x in "$1"/*.csv; do n=$((n + $(rows "$x"))); done; echo "$n"; }

# A session whose recorder died (SIGKILL: the same files a power loss leaves, rows synced),
# with sealed segments, and copies of its state.json and sink.json from its early seconds.
K=$T/k
"$RUNMON" record -q -o "$K" -i 0.1 --rollover-mb 0.01 --retention-files 0 -- sleep 30 &
rp=$!
track $rp
wait_for "test -f '$K/latest/gpu-000001.csv'" 20
s=$(readlink "$K/latest")
cp "$K/$s/state.json" "$T/state.early"
cp "$K/sink.json" "$T/sink.early"
wait_for "test -f '$K/latest/gpu-000003.csv'" 20
sleep 0.3
kill -9 $rp
wait $rp 2>/dev/null
pkill -9 -P $rp 2>/dev/null

# Runs the open of a damaged copy and checks it. NAME DIR
check_mended() {
    local n=$1 d=$2 j
    j=$("$RUNMON" sessions "$d" --format json 2>"$T/$n.err")
    expect_eq "$n: sessions exits 0" 0 $?
    expect_eq "$n: one session listed" 1 "$(jq '.sessions | length' <<<"$j")"
    expect_eq "$n: its status" "$3" "$(jq -r '.sessions[0].status' <<<"$j")"
    expect_eq "$n: sink.json's totals = the CSV files on disk" "$(sink_disk_totals "$d")" \
        "$(sink_json_totals "$d")"
    expect_eq "$n: nothing left running in sink.json" 0 "$(jq '.running | length' "$d/sink.json")"
    expect_eq "$n: state.json lists every CSV file" "$(ls "$d/$s"/*.csv | wc -l)" \
        "$(jq '[.segments[] | select(.pruned | not)] | length' "$d/$s/state.json")"
    "$RUNMON" summary "$d" --format json >"$T/$n.json" 2>/dev/null
    expect_eq "$n: summary reads every row on disk" "$(disk_rows "$d/$s")" \
        "$(jq .data_quality.rows_read "$T/$n.json")"
}

damage() { # NAME SRC HOW: a copy of SRC with state.json and sink.json made HOW
    local d=$T/$1 f
    cp -a "$2" "$d"
    for f in "$d/$s/state.json" "$d/sink.json"; do
        case $3 in
        empty) : >"$f" ;;
        half) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
        esac
    done
    case $3 in stale) cp "$T/state.early" "$d/$s/state.json" && cp "$T/sink.early" "$d/sink.json" ;; esac
}

for how in empty half stale; do
    damage "killed-$how" "$K" "$how"
    check_mended "killed-$how" "$T/killed-$how" interrupted
done
check "the stale copy was behind the files" test "$(jq '.segments | length' "$T/state.early")" -lt \
    "$(ls "$K/$s"/*.csv | wc -l)"

# A session that ended: its last state.json and sink.json were durable, but a later round of
# another recorder's could have left sink.json torn; state.json torn as well for the worst case.
E=$T/e
"$RUNMON" record -q -o "$E" -i 0.1 --rollover-mb 0.01 -- sleep 1.5
expect_eq "ended: recorded" 0 $?
s=$(readlink "$E/latest")
for how in empty half; do
    damage "ended-$how" "$E" "$how"
    check_mended "ended-$how" "$T/ended-$how" completed
done

# What is synced: the rows every round, the documents only at the start and the end here
# (3 s, no segment sealed: under the 30 s). Each round used to fsync both documents and their
# folder (4 fsyncs a round: about 60 in this run).
if strace -f -qq -e trace=fsync -o "$T/probe.txt" true 2>/dev/null; then
    D=$T/synced
    # LeakSanitizer cannot run under a tracer: the leak check is the other tests'.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -qq -e trace=fsync,fdatasync -o "$T/strace.txt" \
        "$RUNMON" record -q -o "$D" -i 0.1 --flush-seconds 0.2 -- sleep 3
    expect_eq "synced: recorded" 0 $?
    nsync=$(grep -c ' fsync(' "$T/strace.txt")
    ndata=$(grep -c ' fdatasync(' "$T/strace.txt")
    check "synced: the rows every round ($ndata fdatasyncs)" test "$ndata" -ge 20
    check "synced: the documents at the start and the end only ($nsync fsyncs)" test "$nsync" -le 30
    expect_eq "synced: totals = the disk" "$(sink_disk_totals "$D")" "$(sink_json_totals "$D")"
else
    ok "# SKIP strace cannot trace here: the syncs are not counted"
fi

done_testing
