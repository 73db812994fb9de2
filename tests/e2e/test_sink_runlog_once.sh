#!/usr/bin/env bash
# Issue 39: a sink's first open adopts each session folder's segment files (a rebuild, a run
# with no state.json, as bench/gen_sweep.py makes them). Each file's aggregate read the whole
# run log again, once per stream file: 7 parses of 10,000 metric lines per run made the first
# `runmon sessions` of 1,000 runs minutes long. The run log is now read at most once per
# folder, and only for a sealed file (an active file's entry keeps no aggregate). strace sees
# every open; the aggregates still hold the phases.
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
command -v strace >/dev/null || { ok "# SKIP strace missing"; done_testing; }
trace() { # OUT CMD...: the opens of CMD
    local out=$1; shift
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
        strace -f -qq -e trace=open,openat -o "$out" "$@"
}
runlog_opens() { grep -E "open(at)?\(.*$2/runlog.jsonl\", O_RDONLY" "$1" | grep -vc ENOENT; }

# Sealed segments (a small rollover) inside a phase, and metric lines.
K=$T/sink
"$RUNMON_REL" record -q -o "$K" -i 0.1 --rollover-mb 0.002 -- sh -c \
    "'$RUNMON_REL' phase train -- sh -c 'for i in 1 2 3 4 5 6 7 8; do '$RUNMON_REL' log metric loss=0.\$i; sleep 0.2; done'"
id=$(basename "$(readlink -f "$K/latest")")
sealed=$(ls "$K/$id" | grep -cE '^[a-z]+-[0-9]+\.csv$' || true)
expect_eq "sealed segments recorded" yes "$([ "$sealed" -ge 1 ] && echo yes || echo no)"
# Lost state.json and index: the rebuild adopts every file from the folder.
rm -f "$K/$id/state.json" "$K/index.jsonl" "$K/sink.json"
trace "$T/rebuild.txt" "$RUNMON" sessions "$K" --format json >"$T/rebuild.json"
expect_eq "rebuild: the session listed" 1 "$(jq '.sessions | length' "$T/rebuild.json")"
expect_eq "rebuild: its run log read once for $sealed sealed files" 1 "$(runlog_opens "$T/rebuild.txt" "$id")"
expect_eq "rebuild: adopted sealed aggregates keep the phases" yes \
    "$(jq -r '[.segments[] | select(.state == "sealed" and .aggregate != null) | .aggregate.phases // empty | .[].path] | index("train") != null | if . then "yes" else "no" end' "$K/$id/state.json")"

# A generated sweep (no state.json, active files only): no run log read at all.
"$RUNMON_REL" record -q -o "$T/tpl" -i 0.1 -- "$RUNMON_REL" phase train -- sleep 0.5
python3 "$(dirname "$0")/../../bench/gen_sweep.py" --template "$(readlink -f "$T/tpl/latest")" --dest "$T/sw" --count 3 \
    --link --metric-lines 2000 >/dev/null
trace "$T/sweep.txt" "$RUNMON" sessions "$T/sw" --format json >"$T/sweep.json"
expect_eq "sweep: every run listed" 3 "$(jq '.sessions | length' "$T/sweep.json")"
expect_eq "sweep: no run log read to adopt active files" 0 "$(runlog_opens "$T/sweep.txt" "")"
done_testing
