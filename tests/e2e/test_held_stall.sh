#!/usr/bin/env bash
# "Held back by" from the workload's own stalls (issue 38): stall.csv on real /proc. A
# workload pinned with taskset to the core a CPU hog also uses is called CPU-starved by its
# run-queue wait; the same workload beside a hog on the other core is not; a neighbour's heavy
# I/O in another process group does not blame a sleeping workload; a workload doing O_DIRECT
# reads (cold: no page cache) is called I/O-bound by its threads blocked in D state.
#
# The machine is shared (other builds run beside the tests): each case runs boosted (lib.sh:
# an autogroup of its own with the highest weight), so the other sessions' work barely takes
# the test's CPUs and only the hog competes. The
# assertions take the margins of the rules (waiting 25 % of the phase and 30 % of samples
# blocked, against about 50 % and 75 % measured).
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-idle
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
unset FAKE_SMI_OVERRIDE FAKE_SMI_THROTTLE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_VARY \
    RUNMON_RUNLOG RUNMON_PHASE_PATH

if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
    echo "1..0 # SKIP needs two CPUs and taskset"
    exit 0
fi
# A busy loop of about 3 s (the workload) and one of 15 s at most (the hog, stopped before).
BUSY='import time
end = time.time() + 3
while time.time() < end:
    pass'
HOG='import time
end = time.time() + 15  # never left behind for long
while time.time() < end:
    pass'

# The phase's held_back_by and stall figures.
held() { "$RUNMON" summary "$1" --format json | jq -c --arg p "$2" '.phases[] | select(.path == $p) | .held_back_by'; }
stall() { "$RUNMON" summary "$1" --format json | jq -c --arg p "$2" '.phases[] | select(.path == $p) | .stall'; }
rules() { jq -c '[.[]?.rule]' <<<"$1"; }
# lacks JSON RULE...: passes when none of the findings in JSON has one of the rules.
lacks() {
    local json=$1 r
    shift
    for r in "$@"; do
        jq -e --arg r "$r" 'any(.[]?; .rule == $r)' <<<"$json" >/dev/null && return 1
    done
    return 0
}

# --- CPU-starved: the workload and a hog pinned to the same core ----------------------------
# start_hog CPU: the hog pinned to CPU, boosted; HOG_PID is the python process itself (the
# shell that starts it writes its own pid, then becomes it).
start_hog() {
    rm -f "$T/hog.pid"
    # shellcheck disable=SC2016 # expanded by the inner shell
    setsid bash -c 'echo $$ >"$1"; echo -19 >/proc/self/autogroup 2>/dev/null; exec taskset -c "$2" python3 -c "$3"' \
        hog "$T/hog.pid" "$1" "$HOG" &
    wait_for "test -s '$T/hog.pid'" 5
    HOG_PID=$(cat "$T/hog.pid")
    track "$HOG_PID"
}
stop_hog() { kill "$HOG_PID" 2>/dev/null; wait "$HOG_PID" 2>/dev/null; }

start_hog 1
boosted taskset -c 1 "$RUNMON" record -q -o "$T/same" -i 0.2 -- "$RUNMON" phase work -- \
    python3 -c "$BUSY"
expect_eq "same core: record exit 0" 0 $?
stop_hog
S=$(session_dir "$T/same")
expect_eq "same core: the stall collector is healthy" healthy "$(jq -r '.collectors.stall.health' "$S/session.json")"
check "same core: stall.csv was written with its header" \
    grep -q '^ts,interval_ms,procs,threads,runnable,blocked,run_ns,wait_ns,blkio_ms,cgroup,' "$S/stall.csv"
st=$(stall "$S" work)
h=$(held "$S" work)
echo "# same core: $st"
echo "# same core: $h"
check "same core: it waited for the CPU a quarter of its runnable time or more" \
    jq -e '.run_queue_wait_share >= 0.25 and .waiting_threads_mean >= 0.25' <<<"$st"
expect_eq "same core: called CPU-starved, once, for GPU 0" '["cpu_starved"]' "$(rules "$h")"
check "same core: the finding lists its GPUs and names the workload's evidence" \
    jq -e '.[0] | .gpus == [0] and (.text | test("^CPU-starved: GPU 0 busy 0 % while its threads were runnable but waiting for a CPU [0-9]+ % of the phase \\([0-9]+ % of the time they were runnable"))' <<<"$h"
"$RUNMON" summary "$S" --format text >"$T/same.txt"
check "same core: the text output has the line" grep -q '^    held back by CPU-starved: GPU 0' "$T/same.txt"
"$RUNMON" report "$S" -o "$T/same.html" >/dev/null 2>&1
check "same core: the report's phase table has it" grep -q 'held back by CPU-starved: GPU 0' "$T/same.html"

# --- not starved: the hog on the other core ----------------------------------------------
start_hog 0
boosted taskset -c 1 "$RUNMON" record -q -o "$T/other" -i 0.2 -- "$RUNMON" phase work -- \
    python3 -c "$BUSY"
expect_eq "other core: record exit 0" 0 $?
stop_hog
S=$(session_dir "$T/other")
st=$(stall "$S" work)
h=$(held "$S" work)
echo "# other core: $st"
echo "# other core: $h"
check "other core: it hardly waited" jq -e '.waiting_threads_mean < 0.25' <<<"$st"
check "other core: not called CPU-starved" lacks "$h" cpu_starved

# --- a neighbour's heavy I/O does not blame a sleeping workload ---------------------------
head -c 64M /dev/urandom >"$T/big" && sync
READS='end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do dd if="$1" of=/dev/null bs=1M iflag=direct status=none; done'
setsid bash -c "$READS" neighbour "$T/big" &
N1=$!
setsid bash -c "$READS" neighbour "$T/big" &
N2=$!
track "$N1"
track "$N2"
sleep 0.3
boosted "$RUNMON" record -q -o "$T/nap" -i 0.2 -- "$RUNMON" phase nap -- sleep 3
expect_eq "neighbour: record exit 0" 0 $?
wait "$N1" "$N2" 2>/dev/null
S=$(session_dir "$T/nap")
st=$(stall "$S" nap)
h=$(held "$S" nap)
echo "# neighbour: io $("$RUNMON" summary "$S" --format json | jq -c '.phases[0].io | {io_some_pct}') $st"
echo "# neighbour: $h"
check "neighbour: the workload's threads were never blocked" jq -e '.io_blocked_share == 0' <<<"$st"
expect_eq "neighbour: a sleeping workload is held back by nothing" null "$h"

# --- I/O-bound: O_DIRECT reads (no page cache) -------------------------------------------
# two readers: a sample finds one of them waiting for the disk more often than not
boosted "$RUNMON" record -q -o "$T/read" -i 0.2 -- "$RUNMON" phase read -- \
    bash -c 'bash -c "$1" r "$2" & bash -c "$1" r "$2"; wait' readers "$READS" "$T/big"
expect_eq "reads: record exit 0" 0 $?
S=$(session_dir "$T/read")
st=$(stall "$S" read)
h=$(held "$S" read)
echo "# reads: $st"
echo "# reads: $h"
check "reads: its threads were blocked on I/O in 30 % of samples or more" \
    jq -e '.io_blocked_share >= 0.3' <<<"$st"
check "reads: called I/O-bound by its own blocked time" \
    jq -e 'any(.[]; .rule == "io_bound" and .gpus == [0] and (.text | test("its threads were blocked on I/O in [0-9]+ % of samples")))' <<<"$h"

# --- --cgroup (i38who's provider of the workload's pids): its own cgroup v2's pressure -------
CG=/sys/fs/cgroup/unified/runmon-e2e-stall-$$
if mkdir "$CG" 2>/dev/null; then
    trap 'rmdir "$CG" 2>/dev/null; _t_cleanup' EXIT
    start_hog 1
    setsid bash -c 'echo $$ >"$1/cgroup.procs"; echo -19 >/proc/self/autogroup 2>/dev/null; exec taskset -c 1 python3 -c "$2"' \
        w "$CG" "$BUSY" &
    W=$!
    track "$W"
    sleep 0.3
    boosted "$RUNMON" record -q -o "$T/cg" -i 0.2 --cgroup "$CG" -- sleep 2
    expect_eq "cgroup: record exit 0" 0 $?
    wait "$W"
    stop_hog
    S=$(session_dir "$T/cg")
    st=$("$RUNMON" summary "$S" --format json | jq -c '.stall')
    echo "# cgroup: $st"
    check "cgroup: stall.csv names the cgroup" grep -q ",$CG," "$S/stall.csv"
    check "cgroup: the workload's threads waited, and its own cgroup's cpu pressure says so" \
        jq -e '.waiting_threads_mean >= 0.25 and .cgroup_cpu_some_pct >= 20' <<<"$st"
else
    ok "cgroup: # SKIP cannot make a cgroup v2 here"
fi

# --- an old session without stall.csv: the evidence is missing, the host not blamed ------
cp -a "$T/nap" "$T/old"
S=$(session_dir "$T/old")
rm -f "$S/stall.csv" "$S/summary.json"
h=$(held "$S" nap)
echo "# old: $h"
check "old session: never blamed on the host alone" lacks "$h" input_bound cpu_starved io_bound
expect_eq "old session: the host's io pressure said to leave the workload's stalls unknown" \
    '["stalls_unknown"]' "$(rules "$h")"
done_testing
