#!/usr/bin/env bash
# The recorder's one tick (issue 24): with the nvidia-smi collectors running, the CPU samples
# are taken on their thread's slots and the pipes are read right after each, so no thread of
# its own samples the CPU and nothing wakes per nvidia-smi burst; the rows are the same. Without
# a GPU the CPU sampler keeps a thread of its own.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures" PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
unset FAKE_SMI_VIRTUAL_START FAKE_SMI_OVERRIDE FAKE_SMI_FAULT_ONLY FAKE_SMI_HANG_AFTER

# The thread names of runmon PID, sorted, space-separated.
thread_names() { cat /proc/"$1"/task/*/comm 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }

# --- 8 GPUs at 0.2 s: one thread for the CPU samples and the pipes --------------------------
FAKE_SMI_GPUS=8 "$RUNMON" record -q -o "$T/gpu" -i 0.2 -- sleep 4 &
pid=$!
track "$pid"
wait_for "[ -n \"\$(ls '$T/gpu'/*/gpu.csv 2>/dev/null)\" ]" 20
sleep 1
names=$(thread_names "$pid")
wait "$pid"; rc=$?
expect_eq "GPUs: exit 0" 0 "$rc"
expect_match "GPUs: the collectors' thread runs" "rm-collectors" "$names"
check "GPUs: no CPU sampler thread of its own (threads: $names)" test "${names/rm-sampler/}" = "$names"
check "GPUs: no I/O sampler thread of its own (threads: $names)" test "${names/rm-io/}" = "$names"
s=$(session_dir "$T/gpu")
n=$(rows "$s/cpu.csv")
# The 0.2 s grid over about 4 s (a loaded machine skips slots, never bursts).
check "GPUs: cpu rows on the tick ($n, 5..22)" test "$n" -ge 5 -a "$n" -le 22
check "GPUs: proc rows of the command's tree" test "$(rows "$s/proc.csv")" -ge 3
check "GPUs: gpu rows of all 8 GPUs" test "$(tail -n +2 "$s/gpu.csv" | cut -d, -f3 | sort -u | wc -l)" -eq 8
check "GPUs: dmon rows" test "$(rows "$s/dmon.csv")" -ge 8
expect_eq "GPUs: no degraded collector" 0 "$(count_event "$s" collector_degraded)"
# CPU rows stay on the absolute grid: 0.2 s apart (a skipped slot: a multiple of it).
expect_eq "GPUs: cpu rows 0.2 s apart (to 30 ms)" "" "$(python3 - "$s/cpu.csv" <<'PY'
import csv, sys
from datetime import datetime
t = [datetime.fromisoformat(r["ts"]).timestamp() for r in csv.DictReader(open(sys.argv[1]))]
for a, b in zip(t, t[1:]):
    k = round((b - a) / 0.2)
    if k < 1 or abs(b - a - k * 0.2) > 0.03:
        print(f"{a:.3f} -> {b:.3f}")
PY
)"
check "GPUs: the CPU sample's worst lateness is recorded" \
    jq -e '.cpu_sampler.max_lateness_ms | type == "number"' "$s/session.json"
# The I/O sample joins the tick: at --io-interval 1 its slots are every fifth CPU slot (one grid),
# taken right after that CPU sample, in the same wakeup.
io_beside_cpu() {
    python3 - "$1" <<'PY'
import csv, sys
from datetime import datetime
d = sys.argv[1]
cpu = [datetime.fromisoformat(r["ts"]).timestamp() for r in csv.DictReader(open(d + "/cpu.csv"))]
io = sorted({datetime.fromisoformat(r["ts"]).timestamp() for r in csv.DictReader(open(d + "/io.csv"))})
# The first (the baseline, before the first slot) and the last (at the stop) are off the grid.
for t in io[1:-1]:
    if not any(0 <= t - c < 0.03 for c in cpu):
        print(f"{t:.3f}")
print(len(io[1:-1]))
PY
}
out=$(io_beside_cpu "$s")
check "GPUs: io rows on the tick (${out##*$'\n'} samples, at least 2)" test "${out##*$'\n'}" -ge 2
expect_eq "GPUs: each io sample right after a CPU sample (same slot)" "" "$(sed '$d' <<<"$out")"

# --- a child that exits is seen at once (its pidfd), not at the next slot's read -----------
st=$T/state; mkdir -p "$st"
FAKE_SMI_STATE_DIR=$st FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_EXIT_AFTER=5 FAKE_SMI_EXIT_CODE=3 \
    FAKE_SMI_FAULT_TIMES=1 "$RUNMON" record -q -o "$T/exit" -i 0.2 -- sleep 4; rc=$?
expect_eq "exit: record exits 0" 0 "$rc"
s=$(session_dir "$T/exit")
expect_eq "exit: one collector_degraded for gpu" 1 \
    "$(jq -r 'select(.type=="event" and .event=="collector_degraded") | .data.collector' "$s/runlog.jsonl" | grep -cx gpu)"
expect_eq "exit: and its recovery" 1 "$(count_event "$s" collector_recovered)"

# --- pmon's rows are read at the slot, and each burst stays one sample ----------------------
# At -i 1 with a burst every 0.2 s, a read holds five bursts, most of the same Date+Time (-o
# DT): read at the slot without telling them apart they were stamped alike and summed into one
# sample (a 2000 MiB process peaked at 10000). A repeated (GPU, pid) starts the next one.
sleep 30 &
foreign=$!
track "$foreign"
echo "0 $foreign C 2000 - - sleep" >"$T/apps.txt"
FAKE_SMI_GPUS=1 FAKE_SMI_APPS=$T/apps.txt FAKE_SMI_PMON_MS=200 \
    "$RUNMON" record -q -o "$T/pmon" -i 1 -- sleep 3
expect_eq "pmon: record exits 0" 0 $?
s=$(session_dir "$T/pmon")
"$RUNMON" summary "$s" --format json >"$T/pmon.json" 2>/dev/null
expect_eq "pmon: one sample per burst (the process's peak is its 2000 MiB)" 2000 \
    "$(jq '.gpus[0].other_vram_mb.peak' "$T/pmon.json")"
nts=$(tail -n +2 "$s/apps.csv" | cut -d, -f1 | sort -u | wc -l)
check "pmon: a time per burst ($nts in 3 s, at least 8)" test "$nts" -ge 8
kill "$foreign" 2>/dev/null

# --- without a GPU the samplers share one thread of their own ------------------------------
"$RUNMON" record -q --no-gpu -o "$T/nogpu" -i 0.2 -- sleep 3 &
pid=$!
track "$pid"
wait_for "[ -n \"\$(ls '$T/nogpu'/*/cpu.csv 2>/dev/null)\" ]" 20
# A thread names itself once it runs: under load cpu.csv can exist a moment before.
wait_for "thread_names $pid | grep -q rm-sampler" 10 || true
names=$(thread_names "$pid")
wait "$pid"
expect_match "no GPU: the CPU sampler's thread runs" "rm-sampler" "$names"
check "no GPU: no I/O sampler thread of its own (threads: $names)" test "${names/rm-io/}" = "$names"
s=$(session_dir "$T/nogpu")
check "no GPU: cpu rows" test "$(rows "$s/cpu.csv")" -ge 3
out=$(io_beside_cpu "$s")
check "no GPU: io rows (${out##*$'\n'} samples, at least 1)" test "${out##*$'\n'}" -ge 1
expect_eq "no GPU: each io sample right after a CPU sample (same slot)" "" "$(sed '$d' <<<"$out")"

# At -i 1 and --io-interval 1 the one thread wakes once a second for both: its voluntary
# context switches (its sleeps) over 3 quiet seconds, at most 4 (rm-sampler and rm-io woke 3
# times each before). Preemptions are not counted: under a loaded CI machine they came on top
# (6 in 3 s once).
thread_switches() { # PID NAME
    local t
    for t in /proc/"$1"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] || continue
        awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }' "$t/status"
    done
}
"$RUNMON" record -q --no-gpu -o "$T/one" -i 1 --io-interval 1 -- sleep 30 &
pid=$!
track "$pid"
wait_for "[ -n \"\$(ls '$T/one'/*/io.csv 2>/dev/null)\" ]" 20
sleep 1.5
a=$(thread_switches "$pid" rm-sampler)
sleep 3
b=$(thread_switches "$pid" rm-sampler)
check "no GPU, 1 s: the sampler thread woke $((b - a)) times in 3 s (2..4)" test $((b - a)) -ge 2 -a $((b - a)) -le 4
kill -INT "$pid"; wait "$pid"

# --- the main thread sleeps until something happens -----------------------------------------
# It waits on the signals, the command's pidfd, --duration and the exporters' due times; it
# used to wake once a second besides. Its context switches over 3 quiet seconds (a command
# that runs on, no exporter): at most one, against about three before.
switches() { awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }' "/proc/$1/status"; }
"$RUNMON" record -q --no-gpu -o "$T/quiet" -i 1 -- sleep 30 &
pid=$!
track "$pid"
wait_for "[ -n \"\$(ls '$T/quiet'/*/cpu.csv 2>/dev/null)\" ]" 20
sleep 0.5
a=$(switches "$pid")
sleep 3
b=$(switches "$pid")
check "quiet: the main thread woke $((b - a)) times in 3 s (at most 1)" test $((b - a)) -le 1
t0=$(date +%s%N)
pkill -TERM -P "$pid" -x sleep # the command's end is seen at once (SIGCHLD, pidfd)
wait "$pid"
expect_eq "quiet: the command's exit ends the recording (its status: SIGTERM)" 143 $?
check "quiet: within 2 s of it" test $((($(date +%s%N) - t0) / 1000000)) -lt 2000

done_testing
