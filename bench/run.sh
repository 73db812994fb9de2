#!/usr/bin/env bash
# runmon benchmarks (make bench). Each module adds a section below: a `section` header, then
# `figure NAME VALUE UNIT` lines and `ratio` lines comparing against a baseline measured in
# the same run (never against numbers from another machine or day).
# BENCH_FILTER=word runs only the sections whose name contains it.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BUILD:=$(pwd)/build}"
export LC_ALL=C
B=$(mktemp -d "${TMPDIR:-/tmp}/runmon-bench.XXXXXX")
trap 'rm -rf "$B"' EXIT
mkdir -p "$BUILD/bench"

want() { [ -z "${BENCH_FILTER:-}" ] || [[ $1 == *"$BENCH_FILTER"* ]]; }
section() { printf '\n== %s\n' "$1"; }
figure() { printf '  %-44s %12s %s\n' "$1" "$2" "$3"; }
ratio() { # NAME A B: prints A/B
    figure "$1" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')" "x"
}
# Builds bench/NAME.c, with the helpers they share (bench/bench_common.c), against the -O2
# library.
build_bench() {
    ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -O2 -o "$BUILD/bench/$1" \
        "bench/$1.c" bench/bench_common.c "$BUILD/librunmon.a" -lcsv -ljansson -lpcre2-8 -lpthread -lm
}
now_ns() { date +%s%N; }
# N CMD...: "seconds peak_kib" of the fastest of N runs of CMD (wall time; peak RSS by time(1))
fastest_of() {
    local n=$1 i t0 t1 kib sec best=""
    shift
    for ((i = 0; i < n; i++)); do
        t0=$(now_ns)
        kib=$(/usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1)
        t1=$(now_ns)
        sec=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
        if [ -z "$best" ] || awk -v a="$sec" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best="$sec $kib"
        fi
    done
    echo "$best"
}
# goal NAME VALUE LIMIT UNIT: a figure with its goal (at most LIMIT) beside it, and whether
# this run met it.
goal() {
    local met
    met=$(awk -v v="$2" -v g="$3" 'BEGIN { print (v <= g) ? "met" : "NOT met" }')
    printf '  %-44s %12s %s   goal: at most %s %s, %s\n' "$1" "$2" "$4" "$3" "$4" "$met"
}

# ---- RunLog -------------------------------------------------------------------------------
if want runlog; then
    section "RunLog: appending lines (one write() per line)"
    build_bench bench_runlog
    mkdir -p "$B/runlog"
    N=${RUNLOG_BENCH_LINES:-200000}
    eval "$("$BUILD/bench/bench_runlog" "$B/runlog" "$N" | awk '{ print $1 "=" $2 }')"
    figure "C API rm_runlog_event ($N lines)" "$api_lines_per_s" "lines/s"
    figure "baseline: stdio fprintf + fflush per line" "$stdio_fflush_lines_per_s" "lines/s"
    figure "floor: bare write() of a prebuilt line" "$bare_write_lines_per_s" "lines/s"
    ratio "C API / stdio baseline" "$api_lines_per_s" "$stdio_fflush_lines_per_s"
    ratio "C API / bare write()" "$api_lines_per_s" "$bare_write_lines_per_s"

    section "RunLog: CLI, one 'runmon log event' per invocation"
    RUNS=${RUNLOG_BENCH_RUNS:-500}
    F=$B/runlog/cli.jsonl
    t0=$(now_ns)
    for ((i = 0; i < RUNS; i++)); do "$BUILD/runmon" log --file "$F" event step "i=$i" loss=0.25; done
    t1=$(now_ns)
    for ((i = 0; i < RUNS; i++)); do /bin/true; done
    t2=$(now_ns)
    cli_ms=$(awk -v d=$((t1 - t0)) -v n="$RUNS" 'BEGIN { printf "%.3f", d / n / 1e6 }')
    true_ms=$(awk -v d=$((t2 - t1)) -v n="$RUNS" 'BEGIN { printf "%.3f", d / n / 1e6 }')
    figure "runmon log event ($RUNS runs)" "$cli_ms" "ms/invocation"
    figure "baseline: /bin/true, same loop" "$true_ms" "ms/invocation"
    ratio "runmon log / /bin/true" "$cli_ms" "$true_ms"
    [ "$(wc -l <"$F")" -eq "$RUNS" ] || { echo "bench: CLI lines missing" >&2; exit 1; }
fi

# ---- /proc sampler --------------------------------------------------------------------------
if want procfs; then
    section "/proc sampler: one full sample (cpu + meminfo + process tree)"
    build_bench bench_procfs
    "$BUILD/bench/bench_procfs" | sed 's/^/  /'
fi

# ---- I/O sample -------------------------------------------------------------------------------
# One I/O sample (monitor/io_sampler.c, on the recorder's tick every --io-interval) against a
# bare pread of its five kept-open files, with a tree of 1 and of 9 processes.
if want io-sample; then
    section "I/O sampler: one sample (diskstats, net/dev, pressure, the tree's PID/io, io.csv rows)"
    build_bench bench_io
    mkdir -p "$B/bench-io"
    for kids in 0 8; do
        eval "$("$BUILD/bench/bench_io" "$B/bench-io" 2000 "$kids" | awk '{ print $1 "=" $2 }')"
        figure "I/O sample, tree of $((kids + 1)) (CPU)" "$io_sample_us" "us/sample"
        figure "  floor: bare pread of the 5 files" "$bare_preads_us" "us/sample"
        ratio "  I/O sample / floor" "$io_sample_us" "$bare_preads_us"
    done
fi

# ---- Recorder cost --------------------------------------------------------------------------
# record_cost TAG SECS [runmon record OPTIONS... [-- COMMAND]]: records 8 fake GPUs at 0.1 s
# for SECS s into $B/TAG (extra environment for the fake in the array REC_ENV) and sets own
# (runmon's CPU ns, its children excluded), hwm (its peak RSS, KiB), kids (CPU ns of its
# nvidia-smi children, the one-shot inventory excluded), pmon_ns (of those, pmon's) and sess
# (the session folder). CPU time is read from schedstat, summed over threads (jiffies are
# too coarse here), just before runmon is stopped with SIGINT.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
pct() { awk -v t="$1" -v s="$2" 'BEGIN { printf "%.3f", t / 1e9 / s * 100 }'; } # NS SECS
mib() { printf '%d.%d' $(($1 / 1024)) $((($1 % 1024) * 10 / 1024)); }           # KiB
REC_ENV=()
record_cost() {
    local tag=$1 secs=$2; shift 2
    local st=$B/$tag-state pid kind c
    mkdir -p "$st"
    env PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_VARY=1 FAKE_SMI_STATE_DIR="$st" \
        FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" "${REC_ENV[@]}" \
        "$BUILD/runmon" record -q -o "$B/$tag" -i 0.1 "$@" &
    local rpid=$!
    sleep "$secs"
    own=$(cpu_ns "$rpid")
    hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$rpid/status")
    kids=0 pmon_ns=0
    while read -r pid kind; do
        [ "$kind" = inventory ] && continue
        c=$(cpu_ns "$pid")
        kids=$((kids + c))
        [ "$kind" = pmon ] && pmon_ns=$((pmon_ns + c))
    done <"$st/pids"
    kill -INT "$rpid"; wait "$rpid" || true
    sess=$(ls -d "$B/$tag"/*/ | head -n 1)
}

# runmon's own CPU time and peak RSS (its children excluded) while recording 8 fake GPUs at
# 0.1 s, against the cost of the nvidia-smi children it supervises, measured in the same run.
if want record; then
    SECS=${BENCH_RECORD_SECONDS:-60}
    section "Recorder: 8 fake GPUs at 0.1 s for $SECS s"
    record_cost record "$SECS" ${BENCH_RECORD_ARGS:-}
    s=$sess
    figure "runmon itself: CPU" "$(pct "$own" "$SECS")" "% of one core"
    figure "runmon itself: peak RSS" "$(mib "$hwm")" "MiB"
    figure "baseline: its nvidia-smi children: CPU" "$(pct "$kids" "$SECS")" "% of one core"
    [ "$kids" -gt 0 ] && ratio "runmon / children CPU" "$own" "$kids"
    figure "gpu.csv rows written" "$(($(wc -l <"$s/gpu.csv") - 1))" "rows"
    figure "CPU sampler: worst lateness (session.json)" "$(jq .cpu_sampler.max_lateness_ms "$s/session.json")" "ms"
    # Drift check: distance of each cpu.csv row from the ideal 0.1 s grid, first vs last
    # minute (a drifting schedule grows; an absolute one stays flat).
    awk -F, 'NR > 1 && $2 == "all" {
            split(substr($1, 12, 12), t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
            if (n == 0) base = s
            e = (s - base) - n * 0.1; e = e < 0 ? -e : e; e = e - int(e / 0.1 + 0.5) * 0.1; e = e < 0 ? -e : e
            if (n < 600 && e > first) first = e
            last_e[n % 600] = e; n++
        } END {
            for (i in last_e) if (last_e[i] > last) last = last_e[i]
            printf "  %-44s %12.2f %s\n", "schedule error, worst in first minute", first * 1000, "ms"
            printf "  %-44s %12.2f %s\n", "schedule error, worst in last minute", last * 1000, "ms"
        }' "$s/cpu.csv"
fi

# ---- Recorder: wakeups, system calls and CPU -------------------------------------------------
# runmon record at 8 fake GPUs x 0.1 s beside a workload (`sleep`), measured in a steady window
# after a warm-up: its own CPU (schedstat ns summed over its threads, children excluded; per
# thread too), peak RSS, wakeups (context switches summed over threads, and per thread), then
# system calls in a separate shorter window under `strace -f -c` (ptrace inflates CPU, so
# never both at once). Beside it, in the same window: the nvidia-smi children's own CPU (the
# fake's cost: context only, the real nvidia-smi's is not ours), and the floor of any 0.1 s
# sampler (bench/bench_tick.c: one wakeup, two preads and one write per period), split by a
# second bench_tick that only wakes: the wakeups' share and the /proc reads' share; and the
# floor of runmon's feature set (bench_tick's "record" mode: the system calls any recorder of
# runmon's files makes at 8 GPUs, with no parsing).
# Phases: processes that wake at the same instant share warm caches, and the later one's /proc
# reads cost a fraction of the first one's: two copies of the same build, started together,
# measured 0.338 % and 0.226 % of a core. So each process here gets a phase of its own within
# the 0.1 s period: the recorders are started 50 ms apart, their phases read from their cpu.csv,
# and the bench_ticks put in the largest gaps left (BENCH_TICK_PHASE_MS).
# BENCH_RECORDER_BASE=/path/to/runmon records with another build at the same time, in the
# same window (e.g. the main branch's), so both see the same load on a shared machine.
# BENCH_RECORDER_ARGS adds options to every recorder of this section and the next (e.g.
# --flush-seconds 5).
snap() { # PID: "cpu_ns switches" summed over its threads
    local t cpu=0 sw=0 a
    for t in /proc/"$1"/task/*; do
        read -r a _ <"$t/schedstat" 2>/dev/null || continue
        cpu=$((cpu + a))
        sw=$((sw + $(awk '/ctxt_switches/ { s += $2 } END { print s + 0 }' "$t/status" 2>/dev/null || echo 0)))
    done
    echo "$cpu $sw"
}
threads() { # PID: "tid comm cpu_ns switches" per thread
    local t a
    for t in /proc/"$1"/task/*; do
        read -r a _ <"$t/schedstat" 2>/dev/null || continue
        printf '%s %s %s %s\n' "${t##*/}" "$(tr ' ' _ <"$t/comm")" "$a" \
            "$(awk '/ctxt_switches/ { s += $2 } END { print s + 0 }' "$t/status")"
    done
}
kids_cpu() { # STATE_DIR: CPU ns of the live collectors (not the one-shot inventory)
    local pid kind c s=0
    while read -r pid kind; do
        [ "$kind" = inventory ] && continue
        c=$(cpu_ns "$pid"); s=$((s + ${c:-0}))
    done <"$1/pids"
    echo "$s"
}
if want recorder; then
    WARM=${BENCH_RECORDER_WARMUP:-3} RSECS=${BENCH_RECORDER_SECONDS:-25} SSECS=${BENCH_RECORDER_STRACE_SECONDS:-5}
    section "recorder: own cost at 8 fake GPUs x 0.1 s ($RSECS s CPU window, $SSECS s strace window)"
    echo "  (2 shared cores: figures vary from run to run; compare within one run)"
    ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O2 -o "$BUILD/bench/bench_tick" bench/bench_tick.c
    labels=(this)
    declare -A bin=([this]="$BUILD/runmon") pid=() ownof=()
    [ -n "${BENCH_RECORDER_BASE:-}" ] && { labels+=(base); bin[base]=$BENCH_RECORDER_BASE; }
    # The first one started tends to cost more (which core each lands on with whom: same build,
    # 0.315-0.450 % first against 0.303-0.315 % second); compare builds in both orders.
    [ -n "${BENCH_RECORDER_BASE_FIRST:-}" ] && [ -n "${BENCH_RECORDER_BASE:-}" ] && labels=(base this)
    for l in "${labels[@]}"; do
        mkdir -p "$B/rc-$l-state"
        env PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_VARY=1 FAKE_SMI_STATE_DIR="$B/rc-$l-state" \
            FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
            "${bin[$l]}" record -q -o "$B/rc-$l" -i 0.1 ${BENCH_RECORDER_ARGS:-} -- sleep $((WARM + RSECS + 2 * SSECS + 32)) &
        pid[$l]=$!
        sleep 0.05 # a phase of its own (above)
    done
    sleep 2
    # Each recorder's phase: the ms of its cpu.csv rows' ts, modulo 100 (the median of 5).
    phases=""
    for l in "${labels[@]}"; do
        p=$(tail -n 5 "$B/rc-$l"/latest/cpu.csv | cut -d, -f1 | sed -E 's/.*\.([0-9]{3}).*/\1/' |
            awk '{ print $1 % 100 }' | sort -n | sed -n 3p)
        phases="$phases ${p:-0}"
    done
    # Three more phases, each as far as it can be from those taken.
    read -r ph_tick ph_wake ph_feat < <(awk -v taken="$phases" 'BEGIN {
        n = split(taken, o, " ")
        for (k = 0; k < 3; k++) {
            best = -1
            for (c = 0; c < 100; c++) {
                m = 100
                for (i = 1; i <= n; i++) { d = c - o[i]; if (d < 0) d = -d; if (100 - d < d) d = 100 - d; if (d < m) m = d }
                if (m > best) { best = m; bc = c }
            }
            o[++n] = bc; printf "%d ", bc
        }
        print "" }')
    echo "  phases (ms past each 0.1 s): recorders${phases}, floor $ph_tick, wakeups $ph_wake, feature floor $ph_feat"
    BENCH_TICK_PHASE_MS=$ph_tick "$BUILD/bench/bench_tick" 100 "$B/rc-tick.csv" &
    tick=$!
    BENCH_TICK_PHASE_MS=$ph_wake "$BUILD/bench/bench_tick" 100 /dev/null wake &
    wake=$!
    sleep $((WARM + RSECS + 30)) &
    feat_work=$!
    mkdir -p "$B/rc-feature"
    BENCH_TICK_PHASE_MS=$ph_feat "$BUILD/bench/bench_tick" 100 /dev/null record "$feat_work" "$B/rc-feature" &
    feat=$!
    sleep "$WARM"
    declare -A c0 s0 k0 th0 c1 s1 k1 th1
    for l in "${labels[@]}"; do
        read -r c0[$l] s0[$l] < <(snap "${pid[$l]}"); k0[$l]=$(kids_cpu "$B/rc-$l-state"); th0[$l]=$(threads "${pid[$l]}")
    done
    read -r tc0 ts0 < <(snap "$tick"); read -r wc0 _ < <(snap "$wake"); read -r fc0 _ < <(snap "$feat"); t0=$(now_ns)
    sleep "$RSECS"
    for l in "${labels[@]}"; do
        read -r c1[$l] s1[$l] < <(snap "${pid[$l]}"); k1[$l]=$(kids_cpu "$B/rc-$l-state"); th1[$l]=$(threads "${pid[$l]}")
    done
    read -r tc1 ts1 < <(snap "$tick"); read -r wc1 _ < <(snap "$wake"); read -r fc1 _ < <(snap "$feat"); t1=$(now_ns)
    kill "$tick" "$wake" "$feat" "$feat_work"; wait "$tick" "$wake" "$feat" "$feat_work" 2>/dev/null || true
    secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    per_s() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s }'; }
    figure "floor: bench_tick (0.1 s: 2 preads + 1 write)" "$(pct $((tc1 - tc0)) "$secs")" "% of one core"
    figure "floor: bench_tick wakeups" "$(per_s $((ts1 - ts0)) "$secs")" "/s"
    figure "  of which the 10 wakeups/s alone" "$(pct $((wc1 - wc0)) "$secs")" "% of one core"
    figure "  of which the /proc/stat + /proc/meminfo reads" "$(pct $((tc1 - tc0 - (wc1 - wc0))) "$secs")" "% of one core"
    figure "feature floor: runmon's system calls, no parsing" "$(pct $((fc1 - fc0)) "$secs")" "% of one core"
    ratio "  feature floor / floor" "$((fc1 - fc0))" "$((tc1 - tc0))"
    figure "goal (issue 13): runmon itself under" "0.100" "% of one core"
    for l in "${labels[@]}"; do
        st=$B/rc-$l-strace.txt
        if command -v strace >/dev/null; then
            strace -f -c -p "${pid[$l]}" -o "$st" 2>/dev/null &
            sp=$!; sleep "$SSECS"; kill -INT "$sp" 2>/dev/null; wait "$sp" 2>/dev/null || true
        fi
        hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/${pid[$l]}/status")
        kill -INT "${pid[$l]}"; wait "${pid[$l]}" || true
        own=$((c1[$l] - c0[$l])) kids=$((k1[$l] - k0[$l]))
        echo "  [$l] ${bin[$l]}"
        figure "runmon itself: CPU ($secs s window)" "$(pct "$own" "$secs")" "% of one core"
        join <(sort <<<"${th0[$l]}") <(sort <<<"${th1[$l]}") | awk -v s="$secs" '{
                printf "  %-44s %12.3f %s\n", "  thread " $2, ($6 - $3) / 1e9 / s * 100, "% of one core"
                printf "  %-44s %12.1f %s\n", "  thread " $2 " wakeups", ($7 - $4) / s, "/s" }'
        figure "runmon itself: peak RSS" "$(mib "$hwm")" "MiB"
        figure "runmon itself: wakeups (context switches)" "$(per_s $((s1[$l] - s0[$l])) "$secs")" "/s"
        if [ -s "$st" ]; then
            calls=$(awk '$NF == "total" { print $4 }' "$st")
            figure "runmon itself: system calls (strace -f -c, $SSECS s)" "$(per_s "$calls" "$SSECS")" "/s"
            figure "  per 0.1 s sample" "$(per_s "$calls" "$((SSECS * 10))")" "calls"
            awk -v s="$SSECS" 'f && $NF != "total" && $1 !~ /^-/ && NF >= 5 {
                    printf "  %-44s %12.1f %s\n", "  " $NF, $4 / s, "/s" } /^------/ { f = 1 }' "$st" | head -n 8
        fi
        figure "baseline: its nvidia-smi children (fake): CPU" "$(pct "$kids" "$secs")" "% of one core"
        ratio "runmon / its children CPU" "$own" "$kids"
        goal "runmon / floor (bench_tick) CPU (issue 24)" "$(awk -v a="$own" -v b="$((tc1 - tc0))" 'BEGIN { printf "%.2f", a / b }')" 1.30 "x"
        goal "runmon itself: wakeups (issue 24)" "$(per_s $((s1[$l] - s0[$l])) "$secs")" 12 "/s"
        figure "runmon above the floor" "$(pct $((own - (tc1 - tc0))) "$secs")" "% of one core"
        ratio "runmon / feature floor CPU" "$own" "$((fc1 - fc0))"
        figure "runmon above the feature floor: its own code" "$(pct $((own - (fc1 - fc0))) "$secs")" "% of one core"
        figure "gpu.csv rows written" "$(($(cat "$B/rc-$l"/*/gpu.csv | wc -l) - 1))" "rows"
        ownof[$l]=$own
    done
    [ -n "${BENCH_RECORDER_BASE:-}" ] &&
        ratio "this build / base build CPU (same window, ${labels[0]} first)" "${ownof[this]}" "${ownof[base]}"
fi

# ---- Recorder alone, in turns, and where its time goes (issue 24, fourth pass) ---------------
# Side by side, processes disturb each other: they share caches, and where the scheduler puts
# whom moves a figure by up to a third (the first one started costs more). Here runmon (8 fake
# GPUs x 0.1 s), the floor and the feature floor each run alone, in turns: BENCH_TURNS rounds
# (default 3) of BENCH_TURN_SECONDS each (default 15, after 3 s of warm-up), the order rotated
# every round, so the machine's slow drift falls on all of them alike. BENCH_RECORDER_BASE
# takes turns too. Then, where perf is installed (.ci/deps.sh bench: linux-perf), a cpu-clock
# profile of runmon alone with call stacks (BENCH_PROFILE_SECONDS, default 15), each sample put
# under the system call and /proc file it was taken in (bench/perf_where.awk). Kernel stacks
# need root or kernel.perf_event_paranoid <= 1; without them every sample reads "user space".
if want recorder-turns; then
    TURNS=${BENCH_TURNS:-3} TSECS=${BENCH_TURN_SECONDS:-15} PSECS=${BENCH_PROFILE_SECONDS:-15}
    section "recorder alone, in turns: runmon, the floor, the feature floor ($TURNS rounds of $TSECS s)"
    ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -O2 -o "$BUILD/bench/bench_tick" bench/bench_tick.c
    members=(this floor feature)
    declare -A tbin=([this]="$BUILD/runmon") tsum=()
    [ -n "${BENCH_RECORDER_BASE:-}" ] && { members+=(base); tbin[base]=$BENCH_RECORDER_BASE; }
    start_member() { # MEMBER TAG: starts it alone (stdout and stderr to files: never a pipe)
        case $1 in
        floor) "$BUILD/bench/bench_tick" 100 /dev/null >/dev/null 2>&1 & turn_pid=$! turn_work= ;;
        feature)
            sleep $((TSECS + PSECS + 30)) & turn_work=$!
            mkdir -p "$B/rt-feature-$2"
            "$BUILD/bench/bench_tick" 100 /dev/null record "$turn_work" "$B/rt-feature-$2" >/dev/null 2>&1 &
            turn_pid=$! ;;
        *)
            mkdir -p "$B/rt-$1-$2-state"
            env PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_VARY=1 FAKE_SMI_STATE_DIR="$B/rt-$1-$2-state" \
                FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
                "${tbin[$1]}" record -q -o "$B/rt-$1-$2" -i 0.1 ${BENCH_RECORDER_ARGS:-} \
                -- sleep $((TSECS + PSECS + 30)) >/dev/null 2>&1 &
            turn_pid=$! turn_work= ;;
        esac
    }
    stop_member() { # MEMBER: a recorder stops on SIGINT; background jobs here ignore it
        case $1 in floor | feature) kill "$turn_pid" ;; *) kill -INT "$turn_pid" ;; esac
        wait "$turn_pid" 2>/dev/null || true
        if [ -n "$turn_work" ]; then kill "$turn_work"; wait "$turn_work" 2>/dev/null || true; fi
    }
    for ((r = 0; r < TURNS; r++)); do
        line="  round $((r + 1)):"
        for ((i = 0; i < ${#members[@]}; i++)); do
            m=${members[$(((i + r) % ${#members[@]}))]}
            start_member "$m" "$r"
            sleep 3
            a=$(cpu_ns "$turn_pid") t0=$(now_ns)
            sleep "$TSECS"
            b=$(cpu_ns "$turn_pid") t1=$(now_ns)
            stop_member "$m"
            ns=$(awk -v c=$((b - a)) -v w=$((t1 - t0)) -v s="$TSECS" 'BEGIN { printf "%d", c * s * 1e9 / w }')
            tsum[$m]=$((${tsum[$m]:-0} + ns))
            line="$line $m $(pct "$ns" "$TSECS")"
        done
        echo "$line (% of one core)"
    done
    secs=$((TURNS * TSECS))
    figure "floor alone (bench_tick)" "$(pct "${tsum[floor]}" "$secs")" "% of one core"
    figure "feature floor alone" "$(pct "${tsum[feature]}" "$secs")" "% of one core"
    ratio "  feature floor / floor" "${tsum[feature]}" "${tsum[floor]}"
    figure "runmon alone" "$(pct "${tsum[this]}" "$secs")" "% of one core"
    goal "runmon / floor, each alone (issue 24)" "$(awk -v a="${tsum[this]}" -v b="${tsum[floor]}" 'BEGIN { printf "%.2f", a / b }')" 1.30 "x"
    ratio "runmon / feature floor, each alone" "${tsum[this]}" "${tsum[feature]}"
    if [ -n "${BENCH_RECORDER_BASE:-}" ]; then
        figure "base build alone" "$(pct "${tsum[base]}" "$secs")" "% of one core"
        ratio "this build / base build, each alone" "${tsum[this]}" "${tsum[base]}"
    fi
    if command -v perf >/dev/null; then
        start_member this profile
        sleep 3
        if perf record -q -e cpu-clock -F 10000 -g -p "$turn_pid" -o "$B/rt-perf.data" -- sleep "$PSECS" >/dev/null 2>&1; then
            echo "  where runmon's CPU goes (perf cpu-clock, $PSECS s; share of its samples, per thread):"
            perf script -i "$B/rt-perf.data" -F comm,ip,sym 2>/dev/null | awk -f bench/perf_where.awk |
                sort -t "$(printf '\t')" -k1,1 -k2,2nr |
                awk -F '\t' '{ printf "    %-52s %6.1f %%\n", $1 ": " $3, $2 }'
        else
            echo "  (perf record failed: no profile)"
        fi
        stop_member this
    else
        echo "  (perf not installed: no profile; .ci/deps.sh bench installs linux-perf)"
    fi
fi

# ---- Recorder at 1 s without a GPU, beside sysstat's sadc and collectd (issue 24) -----------
# runmon record --no-gpu -i 1 beside `sleep`, sysstat's collector (`sadc 1`, writing its binary
# records to a file) and, where installed, collectd (the cpu and memory plugins into CSV files,
# Interval 1, one read and one write thread), all running in the same window, so they see the
# same load; their own CPU (schedstat, every thread) and wakeups. Goal: runmon's own CPU at most
# sadc's. BENCH_RECORDER_BASE adds another build of runmon to the same window. .ci/deps.sh
# bench installs sysstat and collectd-core.
if want recorder-nogpu; then
    WARM=${BENCH_NOGPU_WARMUP:-3} NSECS=${BENCH_NOGPU_SECONDS:-30}
    section "recorder at 1 s without a GPU, beside sadc and collectd ($NSECS s window, all at once)"
    echo "  (2 shared cores: figures vary from run to run; compare within one run)"
    SADC=${BENCH_SADC:-/usr/lib/sysstat/sadc} COLLECTD=${BENCH_COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
    labels=(this)
    declare -A nbin=([this]="$BUILD/runmon") npid=() ownof=()
    [ -n "${BENCH_RECORDER_BASE:-}" ] && { labels+=(base); nbin[base]=$BENCH_RECORDER_BASE; }
    [ -n "${BENCH_RECORDER_BASE_FIRST:-}" ] && [ -n "${BENCH_RECORDER_BASE:-}" ] && labels=(base this)
    for l in "${labels[@]}"; do
        "${nbin[$l]}" record -q --no-gpu -o "$B/ng-$l" -i 1 ${BENCH_RECORDER_ARGS:-} -- sleep $((WARM + NSECS + 30)) &
        npid[$l]=$!
    done
    peers=()
    if [ -x "$SADC" ]; then
        "$SADC" 1 >"$B/sadc.dat" &
        npid[sadc]=$!; peers+=(sadc)
    else
        echo "  sadc: not installed ($SADC; package sysstat, .ci/deps.sh bench)"
    fi
    if [ -x "$COLLECTD" ] && [ -f /usr/share/collectd/types.db ]; then
        mkdir -p "$B/collectd/csv"
        cat >"$B/collectd.conf" <<EOF_CD
BaseDir "$B/collectd"
PIDFile "$B/collectd/collectd.pid"
PluginDir "/usr/lib/collectd"
TypesDB "/usr/share/collectd/types.db"
Hostname "bench"
FQDNLookup false
Interval 1
ReadThreads 1
WriteThreads 1
LoadPlugin cpu
LoadPlugin memory
LoadPlugin csv
<Plugin csv>
  DataDir "$B/collectd/csv"
  StoreRates true
</Plugin>
EOF_CD
        "$COLLECTD" -f -C "$B/collectd.conf" >"$B/collectd.log" 2>&1 &
        npid[collectd]=$!; peers+=(collectd)
    else
        echo "  collectd: not installed (package collectd-core, .ci/deps.sh bench)"
    fi
    sleep "$WARM"
    declare -A nc0 ns0 nc1 ns1 nth0 nth1
    for l in "${labels[@]}" "${peers[@]}"; do read -r nc0[$l] ns0[$l] < <(snap "${npid[$l]}"); done
    for l in "${labels[@]}"; do nth0[$l]=$(threads "${npid[$l]}"); done
    t0=$(now_ns)
    sleep "$NSECS"
    for l in "${labels[@]}" "${peers[@]}"; do read -r nc1[$l] ns1[$l] < <(snap "${npid[$l]}"); done
    for l in "${labels[@]}"; do nth1[$l]=$(threads "${npid[$l]}"); done
    t1=$(now_ns)
    secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    for l in "${peers[@]}"; do kill "${npid[$l]}" 2>/dev/null; wait "${npid[$l]}" 2>/dev/null || true; done
    for l in "${labels[@]}"; do kill -INT "${npid[$l]}"; wait "${npid[$l]}" || true; done
    nper_s() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s }'; }
    for l in "${peers[@]}"; do
        figure "$l: CPU ($secs s window)" "$(pct $((nc1[$l] - nc0[$l])) "$secs")" "% of one core"
        figure "$l: wakeups" "$(nper_s $((ns1[$l] - ns0[$l])) "$secs")" "/s"
    done
    [ -n "$(ls "$B/collectd/csv" 2>/dev/null)" ] || [[ " ${peers[*]} " != *" collectd "* ]] ||
        echo "  collectd wrote no CSV: $(head -c 300 "$B/collectd.log")"
    for l in "${labels[@]}"; do
        own=$((nc1[$l] - nc0[$l]))
        echo "  [$l] ${nbin[$l]}"
        figure "runmon itself: CPU ($secs s window)" "$(pct "$own" "$secs")" "% of one core"
        join <(sort <<<"${nth0[$l]}") <(sort <<<"${nth1[$l]}") | awk -v s="$secs" '{
                printf "  %-44s %12.3f %s\n", "  thread " $2, ($6 - $3) / 1e9 / s * 100, "% of one core"
                printf "  %-44s %12.1f %s\n", "  thread " $2 " wakeups", ($7 - $4) / s, "/s" }'
        figure "runmon itself: wakeups" "$(nper_s $((ns1[$l] - ns0[$l])) "$secs")" "/s"
        figure "cpu.csv rows" "$(($(cat "$B/ng-$l"/*/cpu.csv | wc -l) - 1))" "rows"
        if [[ " ${peers[*]} " == *" sadc "* ]]; then
            r=$(awk -v a="$own" -v b="$((nc1[sadc] - nc0[sadc]))" 'BEGIN { printf "%.2f", a / b }')
            goal "runmon / sadc CPU (issue 24)" "$r" 1.00 "x"
        fi
        [[ " ${peers[*]} " == *" collectd "* ]] && ratio "runmon / collectd CPU" "$own" "$((nc1[collectd] - nc0[collectd]))"
        ownof[$l]=$own
    done
    [ -n "${BENCH_RECORDER_BASE:-}" ] &&
        ratio "this build / base build CPU (same window, ${labels[0]} first)" "${ownof[this]}" "${ownof[base]}"
fi

# ---- Recorder: the Pushgateway and InfluxDB writers (issue 21) -------------------------------
# Three recorders at the same time, in the same window (so they see the same load on a shared
# machine), 8 fake GPUs at 0.1 s beside `sleep`: one with no exporter, one with --influx, one
# with --pushgateway --push-interval 1. The servers are a local python3 HTTP server that
# answers 204 to every request (its own CPU is not runmon's, and not counted). Goal: each
# within 1.2x of the recorder's CPU without it.
if want record-export; then
    WARM=${BENCH_EXPORT_WARMUP:-3} XSECS=${BENCH_EXPORT_SECONDS:-20}
    section "record: cost of --influx and --pushgateway (8 fake GPUs x 0.1 s, $XSECS s window, all three at once)"
    echo "  (2 shared cores: figures vary from run to run; compare within one run)"
    cat >"$B/204.py" <<'PYEOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def h(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
    do_PUT = do_POST = h
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PYEOF
    python3 "$B/204.py" >"$B/204.port" &
    srv=$!
    for _ in $(seq 50); do [ -s "$B/204.port" ] && break; sleep 0.1; done
    port=$(cat "$B/204.port")
    declare -A xargs_=([off]="" [influx]="--influx http://127.0.0.1:$port/write?db=bench"
        [push]="--pushgateway http://127.0.0.1:$port --push-interval 1") xpid=() xc0=() xc1=()
    for l in off influx push; do
        env PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_VARY=1 \
            FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
            "$BUILD/runmon" record -q -o "$B/x-$l" -i 0.1 ${xargs_[$l]} -- sleep $((WARM + XSECS + 30)) &
        xpid[$l]=$!
    done
    sleep "$WARM"
    for l in off influx push; do xc0[$l]=$(cpu_ns "${xpid[$l]}"); done
    t0=$(now_ns)
    sleep "$XSECS"
    for l in off influx push; do xc1[$l]=$(cpu_ns "${xpid[$l]}"); done
    secs=$(awk -v d=$(($(now_ns) - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    for l in off influx push; do
        hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/${xpid[$l]}/status")
        kill -INT "${xpid[$l]}"; wait "${xpid[$l]}" || true
        figure "$l: runmon itself: CPU" "$(pct $((xc1[$l] - xc0[$l])) "$secs")" "% of one core"
        figure "$l: runmon itself: peak RSS" "$(mib "$hwm")" "MiB"
    done
    kill "$srv"; wait "$srv" 2>/dev/null || true
    ratio "--influx / no exporter CPU (goal <= 1.2)" $((xc1[influx] - xc0[influx])) $((xc1[off] - xc0[off]))
    ratio "--pushgateway -i 1 / no exporter CPU (goal <= 1.2)" $((xc1[push] - xc0[push])) $((xc1[off] - xc0[off]))
    sent=$(jq -r 'select(.event == "export_rows") | .data.rows_sent' "$B"/x-influx/[0-9]*/runlog.jsonl)
    figure "--influx: rows sent" "$sent" "rows"
    figure "--influx: gpu.csv rows" "$(($(cat "$B"/x-influx/[0-9]*/gpu.csv | wc -l) - 1))" "rows"
fi

# ---- Recorder: the per-process collector ----------------------------------------------------
# The same recording twice, one after the other: 8 fake GPUs at 0.1 s with a workload of
# BENCH_APPS_PER_GPU `sleep` processes per GPU (bench/apps_workload.sh, named to the fake's
# pmon through FAKE_SMI_APPS), once with --no-apps and once with the apps collector on.
# runmon asks pmon for -d 1 at -i 0.1 (pmon takes whole seconds); BENCH_APPS_PMON_MS=100
# makes the fake's pmon sample every 0.1 s instead, as a stress case.
if want record-apps; then
    ASECS=${BENCH_APPS_SECONDS:-25}
    per=${BENCH_APPS_PER_GPU:-2}
    section "record: cost of the per-process collector (8 GPUs x $per processes, -i 0.1, pmon every ${BENCH_APPS_PMON_MS:-1000} ms, $ASECS s per run)"
    echo "  (the two runs follow each other; on a shared machine the figures vary from run to run)"
    apps=$B/apps.txt
    wl=(-- bash "$(pwd)/bench/apps_workload.sh" "$apps" 8 "$per")
    REC_ENV=(FAKE_SMI_APPS="$apps" ${BENCH_APPS_PMON_MS:+FAKE_SMI_PMON_MS=$BENCH_APPS_PMON_MS})
    record_cost apps-off "$ASECS" --no-apps "${wl[@]}"
    off_own=$own off_hwm=$hwm off_kids=$kids
    [ ! -e "$sess/apps.csv" ] || { echo "bench: --no-apps wrote apps.csv" >&2; exit 1; }
    rm -f "$apps"
    record_cost apps-on "$ASECS" "${wl[@]}"
    REC_ENV=()
    figure "apps off: runmon itself: CPU" "$(pct "$off_own" "$ASECS")" "% of one core"
    figure "apps off: runmon itself: peak RSS" "$(mib "$off_hwm")" "MiB"
    figure "apps off: nvidia-smi children: CPU" "$(pct "$off_kids" "$ASECS")" "% of one core"
    figure "apps on:  runmon itself: CPU" "$(pct "$own" "$ASECS")" "% of one core"
    figure "apps on:  runmon itself: peak RSS" "$(mib "$hwm")" "MiB"
    figure "apps on:  nvidia-smi children: CPU" "$(pct "$kids" "$ASECS")" "% of one core"
    figure "apps on:  of which pmon" "$(pct "$pmon_ns" "$ASECS")" "% of one core"
    ratio "runmon CPU, apps on / apps off" "$own" "$off_own"
    ratio "runmon peak RSS, apps on / apps off" "$hwm" "$off_hwm"
    ratio "apps off: runmon / children CPU" "$off_own" "$off_kids"
    ratio "apps on:  runmon / children CPU" "$own" "$kids"
    # Sanity: apps.csv rows per second between its first and last sample (the last sample's
    # rows left out; idle rows of GPUs without processes counted), and the share of process
    # rows that runmon placed in the workload's process tree (all should be).
    read -r rows_s in_wl rows < <(awk -F, 'NR > 1 {
            split(substr($1, 12, 12), t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
            if (n == 0) first = s
            if (s != last) lastn = 0
            last = s; lastn++; n++; if ($4 != "") { p++; if ($8 == "1") w++ }
        } END { printf "%.1f %.1f %d\n", (last > first ? (n - lastn) / (last - first) : 0),
                p ? 100 * w / p : 0, n }' "$sess/apps.csv")
    figure "apps.csv rows written ($rows rows)" "$rows_s" "rows/s"
    figure "  expected: 8 x $per processes per pmon sample" \
        "$(awk -v p="$per" -v ms="${BENCH_APPS_PMON_MS:-1000}" 'BEGIN { printf "%.1f", 8 * p * 1000 / ms }')" "rows/s"
    figure "apps.csv process rows with in_workload=1" "$in_wl" "%"
fi

# ---- Recorder: the I/O stream (issue 23) ----------------------------------------------------
# Two recorders at the same time, in the same window (the same load on a shared machine), at
# the default intervals (-i 1, --io-interval 1) with 8 fake GPUs beside `sleep`: one with
# --no-io, one with the I/O sampler on. Their own CPU (schedstat over their threads, children
# excluded) after a warm-up, the io thread's alone, and the ratio (goal: within 1.1x). Then
# the summary of an io.csv of BENCH_IO_ROWS rows (default 1M: a day at 1 s of 4 disks, 3
# interfaces, 3 pressure files and the tree is ~950k) against a cpu.csv of as many rows.
if want record-io; then
    WARM=${BENCH_IO_WARMUP:-3} ISECS=${BENCH_IO_SECONDS:-30}
    section "record: cost of the I/O sampler (8 fake GPUs, -i 1, --io-interval 1, $ISECS s window, both at once)"
    echo "  (2 shared cores: figures vary from run to run; compare within one run)"
    declare -A ipid=()
    for l in off on; do
        mkdir -p "$B/io-$l-state"
        opt=()
        [ $l = off ] && opt=(--no-io)
        env PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_VARY=1 FAKE_SMI_STATE_DIR="$B/io-$l-state" \
            FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
            "$BUILD/runmon" record -q -o "$B/io-$l" "${opt[@]}" -- sleep $((WARM + ISECS + 30)) &
        ipid[$l]=$!
    done
    sleep "$WARM"
    declare -A ic0 ic1 ith0 ith1
    for l in off on; do read -r ic0[$l] _ < <(snap "${ipid[$l]}"); ith0[$l]=$(threads "${ipid[$l]}"); done
    t0=$(now_ns)
    sleep "$ISECS"
    for l in off on; do read -r ic1[$l] _ < <(snap "${ipid[$l]}"); ith1[$l]=$(threads "${ipid[$l]}"); done
    t1=$(now_ns)
    secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    for l in off on; do kill -INT "${ipid[$l]}"; wait "${ipid[$l]}" || true; done
    off_ns=$((ic1[off] - ic0[off])) on_ns=$((ic1[on] - ic0[on]))
    figure "--no-io: runmon itself: CPU ($secs s)" "$(pct "$off_ns" "$secs")" "% of one core"
    figure "I/O on:  runmon itself: CPU ($secs s)" "$(pct "$on_ns" "$secs")" "% of one core"
    # The I/O sample runs on the tick (rm-collectors here): no thread of its own to split out.
    tick_on=$(join <(sort <<<"${ith0[on]}") <(sort <<<"${ith1[on]}") | awk '$2 == "rm-collectors" { print $6 - $3 }')
    tick_off=$(join <(sort <<<"${ith0[off]}") <(sort <<<"${ith1[off]}") | awk '$2 == "rm-collectors" { print $6 - $3 }')
    figure "  the tick's thread, I/O on" "$(pct "${tick_on:-0}" "$secs")" "% of one core"
    figure "  the tick's thread, --no-io" "$(pct "${tick_off:-0}" "$secs")" "% of one core"
    ratio "runmon CPU, I/O on / --no-io (goal <= 1.10)" "$on_ns" "$off_ns"
    iocsv=$(find "$B/io-on" -mindepth 2 -maxdepth 2 -name io.csv ! -path '*/latest/*')
    figure "io.csv rows written ($(($(wc -l <"$iocsv") - 1)) rows over $(awk -F, 'NR > 1 {t[$1]} END {print length(t)}' "$iocsv") samples)" \
        "$(awk -F, 'NR > 1 {n++; t[$1]} END {printf "%.1f", n / length(t)}' "$iocsv")" "rows/sample"

    N=${BENCH_IO_ROWS:-1000000}
    section "summary: an io.csv of $N rows against a cpu.csv of as many (best of 3)"
    python3 - "$N" "$B/io.csv" "$B/cpu.csv" <<'PY'
import sys, datetime
n, io, cpu = int(sys.argv[1]), sys.argv[2], sys.argv[3]
keys = [("disk", "sda"), ("disk", "sdb"), ("disk", "nvme0n1"), ("disk", "nvme1n1"),
        ("net", "eth0"), ("net", "ib0"), ("net", "ib1"), ("pressure", "cpu"),
        ("pressure", "io"), ("pressure", "memory"), ("tree", "4242")]
t0 = datetime.datetime(2026, 11, 23, 5, 0, 0)
with open(io, "w") as f:
    f.write("ts,kind,name,read_bytes,write_bytes,busy_ms,rx_bytes,tx_bytes,some_us,full_us,procs,unreadable\n")
    i = 0
    while i < n:
        s = i // len(keys)
        ts = (t0 + datetime.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000+00:00")
        for k, name in keys:
            if i >= n:
                break
            c = s * 1000003
            if k == "disk":
                f.write(f"{ts},disk,{name},{c * 512},{c * 256},{s * 700},,,,,,\n")
            elif k == "net":
                f.write(f"{ts},net,{name},,,,{c * 10},{c * 3},,,,\n")
            elif k == "pressure":
                f.write(f"{ts},pressure,{name},,,,,,{s * 12345},{s * 2345},,\n")
            else:
                f.write(f"{ts},tree,{name},{c * 100},{c * 7},,,,,,12,0\n")
            i += 1
with open(cpu, "w") as f:
    f.write("ts,cpu,usr_pct,nice_pct,sys_pct,iowait_pct,irq_pct,softirq_pct,steal_pct,idle_pct,mem_total_mb,mem_available_mb,mem_used_mb\n")
    for i in range(n):
        ts = (t0 + datetime.timedelta(milliseconds=100 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+00:00"
        f.write(f"{ts},all,12.50,0.00,3.25,1.00,0.00,0.10,0.00,83.15,515000.00,400000.00,115000.00\n")
PY
    best() { # OPTION FILE: best wall seconds of 3
        local b="" t0 t1 d
        for _ in 1 2 3; do
            t0=$(now_ns); "$BUILD/runmon" summary --format json "$1" "$2" >/dev/null; t1=$(now_ns)
            d=$(((t1 - t0) / 1000000)); [ -z "$b" ] || [ "$d" -lt "$b" ] && b=$d
        done
        echo "$b"
    }
    io_ms=$(best --io-csv "$B/io.csv") cpu_ms=$(best --cpu-csv "$B/cpu.csv")
    figure "io.csv ($(du -m "$B/io.csv" | cut -f1) MB)" "$io_ms" "ms"
    figure "  rows per second" "$(awk -v n="$N" -v m="$io_ms" 'BEGIN { printf "%.0f", n / m * 1000 }')" "rows/s"
    figure "baseline: cpu.csv ($(du -m "$B/cpu.csv" | cut -f1) MB)" "$cpu_ms" "ms"
    ratio "io.csv / cpu.csv time" "$io_ms" "$cpu_ms"
fi

# ---- The stall sampler (issue 38) ------------------------------------------------------------
# One stall sample over a tree of BENCH_STALL_THREADS threads (default 1,000), reading the tree
# proc.csv's row walked at the same slot as in the recorder, against the same sample walking the
# tree itself, the proc.csv walk of the same tree and a bare pread of its 2 x threads files, in
# the same run;
# then two recorders at once in the same window (the same load on a shared machine), 8 fake
# GPUs at -i 1 beside a workload of as many sleeping threads: one with --no-stall, one with the
# sampler on. Their own CPU (schedstat over their threads, children excluded) after a warm-up,
# and the ratio (goal: at most 1.2x).
if want stall; then
    NT=${BENCH_STALL_THREADS:-1000}
    section "stall sampler: one sample over a tree of $NT sleeping threads (schedstat each; stat of those not asleep)"
    build_bench bench_stall
    mkdir -p "$B/bench-stall"
    eval "$("$BUILD/bench/bench_stall" "$B/bench-stall" "${BENCH_STALL_ITERS:-100}" "$NT" | awk '{ print $1 "=" $2 }')"
    figure "stall sample, $threads threads ($kept_fds fds kept) (CPU)" "$stall_sample_us" "us/sample"
    figure "  the same, walking the tree itself" "$stall_alone_us" "us/sample"
    figure "  baseline: the proc.csv tree walk, same tree" "$tree_walk_us" "us/sample"
    figure "  floor: bare pread of the 2 x $threads files" "$bare_preads_us" "us/sample"
    ratio "stall sample / tree walk" "$stall_sample_us" "$tree_walk_us"
    ratio "stall sample / floor" "$stall_sample_us" "$bare_preads_us"

    WARM=${BENCH_STALL_WARMUP:-3} SSECS=${BENCH_STALL_SECONDS:-20}
    section "record: cost of the stall sampler (8 fake GPUs, -i 1, a workload of $NT threads, $SSECS s window, both at once)"
    echo "  (2 shared cores: figures vary from run to run; compare within one run)"
    WORK="import threading, time
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for _ in range($NT - 1)]
for t in ts: t.start()
time.sleep($((WARM + SSECS + 20)))
ev.set()"
    declare -A spid=()
    for l in off on; do
        mkdir -p "$B/stall-$l-state"
        opt=()
        [ $l = off ] && opt=(--no-stall)
        env PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_VARY=1 FAKE_SMI_STATE_DIR="$B/stall-$l-state" \
            FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
            "$BUILD/runmon" record -q -o "$B/stall-$l" "${opt[@]}" -- python3 -c "$WORK" &
        spid[$l]=$!
    done
    sleep "$WARM"
    declare -A sc0 sc1
    for l in off on; do read -r sc0[$l] _ < <(snap "${spid[$l]}"); done
    t0=$(now_ns)
    sleep "$SSECS"
    for l in off on; do read -r sc1[$l] _ < <(snap "${spid[$l]}"); done
    t1=$(now_ns)
    secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
    for l in off on; do kill -INT "${spid[$l]}"; wait "${spid[$l]}" || true; done
    off_ns=$((sc1[off] - sc0[off])) on_ns=$((sc1[on] - sc0[on]))
    figure "--no-stall: runmon itself: CPU ($secs s)" "$(pct "$off_ns" "$secs")" "% of one core"
    figure "stall on:   runmon itself: CPU ($secs s)" "$(pct "$on_ns" "$secs")" "% of one core"
    goal "runmon CPU, stall on / --no-stall" "$(awk -v a="$on_ns" -v b="$off_ns" 'BEGIN { printf "%.2f", a / b }')" 1.2 "x"
    st=$(find "$B/stall-on" -mindepth 2 -maxdepth 2 -name stall.csv ! -path '*/latest/*')
    figure "stall.csv rows (threads in the last)" "$(($(wc -l <"$st") - 1)) ($(tail -n 1 "$st" | cut -d, -f4))" "rows"
fi

# ---- Python module --------------------------------------------------------------------------
if want python; then
    N=${BENCH_PYTHON_LINES:-50000}
    section "python: runmon.phase, runmon.event and runmon.metric ($N lines per case)"
    eval "$(PYTHONPATH=python python3 bench/bench_python.py --kv "$N")"
    echo "  (python $python_version; each case appends to its own O_APPEND file; best of $rounds interleaved rounds)"
    figure "runmon.event(\"step\", i=i)" "$event_lines_per_s" "lines/s"
    figure "with runmon.phase(\"step\"): pass (2 lines)" "$phase_lines_per_s" "lines/s"
    figure "  the same as phases (enter + exit)" "$phase_per_s" "phases/s"
    figure "baseline: bare os.write under flock" "$bare_flock_lines_per_s" "lines/s"
    figure "floor: bare os.write of a prebuilt line" "$bare_lines_per_s" "lines/s"
    figure "floor: os.write of the phase's own 2 lines" "$bare_phase_lines_per_s" "lines/s"
    figure "phase / those 2 bare writes (goal <= 10)" "$phase_vs_bare" "x"
    figure "runmon.metric(step=i, loss=..., acc=...)" "$metric_lines_per_s" "lines/s"
    figure "floor: os.write of the metric's own line" "$bare_metric_lines_per_s" "lines/s"
    figure "metric line / 2 bare writes of it (goal <= 10)" "$metric_vs_bare" "x"
    ratio "runmon.event / os.write + flock" "$event_lines_per_s" "$bare_flock_lines_per_s"
    ratio "runmon.phase / os.write + flock" "$phase_lines_per_s" "$bare_flock_lines_per_s"
    ratio "runmon.event / bare os.write" "$event_lines_per_s" "$bare_lines_per_s"
    ratio "runmon.phase / bare os.write" "$phase_lines_per_s" "$bare_lines_per_s"
    [ "$write_failures" -eq 0 ] || { echo "bench: python write failures: $write_failures" >&2; exit 1; }
fi

# ---- Sweep objectives (issue 39) -------------------------------------------------------------
# 1,000 runs with 10,000 metric lines each (bench/gen_sweep.py --metric-lines: each run's run
# log holds them, its summary.json their statistics): `sessions --summary --objective` (goal:
# under 1 s) and `report --sweep` judging the runs (goal: under 2 s, the page under 5 MB),
# beside the same commands without objectives.
if want sweep-objectives; then
    section "sweep objectives: 1,000 runs x 10,000 metric lines (goals: sessions --objective < 1 s, report --sweep < 2 s and < 5 MB)"
    J=$B/objectives
    mkdir -p "$J"
    PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=1 FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
        "$BUILD/runmon" record -q -o "$J/tpl" -i 0.1 -- sh -c "'$BUILD/runmon' phase train -- sleep 1"
    tpl=$(readlink -f "$J/tpl/latest")
    python3 bench/gen_sweep.py --template "$tpl" --dest "$J/k" --count 1000 --link \
        --metric-lines "${BENCH_METRIC_LINES:-10000}" >/dev/null
    base=$(fastest_of 3 "$BUILD/runmon" sessions "$J/k" --summary --sweep lr-sweep --format json)
    obj=$(fastest_of 3 "$BUILD/runmon" sessions "$J/k" --summary --sweep lr-sweep --objective acc:max \
        --objective loss:min:best --format json)
    page=$(fastest_of 3 "$BUILD/runmon" report --sweep lr-sweep "$J/k" --objective acc:max -o "$J/k.html")
    figure "sessions --summary --objective x2 (goal < 1 s)" "${obj% *}" "s"
    figure "  peak RSS" "$(awk -v k="${obj#* }" 'BEGIN { printf "%.1f", k / 1024 }')" "MiB"
    figure "baseline: sessions --summary" "${base% *}" "s"
    ratio "with objectives / without" "${obj% *}" "${base% *}"
    figure "report --sweep --objective (goal < 2 s)" "${page% *}" "s"
    figure "  peak RSS" "$(awk -v k="${page#* }" 'BEGIN { printf "%.1f", k / 1024 }')" "MiB"
    figure "  page (goal < 5 MB)" "$(awk -v b="$(stat -c %s "$J/k.html")" 'BEGIN { printf "%.2f", b / 1e6 }')" "MB"
    rm -rf "$J"
fi

# ---- A sink's first open: runs with many metric lines -----------------------------------------
# The first `runmon sessions` of a freshly generated sweep (bench/gen_sweep.py: no sink.json,
# no state.json, so every run's folder is adopted: sink/recover.c), BENCH_FIRST_OPEN_RUNS
# runs (default 300) with BENCH_METRIC_LINES metric lines each (default 10,000), beside the
# same sink without metric lines (the baseline, measured in the same run). Adopting a run
# parsed its whole run log once per stream file (7 per run): 1,000 runs took minutes. Best of
# 3, the sink made fresh again before each (its sink.json and state.json files removed, its
# generated index put back).
if want sink-first-open; then
    FO_RUNS=${BENCH_FIRST_OPEN_RUNS:-300}
    section "sink first open: $FO_RUNS runs x ${BENCH_METRIC_LINES:-10000} metric lines (goal: as fast as without metric lines)"
    J=$B/first_open
    mkdir -p "$J"
    PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=1 FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
        "$BUILD/runmon" record -q -o "$J/tpl" -i 0.1 -- sh -c "'$BUILD/runmon' phase train -- sleep 1"
    tpl=$(readlink -f "$J/tpl/latest")
    python3 bench/gen_sweep.py --template "$tpl" --dest "$J/m" --count "$FO_RUNS" --link \
        --metric-lines "${BENCH_METRIC_LINES:-10000}" >/dev/null
    python3 bench/gen_sweep.py --template "$tpl" --dest "$J/b" --count "$FO_RUNS" --link >/dev/null
    fo_best() { # SINK: seconds of the fastest of 3 first opens
        local i t0 t1 sec best=""
        cp "$1/index.jsonl" "$J/index.jsonl.gen"
        for ((i = 0; i < 3; i++)); do
            rm -f "$1/sink.json" "$1"/*/state.json
            cp "$J/index.jsonl.gen" "$1/index.jsonl"
            t0=$(now_ns)
            "$BUILD/runmon" sessions "$1" >/dev/null
            t1=$(now_ns)
            sec=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')
            if [ -z "$best" ] || awk -v a="$sec" -v b="$best" 'BEGIN { exit !(a < b) }'; then
                best=$sec
            fi
        done
        echo "$best"
    }
    with=$(fo_best "$J/m")
    base=$(fo_best "$J/b")
    figure "first sessions, with metric lines" "$with" "s"
    figure "baseline: first sessions, no metric lines" "$base" "s"
    ratio "with metric lines / without" "$with" "$base"
    rm -rf "$J"
fi

# ---- Summary --------------------------------------------------------------------------------
if want summary; then
    section "Summary: every layout vs mawk (BENCH_SUMMARY_LAYOUT_MB, default 128); one gpu.csv (BENCH_SUMMARY_MB, default 256) vs mawk, libcsv, DuckDB"
    BUILD=$BUILD bash bench/bench_summary.sh | sed 's/^/  /'
fi

# ---- Summary: many distinct phases ------------------------------------------------------------
# `runmon summary` of a session whose run log names a phase per step (bench/gen_phases.py: one
# outer phase, N steps of 0.1 s inside it, one sample group per step) with G GPUs
# (BENCH_PHASES_GPUS, default "1 8"), at N = BENCH_PHASES_SIZES (default 10k, 50k, 100k, 300k):
# wall time and peak RSS (best of BENCH_PHASES_RUNS, default 3), beside the same files without
# the run log (the baseline: what the phases add). RUNMON_SUMMARY_MAX_PHASES (10000) is a
# budget of phase rows x GPUs: 10000 / G paths get a row, the rest fold into one (10k paths
# with 1 GPU: every path a row, the figure at the cap). Then the
# readers of such a session: `runmon report` computing the summary (no summary.json), `runmon
# report` with the summary.json that `runmon summary -o` wrote, and `runmon sessions --summary`
# of a one-session sink holding that summary.json; `--format text` and `csv`; and record's end
# summary of 10,000 phases. BENCH_PHASES_BEFORE_RUNMON=PATH adds another build's figures on the
# same files (its own summary.json for the readers).
if want phases; then
    section "summary: distinct phase paths (goal: 100k under 150 MB and 3 s; under 1 KiB per phase)"
    P=$B/phases
    mkdir -p "$P"
    time_rss() { # CMD...: "seconds peak_kib" of the fastest of BENCH_PHASES_RUNS runs
        local i out best=""
        for ((i = 0; i < ${BENCH_PHASES_RUNS:-3}; i++)); do
            out=$(/usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1)
            if [ -z "$best" ] || awk -v a="${out% *}" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
                best=$out
            fi
        done
        echo "$best"
    }
    kib_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
    # A one-session sink for `sessions --summary`: its summary.json is replaced below.
    PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=2 FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
        "$BUILD/runmon" record -q -o "$P/sink" -i 0.1 -- true
    K=$P/sink/$(readlink "$P/sink/latest")
    readers() { # RUNMON SESSION LABEL: report (computing, then from summary.json), sessions --summary
        local bin=$1 d=$2 label=$3 r
        rm -f "$d/summary.json"
        r=$(time_rss "$bin" report "$d" -o "$P/report.html")
        figure "  $label: report, computing the summary" "${r% *}" "s"
        figure "  $label: report, computing: peak RSS" "$(kib_mib "${r#* }")" "MiB"
        "$bin" summary "$d" --format json -o "$d/summary.json"
        figure "  $label: summary.json" "$(awk -v b="$(stat -c %s "$d/summary.json")" 'BEGIN { printf "%.1f", b / 1048576 }')" "MiB"
        r=$(time_rss "$bin" report "$d" -o "$P/report.html")
        figure "  $label: report, from summary.json" "${r% *}" "s"
        figure "  $label: report, from summary.json: peak RSS" "$(kib_mib "${r#* }")" "MiB"
        cp "$d/summary.json" "$K/summary.json"
        r=$(time_rss "$bin" sessions "$P/sink" --summary --format json)
        figure "  $label: sessions --summary (that summary.json)" "${r% *}" "s"
        figure "  $label: sessions --summary: peak RSS" "$(kib_mib "${r#* }")" "MiB"
        rm -f "$d/summary.json"
    }
    for g in ${BENCH_PHASES_GPUS:-1 8}; do
        for n in ${BENCH_PHASES_SIZES:-10000 50000 100000 300000}; do
            d=$P/g$g-$n
            python3 bench/gen_phases.py "$d" --phases "$n" --gpus "$g"
            mkdir -p "$d-base" && ln -f "$d"/{gpu.csv,cpu.csv,session.json} "$d-base"/
            r=$(time_rss "$BUILD/runmon" summary "$d" --format json)
            b=$(time_rss "$BUILD/runmon" summary "$d-base" --format json)
            label="$n phases, $g GPU$([ "$g" = 1 ] || echo s)"
            figure "$label: summary" "${r% *}" "s"
            figure "$label: summary peak RSS" "$(kib_mib "${r#* }")" "MiB"
            figure "  baseline: the same files without the run log" "${b% *}" "s"
            figure "  baseline: peak RSS" "$(kib_mib "${b#* }")" "MiB"
            figure "  the phases' memory per distinct path" \
                "$(awk -v r="${r#* }" -v b="${b#* }" -v n="$n" 'BEGIN { printf "%.0f", (r - b) * 1024 / n }')" "bytes"
            rows=$((10000 / g < n ? 10000 / g : n))
            figure "  the phases' memory per phase row ($rows rows)" \
                "$(awk -v r="${r#* }" -v b="${b#* }" -v n="$rows" 'BEGIN { printf "%.0f", (r - b) * 1024 / n }')" "bytes"
            for f in text csv; do # each a row at a time, as json (they held the rows' JSON before)
                t=$(time_rss "$BUILD/runmon" summary "$d" --format "$f")
                figure "  --format $f: peak RSS" "$(kib_mib "${t#* }")" "MiB"
                figure "  --format $f: the phases' memory per distinct path" \
                    "$(awk -v r="${t#* }" -v b="${b#* }" -v n="$n" 'BEGIN { printf "%.0f", (r - b) * 1024 / n }')" "bytes"
                if [ -n "${BENCH_PHASES_BEFORE_RUNMON:-}" ]; then
                    t=$(BENCH_PHASES_RUNS=1 time_rss "$BENCH_PHASES_BEFORE_RUNMON" summary "$d" --format "$f")
                    figure "  before: --format $f: peak RSS" "$(kib_mib "${t#* }")" "MiB"
                fi
            done
            readers "$BUILD/runmon" "$d" "now"
            if [ -n "${BENCH_PHASES_BEFORE_RUNMON:-}" ]; then
                o=$(BENCH_PHASES_RUNS=1 time_rss "$BENCH_PHASES_BEFORE_RUNMON" summary "$d" --format json)
                figure "  before ($BENCH_PHASES_BEFORE_RUNMON)" "${o% *}" "s"
                figure "  before: peak RSS" "$(kib_mib "${o#* }")" "MiB"
                figure "  before: the phases' memory per phase row" \
                    "$(awk -v r="${o#* }" -v b="${b#* }" -v n="$rows" 'BEGIN { printf "%.0f", (r - b) * 1024 / n }')" "bytes"
                figure "  peak RSS before / now" "$(awk -v o="${o#* }" -v r="${r#* }" 'BEGIN { printf "%.2f", o / r }')" "x"
                BENCH_PHASES_RUNS=1 readers "$BENCH_PHASES_BEFORE_RUNMON" "$d" "before"
            fi
            rm -rf "$d" "$d-base"
        done
        # Record's end summary (summary.json and the text on stderr) of 10,000 phases of a
        # Python loop: peak RSS of `runmon record` (the loop's Python, about 10 MB, included).
        rec() { # RUNMON: "seconds peak_kib"
            local k=$P/rec
            rm -rf "$k"
            PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=$g FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" \
                PYTHONPATH="$(pwd)/python" /usr/bin/time -f '%e %M' "$1" record -o "$k" -i 0.1 -- \
                python3 -c 'import time, runmon
for i in range(10000):
    with runmon.phase("s%d" % i):
        time.sleep(0.0002)' 2>&1 >/dev/null | tail -n 1
            rm -rf "$k"
        }
        r=$(rec "$BUILD/runmon")
        figure "record, 10000 phases, $g GPU$([ "$g" = 1 ] || echo s): peak RSS" "$(kib_mib "${r#* }")" "MiB"
        if [ -n "${BENCH_PHASES_BEFORE_RUNMON:-}" ]; then
            o=$(rec "$BENCH_PHASES_BEFORE_RUNMON")
            figure "  before: peak RSS" "$(kib_mib "${o#* }")" "MiB"
            figure "  peak RSS before / now" "$(awk -v o="${o#* }" -v r="${r#* }" 'BEGIN { printf "%.2f", o / r }')" "x"
        fi
    done
fi

# ---- Sink index -----------------------------------------------------------------------------
# `runmon sessions` (text and JSON: time, peak RSS), `runmon summary` of the sink (the session
# choice streams the index) and `runmon record -- true` (wall time: start, one flush, end)
# against the number of sessions in the sink: 1k, 10k, 100k sessions cloned from one real
# recording (bench/gen_sink.py: hard links, the id replaced in session.json and state.json),
# beside the same figures on an empty sink, measured in the same run. Each figure is the best
# of BENCH_SINK_RUNS (default 3). BENCH_SINK_BEFORE_RUNMON=PATH (a runmon that keeps
# manifest.json, e.g. built from 24543bd) adds its figures on the same clones in the 0.1.0
# layout at BENCH_SINK_BEFORE_SIZES (default "1000 10000"; it is quadratic, keep them small).
if want sink; then
    SIZES=${BENCH_SINK_SIZES:-1000 10000 100000}
    RUNS=${BENCH_SINK_RUNS:-3}
    section "sink index: runmon sessions and record start against sessions in the sink"
    K=$B/sink
    mkdir -p "$K"
    export PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures"
    # The template: one real recording with a sealed segment (8 GPUs, 0.1 s, 1.5 s).
    "$BUILD/runmon" record -q -o "$K/tpl" -i 0.1 --rollover-mb 0.02 -- sleep 1.5
    declare -A took
    measure() { # RUNMON SINK LABEL: sessions time and RSS, record time
        local bin=$1 sink=$2 label=$3 s j r c
        s=$(fastest_of "$RUNS" "$bin" sessions "$sink" --format text)
        j=$(fastest_of "$RUNS" "$bin" sessions "$sink") # piped: JSON, the default off a terminal
        c=$(fastest_of "$RUNS" "$bin" summary "$sink" --format json)
        r=$(fastest_of "$RUNS" "$bin" record -q -o "$sink" -i 1 -- true)
        figure "$label: sessions" "${s% *}" "s"
        figure "$label: sessions peak RSS" "$(awk -v k="${s#* }" 'BEGIN { printf "%.1f", k / 1024 }')" "MiB"
        figure "$label: sessions, JSON (piped)" "${j% *}" "s"
        figure "$label: sessions, JSON peak RSS" "$(awk -v k="${j#* }" 'BEGIN { printf "%.1f", k / 1024 }')" "MiB"
        figure "$label: summary (picks the newest completed)" "${c% *}" "s"
        figure "$label: record -- true" "${r% *}" "s"
        took[$label:s]=${s% *}
        took[$label:r]=${r% *}
    }
    python3 bench/gen_sink.py --template "$K/tpl" --dest "$K/new" --count 0 >/dev/null
    measure "$BUILD/runmon" "$K/new" "empty sink"
    for n in $SIZES; do
        t0=$(now_ns)
        python3 bench/gen_sink.py --template "$K/tpl" --dest "$K/new" --count "$n" >/dev/null
        t1=$(now_ns)
        figure "generating the sink up to $n sessions" "$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e9 }')" "s"
        measure "$BUILD/runmon" "$K/new" "$n sessions"
        ratio "$n sessions / empty sink: sessions time" "${took[$n sessions:s]}" "${took[empty sink:s]}"
        ratio "$n sessions / empty sink: record -- true" "${took[$n sessions:r]}" "${took[empty sink:r]}"
    done
    if [ -n "${BENCH_SINK_BEFORE_RUNMON:-}" ]; then
        for n in ${BENCH_SINK_BEFORE_SIZES:-1000 10000}; do
            rm -rf "$K/old"
            python3 bench/gen_sink.py --template "$K/tpl" --dest "$K/old" --count "$n" --layout old >/dev/null
            measure "$BENCH_SINK_BEFORE_RUNMON" "$K/old" "before, $n sessions (manifest.json)"
        done
    fi
    rm -rf "$K"
fi

# ---- Sweep table ------------------------------------------------------------------------------
# `runmon sessions --summary --sweep s` (the sweep table: each run's index line and the members
# of its summary.json it shows) on BENCH_SWEEP_RUNS (default 1000) runs of one sweep cloned from
# one real recording with two phases (bench/gen_sink.py --sweep), in text and JSON, and with
# --group-by; beside the plain `sessions` listing of the same sink (the baseline, measured in
# the same run). Memory must not grow with the samples: the same table from a template that
# recorded 4x as long (4x the samples) gives the second RSS figure. Best of 3 runs each.
if want sweep; then
    section "sweep table: sessions --summary on the runs of one sweep (goal: 1,000 runs under 1 s)"
    N=${BENCH_SWEEP_RUNS:-1000}
    W=$B/sweep
    mkdir -p "$W"
    export PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=8 FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures"
    for secs in 1.5 6; do
        "$BUILD/runmon" record -q -o "$W/tpl$secs" -i 0.1 --sweep s --param lr=0.1 -- \
            sh -c "'$BUILD/runmon' phase load -- sleep 0.3; '$BUILD/runmon' phase train -- sleep $secs"
        python3 bench/gen_sink.py --template "$W/tpl$secs" --dest "$W/s$secs" --count "$N" --sweep s >/dev/null
    done
    S=$W/s1.5
    samples() { jq '[.gpus[].samples] | add' "$1/$(readlink "$1/latest")/summary.json"; }
    base=$(fastest_of 3 "$BUILD/runmon" sessions "$S" --format json)
    text=$(fastest_of 3 env COLUMNS=100 "$BUILD/runmon" sessions "$S" --summary --sweep s --format text)
    json=$(fastest_of 3 "$BUILD/runmon" sessions "$S" --summary --sweep s --format json)
    grp=$(fastest_of 3 "$BUILD/runmon" sessions "$S" --summary --sweep s --group-by lr --format json)
    long=$(fastest_of 3 "$BUILD/runmon" sessions "$W/s6" --summary --sweep s --format json)
    rows=$("$BUILD/runmon" sessions "$S" --summary --sweep s --format json | jq '.sessions | length')
    [ "$rows" -eq "$N" ] || { echo "bench: the sweep table has $rows rows, not $N" >&2; exit 1; }
    figure "baseline: sessions (the plain listing, JSON)" "${base% *}" "s"
    figure "sessions --summary --sweep s, text ($N runs)" "${text% *}" "s"
    figure "sessions --summary --sweep s, JSON" "${json% *}" "s"
    figure "sessions --summary --sweep s --group-by lr, JSON" "${grp% *}" "s"
    ratio "sweep table (JSON) / plain listing" "${json% *}" "${base% *}"
    figure "sweep table peak RSS ($(samples "$W/tpl1.5") samples a run)" "$(awk -v k="${json#* }" 'BEGIN { printf "%.1f", k / 1024 }')" "MiB"
    figure "sweep table peak RSS ($(samples "$W/tpl6") samples a run)" "$(awk -v k="${long#* }" 'BEGIN { printf "%.1f", k / 1024 }')" "MiB"
    figure "  its time" "${long% *}" "s"
    rm -rf "$W"
fi

# ---- Sweep page -----------------------------------------------------------------------------
# `runmon report --sweep` (wall time and peak RSS, best of BENCH_SWEEP_PAGE_RUNS, default 3) on
# 1,000 runs of one sweep (the table and the bars: above 50 runs nothing else is drawn) and on
# 50 runs (every series and phase drawn) whose gpu.csv holds 1 x and 100 x the template's
# samples (bench/gen_sweep.py --samples): the page's size and the memory must not follow the
# samples. Baselines measured in the same run: `runmon report` of the template session (one
# session's page) and `runmon sessions --summary --sweep` of the same 1,000 runs. Then runs
# with 10,000 metric lines each (issue 39): 1,000 of them, and 50 whose run logs are drawn.
if want sweep-page; then
    section "sweep page: report --sweep (goal: 1,000 runs under 2 s, memory independent of samples)"
    W=$B/sweep
    mkdir -p "$W"
    RUNS=${BENCH_SWEEP_PAGE_RUNS:-3}
    PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1 \
        FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" "$BUILD/runmon" record -q -o "$W/tpl" -i 0.1 -- \
        sh -c "'$BUILD/runmon' phase train -- sleep 1.5; '$BUILD/runmon' phase eval -- sleep 0.5"
    tpl=$(readlink -f "$W/tpl/latest")
    kib_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
    one=$(fastest_of "$RUNS" "$BUILD/runmon" report "$tpl" -o "$W/one.html")
    figure "baseline: report of one session" "${one% *}" "s"
    figure "baseline: report of one session: peak RSS" "$(kib_mib "${one#* }")" "MiB"
    t0=$(now_ns)
    python3 bench/gen_sweep.py --template "$tpl" --dest "$W/k1000" --count 1000 --link >/dev/null
    figure "generating 1,000 runs" "$(awk -v d=$(($(now_ns) - t0)) 'BEGIN { printf "%.1f", d / 1e9 }')" "s"
    sw=$(fastest_of "$RUNS" "$BUILD/runmon" report --sweep lr-sweep "$W/k1000" -o "$W/k1000.html")
    ss=$(fastest_of "$RUNS" "$BUILD/runmon" sessions "$W/k1000" --summary --sweep lr-sweep --format json)
    figure "report --sweep, 1,000 runs" "${sw% *}" "s"
    figure "report --sweep, 1,000 runs: peak RSS" "$(kib_mib "${sw#* }")" "MiB"
    figure "report --sweep, 1,000 runs: page" "$(kib_mib $(($(stat -c %s "$W/k1000.html") / 1024)))" "MiB"
    figure "baseline: sessions --summary --sweep, 1,000 runs" "${ss% *}" "s"
    ratio "report --sweep 1,000 runs / sessions --summary" "${sw% *}" "${ss% *}"
    ratio "report --sweep 1,000 runs / one session's report" "${sw% *}" "${one% *}"
    for k in 1 100; do
        python3 bench/gen_sweep.py --template "$tpl" --dest "$W/s$k" --count 50 --samples "$k" --link >/dev/null
        r=$(fastest_of "$RUNS" "$BUILD/runmon" report --sweep lr-sweep "$W/s$k" -o "$W/s$k.html")
        rows=$(($(wc -l <"$W/s$k/$(ls "$W/s$k" | grep -m1 lr-sweep)/gpu.csv") - 1))
        figure "report --sweep, 50 runs drawn, $rows GPU rows each" "${r% *}" "s"
        figure "  peak RSS" "$(kib_mib "${r#* }")" "MiB"
        figure "  page" "$(stat -c %s "$W/s$k.html")" "bytes"
        eval "rss$k=${r#* } sec$k=${r% *}"
    done
    ratio "50 runs: 100 x samples / 1 x: peak RSS" "$rss100" "$rss1"
    ratio "50 runs: 100 x samples / 1 x: time" "$sec100" "$sec1"
    # Issue 39: runs that log 10,000 metric lines each (loss, acc) and an objective: 1,000 runs
    # (goal: under 2 s, the page under 5 MB; the Pareto chart and parallel coordinates of every
    # run from summary.json) and 50 drawn runs (each run log read for the metric curves).
    cat >"$W/metrics.sh" <<'EOS'
awk 'BEGIN { srand(); t0 = srand(); for (s = 0; s < 10000; s++)
    printf "{\"ts\":\"x\",\"type\":\"metric\",\"step\":%d,\"values\":{\"loss\":%.6f,\"acc\":%.6f},\"pid\":1,\"t\":%.3f}\n",
        s, 2 / (1 + s / 500) + (s % 7) / 100, 1 - 1 / (1 + s / 1000), t0 + s / 10000 }' >>"$RUNMON_RUNLOG"
"$RUNMON_BIN" log objective acc:max
"$RUNMON_BIN" phase train -- sleep 1
EOS
    PATH="$BUILD/fakebin:$PATH" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1 RUNMON_BIN="$BUILD/runmon" \
        FAKE_SMI_CAPTURES="$(pwd)/fixtures/captures" "$BUILD/runmon" record -q -o "$W/mtpl" -i 0.1 -- \
        sh "$W/metrics.sh"
    mtpl=$(readlink -f "$W/mtpl/latest")
    for k in 1000 50; do
        python3 bench/gen_sweep.py --template "$mtpl" --dest "$W/m$k" --count "$k" --link >/dev/null
        r=$(fastest_of "$RUNS" "$BUILD/runmon" report --sweep lr-sweep "$W/m$k" -o "$W/m$k.html")
        figure "report --sweep, $k runs x 10,000 metric lines$([ "$k" = 50 ] && echo ', drawn')" "${r% *}" "s"
        figure "  peak RSS" "$(kib_mib "${r#* }")" "MiB"
        figure "  page" "$(kib_mib $(($(stat -c %s "$W/m$k.html") / 1024)))" "MiB"
    done
    rm -rf "$W"
fi
