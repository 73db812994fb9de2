#!/usr/bin/env bash
# The Python module (python/runmon): its unittest suite as TAP, then end to end with the
# C binaries: framework peaks under runmon record, nesting both ways with runmon phase,
# four writers (Python and runmon log) sharing one file, the old monitor's API, and what
# happens without a run log or with a broken one.
. "$(dirname "$0")/lib.sh"

: "${RUNMON_REL:=$BUILD/runmon}"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
export PYTHONPATH="$REPO/python${PYTHONPATH:+:$PYTHONPATH}"
export RUNMON RUNMON_REL FAKEBIN FIXTURES
SYSPATH=/usr/local/bin:/usr/bin:/bin
unset RUNMON_RUNLOG RUNMON_PHASE_PATH

# --- the unittest suite, one TAP line per test ---------------------------------------------
"$PY" "$REPO/python/tests/tap.py" >"$T/unit.tap" 2>"$T/unit.err"; rc=$?
while IFS= read -r line; do
    case $line in
        "ok "*) ok "${line#ok * - }" ;;
        "not ok "*) _t_n=$((_t_n + 1)); _t_failed=$((_t_failed + 1)); echo "not ok $_t_n - ${line#not ok * - }" ;;
        "#"*) echo "$line" ;;
    esac
done <"$T/unit.tap"
grep -q '^not ok ' "$T/unit.tap" || expect_eq "unittest suite exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/unit.err" | tail -20

# --- the same lines from the C writer and from Python (jq: all but ts/t/pid, in order) -------
"$RUNMON" log --file "$T/c.jsonl" phase load 1.2345 lr=0.1 tag=a
"$RUNMON" log --file "$T/c.jsonl" event checkpoint step=10 loss=0.197
"$RUNMON" log --file "$T/c.jsonl" event bare
RUNMON_PHASE_PATH=job "$RUNMON" phase --file "$T/c.jsonl" train lr=0.1 -- true
RUNMON_PHASE_PATH=job "$PY" -c 'import runmon, sys
runmon.open(sys.argv[1])
runmon.log_phase("load", 1.2345, lr=0.1, tag="a")
runmon.event("checkpoint", step=10, loss=0.197)
runmon.event("bare")
with runmon.phase("train", lr=0.1):
    pass' "$T/py.jsonl"
same='del(.ts, .t, .pid, .exit_code) | if .type == "phase_exit" then .seconds = 0 else . end'
expect_eq "C and Python lines: same fields, same order" "$(jq -c "$same" "$T/c.jsonl")" "$(jq -c "$same" "$T/py.jsonl")"
expect_eq "C and Python lines: same key order with ts/t/pid" "$(jq -c 'keys_unsorted - ["exit_code"]' "$T/c.jsonl")" \
    "$(jq -c 'keys_unsorted - ["exit_code"]' "$T/py.jsonl")"
expect_eq "Python ts and t forms" "" "$(jq -r 'select((.ts | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}[+]00:00$") | not)) | .ts' "$T/py.jsonl")$(grep -cvE '"t":[0-9]+[.][0-9]{3}[,}]' "$T/py.jsonl" | grep -v '^0$')"

# --- 1. framework peaks from a stand-in torch under runmon record ---------------------------
# There is no GPU and no torch here: the stand-in module reports programmable peaks through
# the calls runmon makes on the real torch.cuda.
mkdir -p "$T/fake/torch"
cat >"$T/fake/torch/__init__.py" <<'PY'
"""Stand-in for torch (tests only): torch.cuda with programmable memory counters."""
class _Cuda:
    def __init__(self):
        self.cur, self.peak = {0: 0, 1: 0}, {0: 0, 1: 0}
    def alloc(self, d, nbytes):
        self.cur[d] = nbytes
        self.peak[d] = max(self.peak[d], nbytes)
    def is_available(self): return True
    def is_initialized(self): return True
    def device_count(self): return 2
    def reset_peak_memory_stats(self, d): self.peak[d] = self.cur[d]
    def max_memory_allocated(self, d): return self.peak[d]
    def max_memory_reserved(self, d): return self.peak[d] * 2
cuda = _Cuda()
PY
cat >"$T/train.py" <<'PY'
import torch
import runmon
MIB = 1048576
with runmon.phase("train", lr=0.1):
    torch.cuda.alloc(0, 300 * MIB)
    torch.cuda.alloc(0, 0)
    with runmon.phase("step"):
        torch.cuda.alloc(0, 100 * MIB)
        torch.cuda.alloc(1, 64 * MIB)
    with runmon.phase("eval"):
        torch.cuda.alloc(0, 200 * MIB)
        with runmon.phase("inner"):
            torch.cuda.alloc(0, 250 * MIB)
            torch.cuda.alloc(0, 0)
PY
PATH="$FAKEBIN:$SYSPATH" FAKE_SMI_GPUS=2 FAKE_SMI_CAPTURES="$FIXTURES/captures" PYTHONPATH="$T/fake:$PYTHONPATH" \
    "$RUNMON" record -q -o "$T/s" -i 0.2 -- "$PY" "$T/train.py"; rc=$?
expect_eq "torch: recorded script exits 0" 0 "$rc"
s=$(session_dir "$T/s")
peaks=$(jq -r 'select(.type=="phase_exit") | "\(.path)=\(.framework.name):\(.framework.peak_allocated_mb["0"]),\(.framework.peak_allocated_mb["1"]):\(.framework.peak_reserved_mb["0"])"' "$s/runlog.jsonl" | tr '\n' ' ')
expect_eq "torch: phase_exit lines carry the stand-in's peaks (MiB per device)" \
    "train/step=torch:100,64:200 train/eval/inner=torch:250,64:500 train/eval=torch:250,64:500 train=torch:300,64:600 " "$peaks"
bad=$(jq -s '[.[] | select(.type=="phase_exit")] as $x | [$x[] as $c | $x[] as $p
      | select(($c.path | startswith($p.path + "/")))
      | select(any($c.framework.peak_allocated_mb | to_entries[]; .value > $p.framework.peak_allocated_mb[.key]))
      | "\($c.path) > \($p.path)"]' "$s/runlog.jsonl")
expect_eq "torch: a parent's peak is at least each child's" "[]" "$bad"
expect_eq "torch: the enter line has no framework field, the extras" '0.1 null' \
    "$(jq -r 'select(.type=="phase_enter" and .path=="train") | "\(.lr) \(.framework)"' "$s/runlog.jsonl")"
check "torch: runmon summary reads the session" "$RUNMON" summary "$s" --format json -o "$T/sum.json"
expect_eq "torch: summary.json has each phase's framework_peak_mb (device 0, max)" \
    "train=300/300 train/step=100/100 train/eval=250/250 train/eval/inner=250/250" \
    "$(jq -r '[.phases[] | "\(.path)=\(.framework_peak_mb.by_device["0"])/\(.framework_peak_mb.max)"] | join(" ")' "$s/summary.json")"
expect_eq "torch: top-level framework_peak_mb (name, max, device 1)" "torch 300 64" \
    "$(jq -r '.framework_peak_mb | "\(.name) \(.max) \(.by_device["1"])"' "$s/summary.json")"

# --- 2. nesting with runmon phase, both ways ------------------------------------------------
cat >"$T/x.py" <<'PY'
import runmon
with runmon.phase("inner"):
    pass
PY
"$RUNMON" phase --file "$T/n.jsonl" outer -- "$PY" "$T/x.py"; rc=$?
expect_eq "runmon phase outer -- python: exits 0" 0 "$rc"
expect_eq "a Python phase inside runmon phase: path outer/inner, depth 1" "outer/inner 1 outer/inner 1" \
    "$(jq -r 'select(.name=="inner") | "\(.path) \(.depth)"' "$T/n.jsonl" | tr '\n' ' ' | sed 's/ $//')"
cat >"$T/y.py" <<'PY'
import os, subprocess, runmon
with runmon.phase("py"):
    subprocess.run([os.environ["RUNMON"], "phase", "sub", "--", "true"], check=True)
PY
RUNMON_RUNLOG="$T/m.jsonl" "$PY" "$T/y.py"; rc=$?
expect_eq "runmon phase inside a Python phase: exits 0" 0 "$rc"
expect_eq "runmon phase inside a Python phase: path py/sub, depth 1" "py/sub 1 py/sub 1" \
    "$(jq -r 'select(.name=="sub") | "\(.path) \(.depth)"' "$T/m.jsonl" | tr '\n' ' ' | sed 's/ $//')"

# --- 3. four writers, one file ---------------------------------------------------------------
f=$T/shared.jsonl
export RUNMON_RUNLOG=$f
for w in 1 2; do
    "$PY" -c 'import runmon, sys
w = int(sys.argv[1])
for i in range(500):
    runmon.event("py", w=w, i=i, pad="x" * (i % 97))' "$w" &
    track $!
done
for w in 3 4; do
    (for i in $(seq 0 499); do "$RUNMON_REL" log event cli w=$w i=$i pad=$(printf '%*s' $((i % 50)) '' | tr ' ' y); done) &
    track $!
done
wait
unset RUNMON_RUNLOG
expect_eq "4 writers: 2000 lines" 2000 "$(wc -l <"$f")"
expect_eq "4 writers: jq reads 2000 whole lines" 2000 "$(jq -c . "$f" 2>/dev/null | wc -l)"
for w in 1 2 3 4; do
    expect_eq "4 writers: all 500 lines of writer $w" 500 "$(jq -r "select(.data.w==$w) | .data.i" "$f" | sort -un | wc -l)"
done

# --- 4. the old monitor's API ------------------------------------------------------------------
PATH="$FAKEBIN:$SYSPATH" FAKE_SMI_GPUS=2 FAKE_SMI_CAPTURES="$FIXTURES/captures" RUNMON_BIN="$RUNMON_REL" \
    "$PY" "$REPO/python/tests/old_api_script.py" "$T/old" >"$T/old.json" 2>"$T/old.err"; rc=$?
expect_eq "old API script exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/old.err"
expect_eq "old API: sensible figures" true "$(jq '.peak_vram_mb > 0 and .gpu_util_max_pct <= 100 and .power_watts_mean > 0
    and .cpu_idle_mean_pct >= 0 and .cpu_idle_mean_pct <= 100 and .cpu_usr_mean_pct >= 0' "$T/old.json")"
expect_eq "old API: the three CSVs and the run log exist" "4" "$(jq -r '.files[]' "$T/old.json" | xargs ls 2>/dev/null | wc -l)"
expect_eq "old API: the run log has 3 phases and 2 events" "phase phase phase event event" \
    "$(jq -r .type "$T/old/runlog.jsonl" | tr '\n' ' ' | sed 's/ $//')"
check "old API: runmon summary reads the files back" "$RUNMON" summary --gpu-csv "$T/old/hw_metrics.csv" \
    --cpu-csv "$T/old/cpu_metrics.csv" --dmon "$T/old/hw_dmon.csv" --format json -o "$T/old-sum.json"
check "old API: no recorder or nvidia-smi left" test -z "$(pgrep -f "$T/old/runmon_session" || true)"

# --- 5. no run log, broken run log ---------------------------------------------------------------
mkdir -p "$T/cwd" && cd "$T/cwd" || exit 1
"$PY" -c 'import runmon
with runmon.phase("a"):
    runmon.event("e", x=1)
runmon.log_phase("p", 1.0)
print(runmon.stats()["lines_written"])' >"$T/nolog.out" 2>"$T/nolog.err"; rc=$?
expect_eq "no run log: exits 0, writes nothing" "0 0" "$rc $(cat "$T/nolog.out")"
expect_eq "no run log: one RuntimeWarning" 1 "$(grep -c RuntimeWarning "$T/nolog.err")"
expect_eq "no run log: no file made" "" "$(ls "$T/cwd")"
"$PY" -c 'import os, runmon, sys
runmon.open(sys.argv[1])
os.unlink(sys.argv[1])
for i in range(100):
    runmon.event("e", i=i)
print(runmon.stats()["write_failures"])' "$T/gone.jsonl" >"$T/gone.out" 2>"$T/gone.err"; rc=$?
expect_eq "removed run log: exits 0, 100 failures counted" "0 100" "$rc $(cat "$T/gone.out")"
expect_eq "removed run log: one RuntimeWarning" 1 "$(grep -c RuntimeWarning "$T/gone.err")"
RUNMON_RUNLOG="$T" "$PY" -c 'import runmon
with runmon.phase("a"):
    runmon.event("e")
print(runmon.stats()["write_failures"])' >"$T/dir.out" 2>"$T/dir.err"; rc=$?
expect_eq "unwritable run log (a directory): exits 0, 3 failures counted" "0 3" "$rc $(cat "$T/dir.out")"
expect_eq "unwritable run log: one RuntimeWarning" 1 "$(grep -c RuntimeWarning "$T/dir.err")"
cd "$REPO" || exit 1

done_testing
