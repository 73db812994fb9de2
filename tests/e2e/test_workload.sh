#!/usr/bin/env bash
# Who the workload is (issue 38): record --pid on a running process, --cgroup on a real cgroup
# made here (v2 under /sys/fs/cgroup/unified where writable, else v1 /sys/fs/cgroup/cpu)
# holding a workload started outside the command's tree, a real PID namespace (unshare
# --pid --fork --mount-proc) with the workload inside and runmon outside, and bad input.
# The fake nvidia-smi's pmon reports the pids written into $FAKE_SMI_APPS: host pids, as the
# driver does. Parts the kernel refuses here (not root, no unshare, no writable cgroup) skip.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_PMON_MS=200
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH \
    CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES SLURM_JOB_ID SLURM_STEP_ID SLURM_JOB_GPUS \
    SLURM_STEP_GPUS RUNMON_PROC_ROOT
APPS=$T/apps.txt
export FAKE_SMI_APPS=$APPS
: >"$APPS"
not_grep() { ! grep -q "$1" "$2"; }
skip() { echo "ok $((_t_n + 1)) # skip $1"; _t_n=$((_t_n + 1)); }
sj() { jq -r "$2" "$1/session.json"; }
smj() { jq -r "$2" "$1/summary.json"; }
# The largest cpu_pct in a proc.csv.
cpu_max() { awk -F, 'NR > 1 && $5 != "" && $5 > m { m = $5 } END { print m + 0 }' "$1/proc.csv"; }

# ---- bad input: exit 2, one clear line, nothing made -------------------------------------
bad() { # NAME EXPECTED-LINE-REGEX ARGS...
    local name=$1 re=$2 out rc
    shift 2
    out=$("$RUNMON" record -o "$T/bad" "$@" 2>&1)
    rc=$?
    expect_eq "$name: exit 2" 2 "$rc"
    expect_match "$name: one clear line" "^runmon record: $re$" "$out"
    check "$name: nothing recorded (no sink, no session)" test ! -e "$T/bad"
}
nopid=4194000
while [ -e /proc/$nopid ]; do nopid=$((nopid - 1)); done
bad "--pid of no process" "--pid $nopid: no such process" --pid $nopid
bad "--pid not a number" "--pid 12x: not a process id .*" --pid 12x
# A zombie: exited, never reaped (its parent, sleep, does not wait; the child ends after the
# exec, so bash cannot have reaped it).
bash -c 'sleep 0.5 & exec sleep 30' &
zparent=$!
track "$zparent"
wait_for "test -n \"\$(ps -o pid= --ppid $zparent)\"" 5
zombie=$(ps -o pid= --ppid "$zparent" | tr -d ' ')
wait_for "grep -q '^State:.*Z' /proc/$zombie/status" 5
bad "--pid of a process that exited at once" "--pid $zombie: the process has already exited" \
    --pid "$zombie"
bad "--pid with a COMMAND" "--pid records a running process: give no COMMAND with it" \
    --pid $$ -- true
bad "--cgroup on no cgroup file system" "--cgroup $T: not a cgroup \(not a folder on a cgroup file system\)" \
    --cgroup "$T"
bad "--cgroup of no folder" "--cgroup $T/none: No such file or directory" --cgroup "$T/none"
bad "--pid and --cgroup" "--pid and --cgroup: give one of them" --pid $$ --cgroup "$T"

# ---- --pid: a running process's tree, recorded until it exits ----------------------------
# The process: it puts itself on GPU 0 (1500 MiB), keeps a child busy for 3 s, and leaves
# the GPU before it exits (the driver lists a process only while it holds a context).
cat >"$T/attached.sh" <<'SH'
echo "0 $$ C 1500 40 5 bash" >>"$FAKE_SMI_APPS"
timeout 3 sh -c 'while :; do :; done'
: >"$FAKE_SMI_APPS"
sleep 0.5
SH
bash "$T/attached.sh" &
att=$!
track "$att"
"$RUNMON" record -o "$T/p" -i 0.2 --pid "$att" 2>"$T/p.err"
expect_eq "--pid: exit 0 once the process exited" 0 "$?"
s=$(session_dir "$T/p")
expect_eq "--pid: session.json says how the workload was defined" \
    "pid $att false true" "$(sj "$s" '[.workload.kind, .workload.pid, .workload.exit_status_known, .workload.exited] | map(tostring) | join(" ")')"
expect_eq "--pid: the exit status is unknown (null), not 0" "null" "$(sj "$s" .exit_code)"
expect_eq "--pid: the session_end line says so" "false $att" \
    "$(event_data "$s" session_end | jq -r '"\(.exit_status_known) \(.workload_pid)"')"
check "--pid: the text says the exit status is unknown" \
    grep -q "process $att exited; its exit status is unknown" "$T/p.err"
check "--pid: the text's exit is -" grep -q "exit -$" "$T/p.err"
check "--pid: proc.csv's root is the attached process" \
    test "$(awk -F, 'NR > 1 { print $2 }' "$s/proc.csv" | sort -u)" = "$att"
check "--pid: its busy grandchild counts (tree CPU above 5 %, 0 when asleep: $(cpu_max "$s"))" \
    awk -v m="$(cpu_max "$s")" 'BEGIN { exit !(m > 5) }'
check "--pid: its tree has 3 processes (bash, timeout, sh)" \
    test "$(awk -F, 'NR > 1 { print $3 }' "$s/proc.csv" | sort -n | tail -1)" -ge 3
expect_eq "--pid: apps.csv marks it in_workload" "1" \
    "$(awk -F, -v p="$att" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
expect_eq "--pid: the summary's workload VRAM is its 1500 MiB" "1500" \
    "$(smj "$s" '.workload_peak_vram_mb')"

# ---- --cgroup: a real cgroup, a workload started outside the command's tree --------------
if [ "$(id -u)" -ne 0 ]; then
    skip "--cgroup: not root (mkdir of a cgroup and cgroup.procs need root)"
else
    CG=""
    for base in /sys/fs/cgroup/unified /sys/fs/cgroup/cpu /sys/fs/cgroup; do
        c=$base/runmon-test-$$
        if [ -e "$base/cgroup.procs" ] && mkdir "$c" 2>/dev/null; then CG=$c; break; fi
    done
    if [ -z "$CG" ]; then
        skip "--cgroup: no writable cgroup hierarchy here"
    else
        rm_cg() { # the test's cgroups: their processes gone first
            local d
            for d in "$CG/sub" "$CG"; do
                [ -d "$d" ] || continue
                for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
            done
            sleep 0.2
            rmdir "$CG/sub" "$CG" 2>/dev/null
        }
        trap 'rm_cg; _t_cleanup' EXIT
        mkdir "$CG/sub"
        # The workload: joins a child cgroup of CG, holds 2500 MiB on GPU 1 and spins.
        : >"$APPS"
        sh -c 'echo $$ >"$1/sub/cgroup.procs"; echo "1 $$ C 2500 60 5 sh" >>"$FAKE_SMI_APPS"
               while :; do :; done' sh "$CG" &
        cgw=$!
        track "$cgw"
        # A neighbour outside the cgroup, on the same GPU.
        sleep 60 &
        nb=$!
        track "$nb"
        echo "1 $nb C 700 - - sleep" >>"$APPS"
        wait_for "grep -qx $cgw '$CG/sub/cgroup.procs'" 5
        # runmon itself runs inside the cgroup: it and its nvidia-smi children are not counted.
        sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
            "$RUNMON" record -q -o "$T/c" -i 0.2 --cgroup "$CG" --duration 2.5
        expect_eq "--cgroup: exit 0" 0 "$?"
        s=$(session_dir "$T/c")
        v=$(sj "$s" .workload.cgroup_version)
        expect_eq "--cgroup: session.json says how the workload was defined" \
            "cgroup $CG" "$(sj "$s" '"\(.workload.kind) \(.workload.cgroup)"')"
        check "--cgroup: its version is known (1 or 2: $v)" test "$v" = 1 -o "$v" = 2
        expect_eq "--cgroup: proc.csv's root_pid is unknown (empty), never 0" "" \
            "$(awk -F, 'NR > 1 { print $2 }' "$s/proc.csv" | sort -u)"
        expect_eq "--cgroup: one process, runmon and nvidia-smi left out" "1" \
            "$(awk -F, 'NR > 2 { print $3 }' "$s/proc.csv" | sort -u | paste -sd' ')"
        check "--cgroup: its CPU counts (above 5 %, 0 when asleep: $(cpu_max "$s"))" \
            awk -v m="$(cpu_max "$s")" 'BEGIN { exit !(m > 5) }'
        expect_eq "--cgroup: apps.csv marks the cgroup's process in_workload" "1" \
            "$(awk -F, -v p="$cgw" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
        expect_eq "--cgroup: the neighbour is not the workload's" "0" \
            "$(awk -F, -v p="$nb" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
        expect_eq "--cgroup: the summary's workload VRAM is the cgroup's 2500 MiB" "2500" \
            "$(smj "$s" '.workload_peak_vram_mb')"
        kill -9 "$cgw" "$nb" 2>/dev/null
        wait "$cgw" "$nb" 2>/dev/null

        # A SLURM step: runmon inside job_7/step_3's cgroup finds it from /proc/self/cgroup;
        # a rank that slurmstepd (here: this script) put in the step is not the command's child.
        : >"$APPS"
        mkdir -p "$CG/job_7/step_3/user/task_1"
        sh -c 'echo $$ >"$1/job_7/step_3/user/task_1/cgroup.procs"
               echo "0 $$ C 900 10 5 sleep" >>"$FAKE_SMI_APPS"; exec sleep 30' sh "$CG" &
        rank=$!
        track "$rank"
        wait_for "grep -qx $rank '$CG/job_7/step_3/user/task_1/cgroup.procs'" 5
        SLURM_JOB_ID=7 SLURM_STEP_ID=3 sh -c \
            'echo $$ >"$1/job_7/step_3/cgroup.procs"; shift; exec "$@"' sh "$CG" \
            "$RUNMON" record -q -o "$T/st" -i 0.2 -- sleep 2
        expect_eq "slurm step: exit 0" 0 "$?"
        s=$(session_dir "$T/st")
        expect_eq "slurm step: session.json's workload is the step's cgroup" \
            "slurm_step $CG/job_7/step_3 7 3" \
            "$(sj "$s" '"\(.workload.kind) \(.workload.cgroup) \(.workload.job_id) \(.workload.step_id)"')"
        expect_eq "slurm step: the rank outside the command's tree is the workload's" "1" \
            "$(awk -F, -v p="$rank" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
        check "slurm step: proc.csv counts the command and the rank" \
            test "$(awk -F, 'NR > 1 { print $3 }' "$s/proc.csv" | sort -n | tail -1)" -ge 2
        kill -9 "$rank" 2>/dev/null
        wait "$rank" 2>/dev/null
        for d in "$CG/job_7/step_3/user/task_1" "$CG/job_7/step_3/user" "$CG/job_7/step_3" \
            "$CG/job_7"; do
            for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
            sleep 0.1
            rmdir "$d" 2>/dev/null
        done
    fi
fi

# ---- PID namespaces: the driver's host pids ------------------------------------------------
if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
    skip "PID namespaces: unshare --pid --fork --mount-proc is refused here (not root?)"
else
    # runmon outside, the workload inside: the pid pmon reports is the host's; runmon sees it
    # and its NSpid line (host pid, then 1 inside) proves the namespace was real.
    : >"$APPS"
    "$RUNMON" record -q -o "$T/out" -i 0.2 -- \
        unshare --pid --fork --mount-proc sh -c 'sleep 6; : >"$FAKE_SMI_APPS"; sleep 0.6' &
    rec=$!
    track "$rec"
    inner_pid() { # the command (unshare) is runmon's child; the workload, pid 1 inside, its
        local u
        u=$(pgrep -P "$rec" -x unshare) && pgrep -P "$u" | head -1
    }
    wait_for 'test -n "$(inner_pid)"' 5
    inner=$(inner_pid)
    expect_match "namespace: the workload inside is pid 1 there" "^NSpid:[[:space:]]+$inner[[:space:]]+1$" \
        "$(grep NSpid /proc/"$inner"/status)"
    echo "0 $inner C 3000 70 5 sh" >>"$APPS"
    wait "$rec"
    expect_eq "namespace outside: exit 0" 0 "$?"
    s=$(session_dir "$T/out")
    expect_eq "namespace outside: the host pid is mapped to the workload" "1" \
        "$(awk -F, -v p="$inner" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
    expect_eq "namespace outside: workload VRAM 3000 MiB" "3000" "$(smj "$s" .workload_peak_vram_mb)"

    # runmon inside a PID namespace that still sees the host's /proc (a container with the
    # host's procfs): its command's pid (ours) is mapped to the host's through NSpid, so the
    # tree sampled is the command's, and the host pid pmon reports is placed in it.
    : >"$APPS"
    unshare --pid --fork "$RUNMON" record -q -o "$T/hv" -i 0.2 -- \
        sh -c 'sleep 4; : >"$FAKE_SMI_APPS"; sleep 0.6' &
    hv=$!
    track "$hv"
    cmd_host_pid() { # unshare -> runmon (pid 1 inside) -> the command, sh
        local r
        r=$(pgrep -P "$hv" | head -1) && pgrep -P "$r" -x sh
    }
    wait_for 'test -n "$(cmd_host_pid)"' 8
    hcmd=$(cmd_host_pid)
    echo "0 $hcmd C 1234 - - sh" >>"$APPS"
    ns_cmd=$(awk '/^NSpid:/ { print $NF }' /proc/"$hcmd"/status)
    wait "$hv"
    expect_eq "namespace, host /proc: exit 0" 0 "$?"
    s=$(session_dir "$T/hv")
    expect_eq "namespace, host /proc: proc.csv's root is the command (its pid inside)" "$ns_cmd" \
        "$(awk -F, 'NR > 1 { print $2 }' "$s/proc.csv" | sort -u)"
    check "namespace, host /proc: the tree sampled is the command's (sh and sleep)" \
        test "$(awk -F, 'NR > 1 { print $3 }' "$s/proc.csv" | sort -n | tail -1)" -ge 2
    expect_eq "namespace, host /proc: the host pid is mapped to the workload" "1" \
        "$(awk -F, -v p="$hcmd" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
    expect_eq "namespace, host /proc: workload VRAM 1234 MiB" "1234" "$(smj "$s" .workload_peak_vram_mb)"

    # runmon inside: the host pid of a GPU process does not exist there. Unattributed: the
    # workload's VRAM is unknown (null, "-"), never 0.
    sleep 60 &
    hostp=$!
    track "$hostp"
    echo "0 $hostp C 20000 - - python3" >"$APPS"
    unshare --pid --fork --mount-proc env RUNMON="$RUNMON" \
        "$RUNMON" record -o "$T/in" -i 0.2 -- sleep 2 2>"$T/in.err"
    expect_eq "namespace inside: exit 0" 0 "$?"
    s=$(session_dir "$T/in")
    expect_eq "namespace inside: the host pid is unattributed in apps.csv" "" \
        "$(awk -F, -v p="$hostp" '$4 == p { print $8 }' "$s/apps.csv" | sort -u | paste -sd' ')"
    expect_eq "namespace inside: workload VRAM null, not 0" "null unattributed" \
        "$(smj "$s" '"\(.workload_peak_vram_mb) \(.workload_vram_basis)"')"
    expect_eq "namespace inside: GPU 0's workload VRAM null, not 0" "null unattributed" \
        "$(smj "$s" '.gpus[] | select(.index == 0) | "\(.workload_vram_mb.peak) \(.workload_vram_basis)"')"
    check "namespace inside: the text says unattributed, not 0 MiB" \
        grep -q "GPU 0: workload VRAM peak - (20000 MiB on GPU 0 unattributed" "$T/in.err"
    check "namespace inside: a note says why" \
        test "$(smj "$s" '.data_quality.notes | map(select(test("unattributed"))) | length')" = 1

    # The same with the job's GPUs its own (CUDA_VISIBLE_DEVICES) and no other process seen:
    # assumed the workload's, and said so.
    unshare --pid --fork --mount-proc env CUDA_VISIBLE_DEVICES=0 \
        "$RUNMON" record -o "$T/as" -i 0.2 -- sleep 2 2>"$T/as.err"
    expect_eq "namespace inside, own GPU: exit 0" 0 "$?"
    s=$(session_dir "$T/as")
    expect_eq "namespace inside, own GPU: assumed the workload's" "20000 assumed" \
        "$(smj "$s" '"\(.workload_peak_vram_mb) \(.workload_vram_basis)"')"
    check "namespace inside, own GPU: the text says assumed" \
        grep -Eq "GPU 0: workload VRAM peak 20000 MiB, mean [0-9.]+ MiB \(assumed" "$T/as.err"
    kill -9 "$hostp" 2>/dev/null

    # Both runs side by side: the sweep table's WORKLOAD VRAM column and both pages say "-"
    # or "assumed", never 0.
    "$RUNMON" sessions --summary "$T/in" "$T/as" --format text >"$T/sweep.txt" 2>&1
    expect_eq "sweep table: exit 0" 0 "$?"
    check "sweep table: a WORKLOAD VRAM column" grep -q "WORKLOAD VRAM" "$T/sweep.txt"
    check "sweep table: the assumed run says so" grep -Eq "19.5 GiB assumed" "$T/sweep.txt"
    check "sweep table: its legend says what - and assumed are" grep -q "unattributed; assumed" \
        "$T/sweep.txt"
    check "sweep table: no run shows 0 MiB of workload VRAM" not_grep " 0 MiB\| 0.0 GiB" "$T/sweep.txt"
    "$RUNMON" report "$(session_dir "$T/in")" "$(session_dir "$T/as")" -o "$T/sweep.html" >/dev/null 2>&1
    expect_eq "sweep page: exit 0" 0 "$?"
    check "sweep page: the unattributed run's VRAM is the GPU's, said so" \
        grep -q "(the workload&#39;s unattributed)\|(the workload's unattributed)" "$T/sweep.html"
    check "sweep page: the assumed run says so" grep -q "assumed the workload" "$T/sweep.html"
    check "sweep page: no 0.0 GiB bar" not_grep ">0.0 / " "$T/sweep.html"
    "$RUNMON" report "$(session_dir "$T/in")" -o "$T/in.html" >/dev/null 2>&1
    check "report.html: the workload VRAM card says unattributed" \
        grep -q "id=\"sub-workload-vram\">unattributed" "$T/in.html"
    "$RUNMON" report "$(session_dir "$T/as")" -o "$T/as.html" >/dev/null 2>&1
    check "report.html: the workload VRAM card says assumed" \
        grep -q "id=\"sub-workload-vram\">assumed the workload" "$T/as.html"
fi


# ---- nvidia-smi lists no process at all (inside a container), memory.used is high ----------
# The fake's captures use 32362 MiB on each GPU while its pmon lists nothing ($APPS empty):
# memory runmon cannot place, unattributed (null) or assumed (the device's memory.used), never
# 0. Below the floor (1024 MiB: an idle card's reserve) the workload's stays 0.
: >"$APPS"
# The largest memory.used of GPU $2 in a session's gpu.csv.
used_max() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["index"] == g && $c["memory.used"] + 0 > m { m = $c["memory.used"] + 0 }
        END { print m + 0 }' g="$2" "$1/gpu.csv"
}
"$RUNMON" record -o "$T/nl" -i 0.2 -- python3 -c 'import time; time.sleep(3)' 2>"$T/nl.err"
expect_eq "no process listed: exit 0" 0 "$?"
s=$(session_dir "$T/nl")
check "no process listed: memory.used above the floor" test "$(used_max "$s" 0)" -gt 1024
expect_eq "no process listed: apps.csv lists no pid" "" \
    "$(awk -F, 'NR > 1 && $4 != ""' "$s/apps.csv")"
expect_eq "no process listed: workload VRAM null, not 0" "null unattributed" \
    "$(smj "$s" '"\(.workload_peak_vram_mb) \(.workload_vram_basis)"')"
expect_eq "no process listed: GPU 0's workload VRAM null, not 0" "null unattributed" \
    "$(smj "$s" '.gpus[] | select(.index == 0) | "\(.workload_vram_mb.peak) \(.workload_vram_basis)"')"
check "no process listed: the text says unattributed, not 0 MiB" \
    grep -q "GPU 0: workload VRAM peak - (32362 MiB on GPU 0 unattributed: nvidia-smi listed no process)" \
    "$T/nl.err"
expect_eq "no process listed: a note per GPU says why" 2 \
    "$(smj "$s" '.data_quality.notes | map(select(test("listed no process.*unattributed"))) | length')"

CUDA_VISIBLE_DEVICES=0 "$RUNMON" record -o "$T/nla" -i 0.2 \
    -- "$RUNMON" phase train -- python3 -c 'import time; time.sleep(3)' 2>"$T/nla.err"
expect_eq "no process listed, own GPU: exit 0" 0 "$?"
s=$(session_dir "$T/nla")
expect_eq "no process listed, own GPU: the device's memory.used, assumed" \
    "$(used_max "$s" 0) assumed" "$(smj "$s" '"\(.workload_peak_vram_mb) \(.workload_vram_basis)"')"
expect_eq "no process listed, own GPU: the phase's figure is the device's too" "$(used_max "$s" 0)" \
    "$(smj "$s" '.phases[] | select(.path == "train") | .gpus[] | select(.index == 0) | .workload_vram_mb.peak')"
check "no process listed, own GPU: the text says assumed" \
    grep -Eq "GPU 0: workload VRAM peak 32362 MiB, mean [0-9.]+ MiB \(assumed the workload's: the GPU's memory used while nvidia-smi listed no process" \
    "$T/nla.err"
check "no process listed, own GPU: a note says so" \
    test "$(smj "$s" '.data_quality.notes | map(select(test("listed no process.*assumed"))) | length')" = 1
"$RUNMON" report "$(session_dir "$T/nl")" -o "$T/nl.html" >/dev/null 2>&1
check "no process listed: report.html's card says unattributed" \
    grep -q "id=\"sub-workload-vram\">unattributed" "$T/nl.html"
check "no process listed: report.html's GPU line says why" \
    grep -q "unattributed: memory used while nvidia-smi listed no process" "$T/nl.html"
"$RUNMON" report "$(session_dir "$T/nla")" -o "$T/nla.html" >/dev/null 2>&1
check "no process listed, own GPU: report.html's GPU line says assumed" \
    grep -q "assumed the workload&#39;s: the GPU&#39;s memory used while nvidia-smi listed no process\|assumed the workload's: the GPU's memory used while nvidia-smi listed no process" \
    "$T/nla.html"
"$RUNMON" sessions --summary "$T/nl" "$T/nla" --format text >"$T/nlsweep.txt" 2>&1
check "no process listed: the sweep table says assumed" grep -Eq "31.6 GiB assumed" "$T/nlsweep.txt"
check "no process listed: the sweep table shows no 0 MiB of workload VRAM" \
    not_grep " 0 MiB\| 0.0 GiB" "$T/nlsweep.txt"

FAKE_SMI_OVERRIDE="memory.used=500" CUDA_VISIBLE_DEVICES=0 "$RUNMON" record -o "$T/nlf" -i 0.2 \
    -- python3 -c 'import time; time.sleep(3)' 2>"$T/nlf.err"
expect_eq "below the floor: exit 0" 0 "$?"
s=$(session_dir "$T/nlf")
expect_eq "below the floor: memory.used 500 MiB" 500 "$(used_max "$s" 0)"
expect_eq "below the floor: workload VRAM stays 0, no basis" "0 null" \
    "$(smj "$s" '"\(.workload_peak_vram_mb) \(.workload_vram_basis)"')"
check "below the floor: no note" \
    test "$(smj "$s" '.data_quality.notes | map(select(test("listed no process"))) | length')" = 0

done_testing
