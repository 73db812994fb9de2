#!/usr/bin/env bash
# Benchmarks `runmon summary` against baselines run on the same files in the same run:
#   - every layout the summary reads (runmon's gpu.csv; nvidia-smi's own --query-gpu CSV with
#     and without header, with and without units; dmon text), each against mawk summing one
#     column of the same file (goal: runmon >= 1.5x mawk; issue 24: >= 2.5x for dmon text and
#     for nvidia-smi's own CSV as `-l 1 > file` saves it, ", " separators, no header, units:
#     the smi-units row);
#   - one large runmon gpu.csv (BENCH_SUMMARY_MB, default 256 MiB) against mawk, a bare libcsv
#     scan and DuckDB (@duckdb/node-api) computing the same per-GPU statistics (count, mean and
#     max of utilization, memory and power per GPU); goals: >= 1.2 GB/s on 2 cores, >= 3x
#     DuckDB. DuckDB is installed from the npm registry into $BUILD/bench/node_modules (never
#     into the project); without network or npm it is skipped with a message.
# Files are made by bench/gen_gpucsv.c from real captures (fixtures/sessions, fixtures/captures)
# by repetition with advancing times. Each contender runs BENCH_SUMMARY_REPEAT times (default
# 5) and its fastest run counts (the machine may be shared). MB/s is 10^6 bytes per second.
# BENCH_SUMMARY_LAYOUTS (space-separated) runs only those layouts of the first table.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BUILD:=$(pwd)/build}"
MB=${BENCH_SUMMARY_MB:-256}
LMB=${BENCH_SUMMARY_LAYOUT_MB:-128}
REPEAT=${BENCH_SUMMARY_REPEAT:-5}
RUNMON_BIN=${RUNMON_BIN:-$BUILD/runmon}
[ -x "$RUNMON_BIN" ] || { echo "bench_summary: $RUNMON_BIN not built (make all)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/runmon-bench-summary.XXXXXX")
trap 'rm -rf "$W"' EXIT
CC=${CC:-cc}
GPU_CAPTURE=fixtures/sessions/h100-torch-phases/gpu.csv
DMON_CAPTURE=fixtures/captures/dmon-default-c5-h100-80gb-hbm3-590.48.01-linux-load.txt
FIELDS=timestamp,index,uuid,name,pci.bus_id,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,temperature.gpu,clocks.current.sm,clocks.current.memory

cat >"$W/csvscan.c" <<'C'
#include <csv.h>
#include <stdio.h>
#include <unistd.h>
static size_t fields, rows;
static void f(void *s, size_t n, void *d) { (void)s; (void)n; (void)d; fields++; }
static void r(int c, void *d) { (void)c; (void)d; rows++; }
int main(void)
{
    struct csv_parser p;
    csv_init(&p, 0);
    static char buf[1 << 18];
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0)
        csv_parse(&p, buf, (size_t)n, f, r, NULL);
    csv_fini(&p, f, r, NULL);
    printf("%zu rows %zu fields\n", rows, fields);
    return 0;
}
C
# Runs a command, prints "<seconds> <maxrss KiB> <CPU seconds>" to fd 3 (getrusage).
cat >"$W/measure.c" <<'C'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    (void)argc;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    clock_gettime(CLOCK_MONOTONIC, &b);
    dprintf(3, "%.3f %ld %.3f\n",
            (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, ru.ru_maxrss,
            (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
C
cat >"$W/duckdb.js" <<'JS'
// The same per-GPU statistics as runmon summary: count, mean and max of utilization, memory
// and power per GPU index, from the whole file.
const { DuckDBInstance } = require(process.env.DUCKDB_MODULE);
(async () => {
    const inst = await DuckDBInstance.create(':memory:');
    const con = await inst.connect();
    const r = await con.runAndReadAll(`SELECT "index" AS gpu, count(*) AS n,
        avg("utilization.gpu") AS util_mean, max("utilization.gpu") AS util_max,
        avg("memory.used") AS mem_mean, max("memory.used") AS mem_max,
        avg("power.draw") AS power_mean, max("power.draw") AS power_max
        FROM read_csv('${process.argv[2]}', header = true) GROUP BY 1 ORDER BY 1`);
    console.log(JSON.stringify(r.getRowObjectsJson()));
})().catch((e) => { console.error(String(e)); process.exit(1); });
JS
$CC -O2 -o "$W/gen" bench/gen_gpucsv.c
$CC -O2 -o "$W/csvscan" "$W/csvscan.c" -lcsv
$CC -O2 -o "$W/measure" "$W/measure.c"

# DuckDB, bench-only: installed at run time into the build folder (git-ignored).
DUCK_DIR=$BUILD/bench
DUCK_MODULE=$DUCK_DIR/node_modules/@duckdb/node-api
duck=""
if [ -d "$DUCK_MODULE" ] ||
    { command -v npm >/dev/null && mkdir -p "$DUCK_DIR" &&
        timeout 300 npm install --no-save --no-audit --no-fund --prefix "$DUCK_DIR" \
            @duckdb/node-api >"$W/npm.log" 2>&1; }; then
    command -v node >/dev/null && duck=yes
fi
if [ -z "$duck" ]; then
    tail -3 "$W/npm.log" 2>/dev/null >&2 || true
    echo "bench_summary: DuckDB skipped: @duckdb/node-api could not be installed with npm" >&2
fi

run() { # cmd... ; sets secs (fastest of REPEAT), rss and cpu (the least CPU seconds)
    local out i best="" w r c
    cpu=""
    for ((i = 0; i < REPEAT; i++)); do
        out=$({ "$W/measure" "$@" >/dev/null 2>"$W/stderr"; } 3>&1) ||
            { echo "bench_summary: $* failed"; cat "$W/stderr"; exit 1; }
        read -r w r c <<<"$out"
        if [ -z "$best" ] || awk -v a="$w" -v b="$secs" 'BEGIN { exit !(a < b) }'; then
            best=$out secs=$w rss=$r
        fi
        if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN { exit !(a < b) }'; then cpu=$c; fi
    done
}
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / 1e6 / (s > 0 ? s : 1e-9) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
verdict() { awk -v r="$1" -v g="$2" 'BEGIN { print (r >= g ? "goal met" : "BELOW GOAL") }'; }

# ---- every layout against mawk ----------------------------------------------------------------
echo "bench_summary: generating ${LMB} MiB per layout, 8 GPUs, from $GPU_CAPTURE and $DMON_CAPTURE"
echo "(MB/s of wall time; 'CPU' compares CPU seconds, steadier on a shared machine)"
printf '%-20s %10s %10s %10s %8s %9s  %s\n' "layout (${LMB} MiB)" "mawk MB/s" "1 thread" "runmon" "vs mawk" "CPU ratio" "goal (vs mawk)"
for L in ${BENCH_SUMMARY_LAYOUTS:-runmon smi-units-header smi-nounits-header smi-units smi-nounits dmon}; do
    F=$W/$L.data
    if [ "$L" = dmon ]; then
        "$W/gen" dmon "$LMB" 8 "$DMON_CAPTURE" >"$F"
        mawk_cmd=(mawk '!/^#/ { s += $5 } END { print s }' "$F")
        args=(--dmon "$F")
    elif [ "$L" = runmon ]; then
        "$W/gen" "$L" "$LMB" 8 "$GPU_CAPTURE" >"$F"
        mawk_cmd=(mawk -F, '{ s += $7 } END { print s }' "$F")
        args=(--gpu-csv "$F")
    else
        "$W/gen" "$L" "$LMB" 8 "$GPU_CAPTURE" >"$F"
        mawk_cmd=(mawk -F', ' '{ s += $6 } END { print s }' "$F")
        args=(--gpu-csv "$F" --gpu-fields "$FIELDS")
    fi
    bytes=$(stat -c %s "$F")
    cat "$F" >/dev/null # warm the page cache so every contender reads from memory
    "$RUNMON_BIN" summary "${args[@]}" --format json >"$W/summary.json" 2>/dev/null
    grep -q '"gpu_count": 8' "$W/summary.json" ||
        { echo "bench_summary: summary of layout $L did not report 8 GPUs"; exit 1; }
    run "${mawk_cmd[@]}"; m_s=$secs; m_cpu=$cpu
    run "$RUNMON_BIN" summary "${args[@]}" --format json --threads 1; r1_s=$secs; r1_cpu=$cpu
    run "$RUNMON_BIN" summary "${args[@]}" --format json; r_s=$secs
    case $L in smi-units | dmon) goal=2.5 ;; *) goal=1.5 ;; esac
    printf '%-20s %10s %10s %10s %7sx %8sx  %s\n' "$L" "$(mbs "$bytes" "$m_s")" "$(mbs "$bytes" "$r1_s")" \
        "$(mbs "$bytes" "$r_s")" "$(ratio "$m_s" "$r_s")" "$(ratio "$m_cpu" "$r1_cpu")" \
        ">= ${goal}x: $(verdict "$(ratio "$m_s" "$r_s")" "$goal")"
    rm -f "$F"
done

# ---- one large gpu.csv: mawk, libcsv, DuckDB ----------------------------------------------------
F=$W/gpu.csv
echo
echo "bench_summary: generating ${MB} MiB runmon gpu.csv, 8 GPUs, from $GPU_CAPTURE"
"$W/gen" runmon "$MB" 8 "$GPU_CAPTURE" >"$F"
bytes=$(stat -c %s "$F")
cat "$F" >/dev/null
ncpu=$(nproc)
run mawk -F, 'NR > 1 { s += $11 } END { print s }' "$F"; m_s=$secs; m_rss=$rss; m_cpu=$cpu
run sh -c "exec '$W/csvscan' < '$F'"; c_s=$secs; c_rss=$rss; c_cpu=$cpu
run "$RUNMON_BIN" summary --gpu-csv "$F" --format json --threads 1; r1_s=$secs; r1_rss=$rss; r1_cpu=$cpu
run "$RUNMON_BIN" summary --gpu-csv "$F" --format json; r_s=$secs; r_rss=$rss; r_cpu=$cpu
"$RUNMON_BIN" summary --gpu-csv "$F" --format json >"$W/summary.json"
grep -q '"gpu_count": 8' "$W/summary.json" || { echo "bench_summary: summary did not report 8 GPUs"; exit 1; }
d_s=""
if [ -n "$duck" ]; then
    DUCKDB_MODULE=$DUCK_MODULE node "$W/duckdb.js" "$F" >"$W/duck.json" 2>"$W/stderr" ||
        { echo "bench_summary: DuckDB failed: $(cat "$W/stderr")"; duck=""; }
fi
if [ -n "$duck" ]; then
    export DUCKDB_MODULE=$DUCK_MODULE
    run node "$W/duckdb.js" "$F"; d_s=$secs; d_rss=$rss; d_cpu=$cpu
    # The same figures: GPU 0's sample count and utilization max from both.
    want=$(jq -r '.gpus[0] | "\(.samples) \(.util_pct.max)"' "$W/summary.json" 2>/dev/null || echo "?")
    got=$(jq -r '.[0] | "\(.n) \(.util_max)"' "$W/duck.json" 2>/dev/null || echo "?")
    [ "$want" = "$got" ] || echo "bench_summary: DuckDB's figures differ from runmon's: $got vs $want"
fi

row() { printf '%-40s %8s %8s %8s %7s KiB\n' "$1" "$2" "$(mbs "$bytes" "$2")" "$3" "$4"; }
printf '%-40s %8s %8s %8s %10s\n' "contender (${MB} MiB gpu.csv, $ncpu CPUs)" "seconds" "MB/s" "CPU s" "peak RSS"
row "mawk, sum of one column" "$m_s" "$m_cpu" "$m_rss"
row "libcsv bare scan" "$c_s" "$c_cpu" "$c_rss"
[ -n "$d_s" ] && row "DuckDB (node-api), per-GPU statistics" "$d_s" "$d_cpu" "$d_rss"
row "runmon summary, 1 thread" "$r1_s" "$r1_cpu" "$r1_rss"
row "runmon summary, $ncpu threads (chunks)" "$r_s" "$r_cpu" "$r_rss"
echo "runmon / mawk: $(ratio "$m_s" "$r_s")x ($(verdict "$(ratio "$m_s" "$r_s")" 1.5) >= 1.5x)   runmon / bare libcsv: $(ratio "$c_s" "$r_s")x   chunks / 1 thread: $(ratio "$r1_s" "$r_s")x"
echo "runmon: $(mbs "$bytes" "$r_s") MB/s ($(verdict "$(mbs "$bytes" "$r_s")" 1200) >= 1200 MB/s on 2 cores)   RSS $(awk -v r="$r_rss" 'BEGIN { printf "%.1f", r / 1024 }') MiB (target < 16)"
if [ -n "$d_s" ]; then
    echo "runmon / DuckDB: $(ratio "$d_s" "$r_s")x ($(verdict "$(ratio "$d_s" "$r_s")" 3) >= 3x)"
else
    echo "runmon / DuckDB: skipped (no @duckdb/node-api)"
fi
