#!/usr/bin/env bash
# Issue 37: opening a sink reads each session folder once, then mends. A rebuild opens and
# lists every session folder once (it was opened four times: stray temps, stray segments,
# missing sealed ones, sizes) and the sink's folder once; recovering a dead recorder's
# session opens its folder once and reads its session.json once (it was read twice). What
# the sink then says is checked by test_sink*.sh and tests/chaos.sh; here, what it costs
# (strace sees every open and every directory read).
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2
command -v strace >/dev/null || { ok "# SKIP strace missing"; done_testing; }
trace() { # OUT CMD...: the opens, directory reads and fsyncs of CMD, descriptors named (-y)
    local out=$1; shift
    # LeakSanitizer cannot run under ptrace; the rest of ASan can.
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
        strace -f -qq -y -e trace=open,openat,getdents64,fsync -o "$out" "$@"
}
# The times folder $2 was opened to be read: its directory opens (by path, or relative to the
# sink's folder) less those that only fsync it (after a file in it was replaced).
folder_opens() {
    local o f
    o=$(grep -cE "open(at)?\(.*\"([^\"]*/)?$2\", O_RDONLY\|.*O_DIRECTORY" "$1")
    f=$(grep -cE "^[0-9]+ +fsync\([0-9]+<[^>]*/$2>\)" "$1")
    echo $((o - f))
}
# The times folder $2 was listed (each listing ends with a read that returns 0).
folder_lists() { grep -cE "getdents64\([0-9]+<[^>]*/$2>, .*\) = 0$" "$1"; }

K=$T/sink
mkdir -p "$K"
"$RUNMON_REL" record -q -o "$K/tpl" -i 0.1 --rollover-mb 0.005 -- sleep 0.8
python3 "$(dirname "$0")/../../bench/gen_sink.py" --template "$K/tpl" --dest "$K/s" --count 20 >/dev/null
n=$(ls -d "$K"/s/2*/ | wc -l)
expect_eq "20 session folders" 20 "$n"
# A stray temp file of a dead writer: the one read still finds it.
one=$(ls -d "$K"/s/2*/ | head -1)
: >"$one/summary.json.tmp.999999999"

trace "$T/rebuild.txt" "$RUNMON" sessions --rebuild "$K/s" --format json >"$T/rebuild.json"
expect_eq "rebuild: every session listed" 20 "$(jq '.sessions | length' "$T/rebuild.json")"
bad=0
for d in "$K"/s/2*/; do
    id=$(basename "$d")
    c="$(folder_opens "$T/rebuild.txt" "$id") $(folder_lists "$T/rebuild.txt" "$id")"
    [ "$c" = "1 1" ] || { bad=$((bad + 1)); echo "# $id opened, listed: $c"; }
done
expect_eq "rebuild: each session folder opened and listed once" 0 "$bad"
expect_eq "rebuild: the dead writer's temp file removed" no "$([ -e "$one/summary.json.tmp.999999999" ] && echo yes || echo no)"

# A recorder killed mid-run: the next open finishes its session, reading its folder once.
"$RUNMON_REL" record -q -o "$K/s" -i 0.1 -- sleep 4 &
pid=$!
track "$pid"
wait_for "[ -n \"\$(ls -d $K/s/*-$pid 2>/dev/null)\" ] && [ -f \$(ls -d $K/s/*-$pid)/state.json ] && [ -f \$(ls -d $K/s/*-$pid)/session.json ]" 10
dead=$(basename "$(ls -d "$K"/s/*-"$pid")")
kill -9 "$pid"
wait "$pid" 2>/dev/null
# Its state.json unreadable (a power cut after a replace that skipped its fsync): the
# session is rebuilt from session.json, read once for that and for how the session ended.
: >"$K/s/$dead/state.json"
trace "$T/recover.txt" "$RUNMON" sessions "$K/s" --format json >"$T/recover.json"
expect_eq "recovery: the killed recorder's session ends interrupted" interrupted \
    "$(jq -r --arg id "$dead" '.sessions[] | select(.session_id == $id) | .status' "$T/recover.json")"
expect_eq "recovery: its folder opened and listed once" "1 1" \
    "$(folder_opens "$T/recover.txt" "$dead") $(folder_lists "$T/recover.txt" "$dead")"
expect_eq "recovery: its session.json read once" 1 \
    "$(grep -E "open(at)?\(.*$dead/session.json\", O_RDONLY" "$T/recover.txt" | grep -c .)"
done_testing
