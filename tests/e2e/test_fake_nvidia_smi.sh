#!/usr/bin/env bash
# The fake nvidia-smi itself: output shapes against the real captures, loop timing, fault modes.
. "$(dirname "$0")/lib.sh"

SMI=$FAKEBIN/nvidia-smi
CAP=$FIXTURES/captures
export FAKE_SMI_CAPTURES=$CAP
unset FAKE_SMI_MODEL FAKE_SMI_GPUS FAKE_SMI_VARY FAKE_SMI_OVERRIDE FAKE_SMI_STATE_DIR \
    FAKE_SMI_FAULT_ONLY FAKE_SMI_FAULT_TIMES FAKE_SMI_FAULT_INVENTORY FAKE_SMI_EXIT_AFTER \
    FAKE_SMI_EXIT_CODE FAKE_SMI_HANG_AFTER FAKE_SMI_IGNORE_TERM FAKE_SMI_NOISE \
    FAKE_SMI_NVML_ERROR FAKE_SMI_START_DELAY_MS FAKE_SMI_DMON_MS FAKE_SMI_DMON_MODEL \
    FAKE_SMI_APPS FAKE_SMI_PMON_MS FAKE_SMI_NO_NVML
INV="--query-gpu=index,uuid,name,pci.bus_id,memory.total,driver_version --format=csv,noheader,nounits"
Q="--query-gpu=index,utilization.gpu --format=csv,noheader,nounits"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# dead PID: gone, or a zombie not yet reaped by this shell
dead() { ! kill -0 "$1" 2>/dev/null || [ "$(cut -d" " -f3 "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# until_ok SECONDS CMD...: CMD succeeds within SECONDS (lib.sh wait_for returns 1 whenever its
# condition needed more than one try: the while loop ends with the failed limit test).
until_ok() {
    local end=$(($(now_ms) + $1 * 1000)); shift
    until "$@"; do [ "$(now_ms)" -ge "$end" ] && return 1; sleep 0.05; done
}
# capture_field FILE FIELD: prints "HEADER|VALUE" for FIELD from an allfields capture
capture_field() {
    paste -d'|' <(head -1 "$1" | sed 's/, /\n/g') <(sed -n 2p "$1" | sed 's/, /\n/g') |
        awk -F'|' -v f="$2" '{ n = $1; sub(/ \[.*\]$/, "", n); if (n == f) { print; exit } }'
}

# --- inventory ---
out=$(FAKE_SMI_GPUS=8 timeout 5 "$SMI" $INV); rc=$?
expect_eq "inventory exits 0" 0 "$rc"
expect_eq "inventory: 8 GPUs, 8 lines" 8 "$(printf '%s\n' "$out" | wc -l)"
expect_eq "inventory: 8 distinct uuids" 8 "$(printf '%s\n' "$out" | cut -d, -f2 | sort -u | wc -l)"
expect_eq "inventory: 8 distinct bus ids" 8 "$(printf '%s\n' "$out" | cut -d, -f4 | sort -u | wc -l)"
expect_eq "inventory: indices 0..7" "0 1 2 3 4 5 6 7" "$(printf '%s\n' "$out" | cut -d, -f1 | xargs)"
expect_eq "inventory: first line as in the h200 capture" \
    "0, GPU-00000000-0000-0000-0000-000000000000, NVIDIA H200, 00000000:83:00.0, 143771, 590.48.01" \
    "$(printf '%s\n' "$out" | head -1)"
expect_match "inventory: uuid ends in the index" "GPU-0+-0000-0000-0000-000000000007" \
    "$(printf '%s\n' "$out" | tail -1)"
out=$(FAKE_SMI_GPUS=0 timeout 5 "$SMI" $INV); rc=$?
expect_eq "no GPUs: exit 6" 6 "$rc"
expect_eq "no GPUs: message" "No devices were found" "$out"

# --- loop timing and argument forms ---
# Counted, not timed: EXIT_AFTER=N ends the loop after N rows, and the time taken is only
# checked from below (N-1 periods at least; a busy machine can only make it slower).
# loop_rows NAME ROWS MIN_MS ARGS...: the loop prints ROWS rows and exits 0, after MIN_MS.
loop_rows() {
    local name=$1 n=$2 min=$3 t0 el rc; shift 3
    t0=$(now_ms)
    FAKE_SMI_EXIT_AFTER=$n FAKE_SMI_EXIT_CODE=0 timeout 30 "$SMI" "$@" >"$T/loop.out"; rc=$?
    el=$(($(now_ms) - t0))
    expect_eq "$name: $n rows, exit 0" "0 $n" "$rc $(wc -l <"$T/loop.out")"
    check "$name: $n rows take >= $min ms (${el} ms)" test "$el" -ge "$min"
}
loop_rows "-lms 100" 5 350 $Q -lms 100
loop_rows "--loop-ms=100" 5 350 $Q --loop-ms=100
loop_rows "-l 1" 2 900 $Q -l 1
loop_rows "--loop=1" 2 900 $Q --loop=1
FAKE_SMI_GPUS=4 FAKE_SMI_EXIT_AFTER=8 FAKE_SMI_EXIT_CODE=0 timeout 30 "$SMI" $Q -lms 100 >"$T/g4.out"
expect_eq "4 GPUs: each sample prints all 4 in order" "0 1 2 3 0 1 2 3" "$(cut -d, -f1 "$T/g4.out" | xargs)"
out=$(timeout 5 "$SMI" --query-gpu index --format csv,noheader); rc=$?
expect_eq "space-separated option values accepted" "0:0" "$rc:$out"
out=$(timeout 5 "$SMI" --query-gpu=index --format=csv,noheader -i 1); rc=$?
expect_eq "-i of a missing GPU: exit 6" 6 "$rc"
out=$(FAKE_SMI_GPUS=3 timeout 5 "$SMI" --query-gpu=index --format=csv,noheader -i 2,0)
expect_eq "-i 2,0 selects those GPUs" "2 0" "$(echo $out)"

# --- header, units, nounits, missing values ---
F=index,name,memory.used,utilization.gpu,power.draw,temperature.gpu,clocks.current.sm
C=$CAP/query-gpu-allfields-h200-590.48.01-linux-load.csv
exp_h=""; exp_u=""; exp_n=""
for f in ${F//,/ }; do
    hv=$(capture_field "$C" "$f"); h=${hv%%|*}; v=${hv#*|}
    unit=""; [[ $h =~ \[(.*)\]$ ]] && unit=${BASH_REMATCH[1]}
    nv=$v; [ -n "$unit" ] && nv=${v% "$unit"}
    exp_h+="${exp_h:+, }$h"; exp_u+="${exp_u:+, }$v"; exp_n+="${exp_n:+, }$nv"
done
out=$(timeout 5 "$SMI" --query-gpu=$F --format=csv)
expect_eq "csv: header matches the capture's header" "$exp_h" "$(sed -n 1p <<<"$out")"
expect_eq "csv: values carry units as in the capture" "$exp_u" "$(sed -n 2p <<<"$out")"
expect_match "csv: units look real" "32362 MiB, 100 %, 627.40 W, 52, 1980 MHz$" "$(sed -n 2p <<<"$out")"
out=$(timeout 5 "$SMI" --query-gpu=$F --format=csv,nounits)
expect_eq "nounits: header keeps units" "$exp_h" "$(sed -n 1p <<<"$out")"
expect_eq "nounits: values stripped" "$exp_n" "$(sed -n 2p <<<"$out")"
expect_match "nounits: numbers only" "32362, 100, 627.40, 52, 1980$" "$(sed -n 2p <<<"$out")"
out=$(timeout 5 "$SMI" --query-gpu=clocks.sm,gpu_uuid --format=csv)
expect_eq "aliases print canonical headers" "clocks.current.sm [MHz], uuid" "$(head -1 <<<"$out")"
out=$(timeout 5 "$SMI" --query-gpu=timestamp --format=csv,noheader)
expect_match "timestamp is live nvidia-smi local time" "^$(date +%Y/%m/%d) [0-9:]{8}\.[0-9]{3}$" "$out"
export FAKE_SMI_MODEL=h100-mig-590.48.01-linux-load
out=$(timeout 5 "$SMI" --query-gpu=utilization.gpu,utilization.memory,memory.used,power.draw --format=csv,noheader,nounits)
expect_eq "MIG: utilization replayed as [N/A]" "[N/A], [N/A], 11125, 433.78" "$out"
out=$(timeout 5 "$SMI" --query-gpu=utilization.gpu,display_mode --format=csv,noheader)
expect_eq "missing spellings kept with units on" "[N/A], [Requested functionality has been deprecated]" "$out"
out=$(FAKE_SMI_GPUS=2 timeout 5 "$SMI" -L)
expect_eq "-L on a MIG model: 2 GPUs + 4 MIG devices each" 10 "$(wc -l <<<"$out")"
expect_match "-L line shape" "^GPU 0: NVIDIA H100 80GB HBM3 \(UUID: GPU-0{8}-0000-0000-0000-0{12}\)" "$out"
unset FAKE_SMI_MODEL
out=$(timeout 5 "$SMI" --version)
expect_match "--version names the capture's driver" "DRIVER version +: 590.48.01" "$out"

# --- errors ---
out=$(timeout 5 "$SMI" --query-gpu=index,foo --format=csv); rc=$?
expect_eq "unknown field: exit 2" 2 "$rc"
expect_eq "unknown field: real message" 'Field "foo" is not a valid field to query.' "$out"
out=$(FAKE_SMI_MODEL=no-such-model timeout 5 "$SMI" $INV 2>&1); rc=$?
check "unknown model fails loudly (rc $rc)" test "$rc" -ne 0 -a -n "$out"
out=$(cd / && env -u FAKE_SMI_CAPTURES timeout 5 "$SMI" $INV); rc=$?
expect_eq "captures found from the executable's location" "0:0" "$rc:${out%%,*}"
timeout 5 "$SMI" --bogus >/dev/null; rc=$?
expect_eq "unknown option: exit 2" 2 "$rc"

# --- dmon ---
D=$CAP/dmon-default-c5-h200-590.48.01-linux-load.txt
out=$(FAKE_SMI_GPUS=2 FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -c 3); rc=$?
expect_eq "dmon -c 3 exits 0" 0 "$rc"
expect_eq "dmon default: header lines byte-identical to the capture" "$(head -2 "$D")" "$(head -2 <<<"$out")"
expect_eq "dmon default: first row as in the capture" "$(sed -n 3p "$D")" "$(sed -n 3p <<<"$out")"
expect_eq "dmon: 2 GPUs x 3 samples rows" 6 "$(grep -vc '^#' <<<"$out")"
expect_eq "dmon: gpu column is the index" "0 1 0 1 0 1" "$(grep -v '^#' <<<"$out" | awk '{print $1}' | xargs)"
out=$(FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -s pucm -d 1 -c 2)
expect_eq "dmon -s pucm: column names" "# gpu pwr gtemp mtemp sm mem enc dec jpg ofa mclk pclk fb bar1 ccpm" \
    "$(head -1 <<<"$out" | tr -s ' ' | sed 's/ $//')"
expect_eq "dmon -s pucm: units" "# Idx W C C % % % % % % MHz MHz MB MB MB" \
    "$(sed -n 2p <<<"$out" | tr -s ' ' | sed 's/ $//')"
expect_eq "dmon -s pucm: rows have 15 columns" "15 15" "$(grep -v '^#' <<<"$out" | awk '{print NF}' | xargs)"
expect_eq "dmon -s pucm: fb is memory.used" 32362 "$(sed -n 3p <<<"$out" | awk '{print $13}')"
out=$(FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -s pucvmet -c 1)
expect_eq "dmon -s pucvmet: all groups in real order" \
    "# gpu pwr gtemp mtemp sm mem enc dec jpg ofa mclk pclk pviol tviol fb bar1 ccpm sbecc dbecc pci rxpci txpci" \
    "$(head -1 <<<"$out" | tr -s ' ' | sed 's/ $//')"
out=$(FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -s u -c 1)
expect_eq "dmon -s u: only utilization" "# gpu sm mem enc dec jpg ofa" "$(head -1 <<<"$out" | tr -s ' ' | sed 's/ $//')"
out=$(FAKE_SMI_MODEL=h100-mig-590.48.01-linux-load FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -c 1)
expect_match "dmon MIG: utilization columns are -" "^ +0 +[0-9]+ +[0-9]+ +[0-9]+( +-){6} +[0-9]+ +[0-9]+ $" "$(sed -n 3p <<<"$out")"
t0=$(now_ms); out=$(timeout 30 "$SMI" dmon -d 1 -c 2); rc=$?; el=$(($(now_ms) - t0))
expect_eq "dmon -d 1 -c 2: 2 samples, exit 0" "0 2" "$rc $(grep -vc '^#' <<<"$out")"
check "dmon -d 1 -c 2 waits a period between them (${el} ms >= 900)" test "$el" -ge 900

# --- VARY and OVERRIDE ---
out=$(FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1 FAKE_SMI_EXIT_AFTER=40 FAKE_SMI_EXIT_CODE=0 timeout 30 "$SMI" --query-gpu=index,utilization.gpu,memory.used,power.draw --format=csv,noheader,nounits -lms 20)
expect_eq "vary: utilization takes several values" 1 "$(awk -F', ' '$1==0{print $2}' <<<"$out" | sort -u | awk 'END{print (NR>=4)}')"
expect_eq "vary: utilization within 0..100" 1 "$(awk -F', ' '$2<0||$2>100{bad=1} END{print bad?0:1}' <<<"$out")"
expect_eq "vary: power keeps 2 decimals" 1 "$(awk -F', ' '$4!~/^[0-9]+\.[0-9][0-9]$/{bad=1} END{print bad?0:1}' <<<"$out")"
expect_eq "vary: GPUs differ" 1 "$(awk -F', ' 'NR<=2{v[NR]=$3} END{print (v[1]!=v[2])}' <<<"$out")"
out=$(FAKE_SMI_OVERRIDE="memory.used=1000,40000,79000;utilization.gpu=0,50,100" FAKE_SMI_EXIT_AFTER=4 FAKE_SMI_EXIT_CODE=0 timeout 30 "$SMI" --query-gpu=utilization.gpu,memory.used --format=csv,noheader -lms 100)
expect_eq "override: values cycle per sample (units kept)" "0 %, 1000 MiB|50 %, 40000 MiB|100 %, 79000 MiB|0 %, 1000 MiB" \
    "$(head -4 <<<"$out" | paste -sd'|')"
out=$(FAKE_SMI_OVERRIDE="memory.used=7;utilization.gpu=42" FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -s um -c 1)
expect_eq "override applies to dmon sm and fb" "42 7" "$(sed -n 3p <<<"$out" | awk '{print $2, $8}')"

# --- fault modes ---
out=$(FAKE_SMI_GPUS=2 FAKE_SMI_EXIT_AFTER=3 FAKE_SMI_EXIT_CODE=7 timeout 5 "$SMI" $Q -lms 50); rc=$?
expect_eq "EXIT_AFTER=3: exit status from EXIT_CODE" 7 "$rc"
expect_eq "EXIT_AFTER=3: exactly 3 rows" 3 "$(wc -l <<<"$out")"
out=$(FAKE_SMI_EXIT_AFTER=2 FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon); rc=$?
expect_eq "EXIT_AFTER in dmon: default status 1, 2 rows" "1 2" "$rc $(grep -vc '^#' <<<"$out")"
out=$(FAKE_SMI_EXIT_AFTER=0 timeout 5 "$SMI" $INV); rc=$?
expect_eq "inventory is not faulted by default" "0 1" "$rc $(wc -l <<<"$out")"
out=$(FAKE_SMI_EXIT_AFTER=0 FAKE_SMI_FAULT_INVENTORY=1 timeout 5 "$SMI" $INV); rc=$?
expect_eq "FAULT_INVENTORY=1 faults inventory" "1:" "$rc:$out"

FAKE_SMI_HANG_AFTER=2 "$SMI" $Q -lms 50 >"$T/hang.out" & pid=$!; track $pid
two_rows() { test "$(wc -l <"$T/hang.out")" -ge 2; }
until_ok 20 two_rows
sleep 0.5 # ten periods of silence; a late row would only make the count larger
expect_eq "HANG_AFTER=2: 2 rows then silence" 2 "$(wc -l <"$T/hang.out")"
check "HANG_AFTER: still alive while hung" kill -0 $pid
kill -TERM $pid
check "HANG_AFTER: SIGTERM ends it" until_ok 20 dead $pid

FAKE_SMI_IGNORE_TERM=1 "$SMI" $Q -lms 50 >"$T/ign.out" & pid=$!; track $pid
until_ok 20 test -s "$T/ign.out" # its first row: the signals are ignored by then
kill -TERM $pid; kill -INT $pid; sleep 0.3
check "IGNORE_TERM: survives SIGTERM and SIGINT" kill -0 $pid
n1=$(wc -l <"$T/ign.out")
more_rows() { test "$(wc -l <"$T/ign.out")" -gt "$1"; }
check "IGNORE_TERM: keeps printing" until_ok 20 more_rows "$n1"
kill -KILL $pid
check "IGNORE_TERM: SIGKILL ends it" until_ok 20 dead $pid

"$SMI" $Q -lms 50 >/dev/null & pid=$!; track $pid
sleep 0.2; kill -TERM $pid
check "normal loop dies on SIGTERM" until_ok 20 dead $pid

out=$(FAKE_SMI_NOISE=1 FAKE_SMI_EXIT_AFTER=8 FAKE_SMI_EXIT_CODE=0 timeout 30 "$SMI" $Q -lms 20)
expect_match "NOISE: Xid event lines" $'\nXid \\(PCI:0000:83:00\\): 13, ' "$out"
expect_match "NOISE: ECC event lines" "Single Bit ECC Error" "$out"
expect_match "NOISE: blank lines" $'\n\n' "$out"
expect_match "NOISE: garbage lines" "garbage" "$out"
expect_eq "NOISE: data rows still intact" 1 "$(grep -cE '^0, 100$' <<<"$out" | awk '{print ($1>=6)}')"
out=$(FAKE_SMI_NOISE=1 FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -c 2)
expect_match "NOISE in dmon too" "Xid \(PCI" "$out"

out=$(FAKE_SMI_NVML_ERROR=1 timeout 5 "$SMI" $Q -lms 100 2>/dev/null); rc=$?
expect_eq "NVML_ERROR: exit 18" 18 "$rc"
expect_eq "NVML_ERROR: real text on stdout" "Failed to initialize NVML: Driver/library version mismatch" "$out"
out=$(FAKE_SMI_NO_NVML=1 timeout 5 "$SMI" $Q -lms 100 2>/dev/null); rc=$?
expect_eq "NO_NVML: exit 12" 12 "$rc"
expect_eq "NO_NVML: the real two lines on stdout" "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.
Please also try adding directory that contains libnvidia-ml.so to your system PATH." "$out"

t0=$(now_ms)
FAKE_SMI_START_DELAY_MS=600 "$SMI" $Q -lms 100 >"$T/delay.out" & pid=$!; track $pid
until_ok 5 test -s "$T/delay.out"
el=$(($(now_ms) - t0)); kill $pid
check "START_DELAY_MS=600: first row after >= 550 ms (${el} ms)" test "$el" -ge 550

out=$(FAKE_SMI_FAULT_ONLY=dmon FAKE_SMI_NVML_ERROR=1 timeout 30 "$SMI" $Q -lms 100 | head -1)
expect_eq "FAULT_ONLY=dmon spares the query loop" "0, 100" "$out"
out=$(FAKE_SMI_FAULT_ONLY=dmon FAKE_SMI_NVML_ERROR=1 timeout 5 "$SMI" dmon); rc=$?
expect_eq "FAULT_ONLY=dmon faults dmon" 18 "$rc"
out=$(FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_NVML_ERROR=1 FAKE_SMI_DMON_MS=20 timeout 5 "$SMI" dmon -c 1); rc=$?
expect_eq "FAULT_ONLY=gpu spares dmon" 0 "$rc"

S=$T/state; mkdir -p "$S"
rcs=""
for i in 1 2 3; do
    FAKE_SMI_STATE_DIR=$S FAKE_SMI_FAULT_TIMES=2 FAKE_SMI_EXIT_AFTER=0 FAKE_SMI_EXIT_CODE=9 \
        timeout 2 "$SMI" $Q -lms 100 >/dev/null
    rcs+="$? "
done
expect_eq "FAULT_TIMES=2: two faulted invocations, then normal" "9 9 124 " "$rcs"
FAKE_SMI_STATE_DIR=$S FAKE_SMI_FAULT_TIMES=2 FAKE_SMI_EXIT_AFTER=0 FAKE_SMI_DMON_MS=20 \
    timeout 5 "$SMI" dmon -c 1 >/dev/null; rc=$?
expect_eq "FAULT_TIMES counts each kind separately" 1 "$rc"
timeout 5 env FAKE_SMI_STATE_DIR=$S "$SMI" $INV >/dev/null
expect_eq "STATE_DIR/pids: one line per invocation" "gpu gpu gpu dmon inventory" "$(awk '{print $2}' "$S/pids" | xargs)"
expect_eq "STATE_DIR/pids: PID KIND lines" 5 "$(grep -cE '^[0-9]+ [a-z]+$' "$S/pids")"
# concurrent invocations count atomically
rm -f "$S/fault-count-gpu"
# Keep each pid as it starts: `jobs -p` forgets jobs that have already finished (and their
# exit codes with them), so collecting from it later loses the fast ones.
pids=()
for i in 1 2 3 4 5 6; do
    FAKE_SMI_STATE_DIR=$S FAKE_SMI_FAULT_TIMES=3 FAKE_SMI_EXIT_AFTER=0 FAKE_SMI_EXIT_CODE=9 \
        timeout 3 "$SMI" $Q -lms 100 >/dev/null &
    pids+=($!)
done
rcs=""; for j in "${pids[@]}"; do wait "$j"; rcs+="$? "; done
expect_eq "FAULT_TIMES under concurrency: exactly 3 faulted" 3 "$(tr ' ' '\n' <<<"$rcs" | grep -c '^9$')"

# --- pipes ---
timeout 30 "$SMI" $Q -lms 20 | head -2 >/dev/null
st=("${PIPESTATUS[@]}")
check "reader gone: the fake exits on its own, not at the timeout (${st[0]})" test "${st[0]}" -ne 124
(trap '' PIPE; exec timeout 5 "$SMI" $Q -lms 20) 2>"$T/epipe.err" | head -1 >/dev/null
st=("${PIPESTATUS[@]}")
expect_eq "SIGPIPE ignored: exits quietly on EPIPE" "0:" "${st[0]}:$(cat "$T/epipe.err")"

# --- pmon and --query-compute-apps (FAKE_SMI_APPS) vs the H100 580.159.04 captures ---
AC=$CAP/apps
PY=/opt/torch/.venv/bin/python3
printf '# the capture'"'"'s two processes\n0 653 C 1860 99 7 %s\n\n0 654 C 3656 - - %s\n' "$PY" "$PY" >"$T/apps"
export FAKE_SMI_PMON_MS=20
FAKE_SMI_APPS=$T/apps timeout 5 "$SMI" pmon -c 5 -s mu >"$T/pmon-mu.out"; rc=$?
expect_eq "pmon -c 5 exits 0" 0 "$rc"
check "pmon -s mu: byte-identical to pmon-s-mu-load.txt" cmp "$T/pmon-mu.out" "$AC/pmon-s-mu-load.txt"
FAKE_SMI_APPS=$T/apps timeout 5 "$SMI" pmon --count=3 --select=um >"$T/pmon-um.out"
check "pmon -s um: byte-identical to pmon-s-um-load.txt" cmp "$T/pmon-um.out" "$AC/pmon-s-um-load.txt"
# the default capture's sm went 99 98 98: a comma list in the file gives sample k item k mod n
sed 's/ 99 7 / 99,98,98 7 /' "$T/apps" >"$T/apps-vary"
FAKE_SMI_APPS=$T/apps-vary timeout 5 "$SMI" pmon -c 3 >"$T/pmon-u.out"
check "pmon default (-s u): byte-identical to pmon-default-load.txt" cmp "$T/pmon-u.out" "$AC/pmon-default-load.txt"
timeout 5 "$SMI" pmon -c 3 -s mu >"$T/pmon-idle.out"
check "pmon without FAKE_SMI_APPS: the idle capture byte for byte" cmp "$T/pmon-idle.out" "$AC/pmon-s-mu-idle.txt"
FAKE_SMI_APPS=$T/no-such-file timeout 5 "$SMI" pmon -c 2 -s mu >"$T/pmon-after.out"
check "pmon with a missing file: idle rows (pmon-s-mu-after.txt)" cmp "$T/pmon-after.out" "$AC/pmon-s-mu-after.txt"
sed 's/ 99 7 / 98 7 /' "$T/apps" >"$T/apps-98"
FAKE_SMI_APPS=$T/apps-98 timeout 5 "$SMI" pmon -c 3 -s mu -o DT >"$T/pmon-dt.out"
# date and time are live: put the capture's in their columns (1-21), then compare bytes
expect_match "pmon -o DT: date and time are now" "^ $(date +%Y%m%d) +[0-9]{2}:[0-9]{2}:[0-9]{2} " "$(sed -n 3p "$T/pmon-dt.out")"
expect_eq "pmon -o DT: byte-identical but for the live date/time" "$(cat "$AC/pmon-s-mu-DT-load.txt")" \
    "$(awk -v cap="$AC/pmon-s-mu-DT-load.txt" '{ getline c <cap; print (NR > 2 ? substr(c, 1, 21) substr($0, 22) : $0) }' "$T/pmon-dt.out")"
out=$(FAKE_SMI_GPUS=3 timeout 5 "$SMI" pmon -c 2 -s m)
expect_eq "pmon -s m: memory columns only" "# gpu pid type fb ccpm command" "$(head -1 <<<"$out" | tr -s ' ' | sed 's/ $//')"
expect_eq "pmon: 3 idle GPUs x 2 samples, in index order" "0 1 2 0 1 2" "$(grep -v '^#' <<<"$out" | awk '{print $1}' | xargs)"
printf '1 4242 C+G 100 50 1 /usr/bin/a very long process name.bin\n2 77 G 10 - - Xorg\n1 4243 C 200,300 5,6 0 trainer\n' >"$T/apps3"
out=$(FAKE_SMI_APPS=$T/apps3 FAKE_SMI_GPUS=3 timeout 5 "$SMI" pmon -c 2 -s mu -i 2,1)
expect_eq "pmon -i 2,1: those GPUs in index order, processes in file order" \
    "1 4242 C+G|1 4243 C|2 77 G|1 4242 C+G|1 4243 C|2 77 G" \
    "$(grep -v '^#' <<<"$out" | awk '{print $1, $2, $3}' | paste -sd'|')"
expect_eq "pmon: command is the base name cut at 15 characters (spaces kept)" "    a very long pro" \
    "$(sed -n 3p <<<"$out" | cut -c79-)"
expect_eq "pmon: value lists cycle per sample (fb, sm)" "200 5|300 6" \
    "$(awk '$2 == 4243 {print $4, $6}' <<<"$out" | paste -sd'|')"
out=$(FAKE_SMI_APPS=$T/apps3 FAKE_SMI_GPUS=3 timeout 5 "$SMI" pmon -c 1 -i 0)
expect_eq "pmon -i 0: only GPU 0's idle row" "0 - -" "$(grep -v '^#' <<<"$out" | awk '{print $1, $2, $NF}' | xargs)"
out=$(timeout 5 "$SMI" pmon -c 1 -i 3); rc=$?
expect_eq "pmon -i of a missing GPU: exit 6" "6 No devices were found" "$rc $out"
out=$(FAKE_SMI_GPUS=0 timeout 5 "$SMI" pmon -c 1); rc=$?
expect_eq "pmon with no GPUs: exit 6" "6 No devices were found" "$rc $out"
for bad in "-d 0" "-d 11" "-d 1.5" "-c 0" "-s x" "-o X" "--bogus"; do
    timeout 5 "$SMI" pmon $bad -c 1 >/dev/null; rc=$?
    expect_eq "pmon $bad: exit 2" 2 "$rc"
done
t0=$(now_ms); env -u FAKE_SMI_PMON_MS timeout 30 "$SMI" pmon -d 1 -c 2 >/dev/null; rc=$?; el=$(($(now_ms) - t0))
expect_eq "pmon -d 1 -c 2: exit 0" 0 "$rc"
check "pmon -d 1 -c 2 waits a period between samples (${el} ms >= 900)" test "$el" -ge 900
# a process appearing (and leaving) while pmon runs: the file is read at every sample
rm -f "$T/live"
FAKE_SMI_APPS=$T/live FAKE_SMI_PMON_MS=100 "$SMI" pmon -s mu >"$T/live.out" & pid=$!; track $pid
check "pmon loop: idle rows first" until_ok 20 grep -q '^    0          -' "$T/live.out"
printf '0 %s C 512 40 3 python3\n' $$ >"$T/live.tmp" && mv "$T/live.tmp" "$T/live"
check "pmon loop: the new process shows up" until_ok 20 grep -q "^    0 *$$ *C *512 " "$T/live.out"
idle_rows() { grep -c '^    0          -' "$T/live.out"; }
more_idle() { test "$(idle_rows)" -gt "$1"; }
rm -f "$T/live"; n=$(idle_rows)
check "pmon loop: idle again once the file is gone" until_ok 20 more_idle "$n"
expect_eq "pmon loop: header printed once" 2 "$(grep -c '^#' "$T/live.out")"
kill $pid
out=$(FAKE_SMI_APPS=$T/apps FAKE_SMI_FAULT_ONLY=pmon FAKE_SMI_EXIT_AFTER=3 timeout 5 "$SMI" pmon -s mu); rc=$?
expect_eq "FAULT_ONLY=pmon EXIT_AFTER=3: exit 1 after 3 rows" "1 3" "$rc $(grep -vc '^#' <<<"$out")"
out=$(FAKE_SMI_FAULT_ONLY=dmon FAKE_SMI_EXIT_AFTER=0 timeout 5 "$SMI" pmon -c 2); rc=$?
expect_eq "FAULT_ONLY=dmon spares pmon" "0 2" "$rc $(grep -vc '^#' <<<"$out")"
out=$(FAKE_SMI_FAULT_ONLY=pmon FAKE_SMI_NVML_ERROR=1 timeout 5 "$SMI" pmon -c 1); rc=$?
expect_eq "FAULT_ONLY=pmon NVML_ERROR: exit 18" 18 "$rc"
FAKE_SMI_HANG_AFTER=1 "$SMI" pmon >"$T/phang.out" & pid=$!; track $pid
sleep 0.5
expect_eq "pmon HANG_AFTER=1: header + 1 row then silence" 3 "$(wc -l <"$T/phang.out")"
kill -TERM $pid
check "pmon HANG_AFTER: SIGTERM ends it" until_ok 20 dead $pid
S2=$T/state2; mkdir -p "$S2"
FAKE_SMI_STATE_DIR=$S2 timeout 5 "$SMI" pmon -c 1 >/dev/null
FAKE_SMI_STATE_DIR=$S2 timeout 5 "$SMI" --query-compute-apps=pid --format=csv >/dev/null
expect_eq "STATE_DIR/pids: kinds pmon and apps" "pmon apps" "$(awk '{print $2}' "$S2/pids" | xargs)"
unset FAKE_SMI_PMON_MS

# compute-apps: the capture listed 654 before 653 (pmon the other way): the file gives the order
export FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load
printf '0 654 C 3656 - - %s\n0 653 C 1860 99 7 %s\n' "$PY" "$PY" >"$T/apps-ca"
export FAKE_SMI_APPS=$T/apps-ca
IFS=, read -r g_name g_bus g_serial g_uuid <<<"$(timeout 5 "$SMI" --query-gpu=name,pci.bus_id,serial,uuid --format=csv,noheader | sed 's/, /,/g')"
# the capture with this fake GPU's identity and the live timestamp blanked
fix_cap() { sed -e "s/GPU-4adacabe-f3e1-f0ef-baf2-66889c9e7c31/$g_uuid/" -e "s/00000000:00:06.0/$g_bus/" \
    -e "s/1753024036681/$g_serial/" -e 's#^2026/11/23 [0-9:.]*, #TS, #' "$1"; }
live_ts() { sed -E 's#^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}, #TS, #'; }
CA=timestamp,gpu_uuid,pid,process_name,used_memory
out=$(timeout 5 "$SMI" --query-compute-apps=$CA --format=csv); rc=$?
expect_eq "compute-apps exits 0" 0 "$rc"
expect_eq "compute-apps: as compute-apps-load.csv (timestamp aside)" "$(fix_cap "$AC/compute-apps-load.csv")" "$(live_ts <<<"$out")"
expect_match "compute-apps: timestamp is now" "^$(date +%Y/%m/%d) [0-9:]{8}\.[0-9]{3}, " "$(sed -n 2p <<<"$out")"
expect_eq "compute-apps: gpu_uuid is --query-gpu's uuid" "$g_uuid" "$(sed -n 2p <<<"$out" | cut -d, -f2 | tr -d ' ')"
out=$(timeout 5 "$SMI" --query-compute-apps=$CA --format=csv,noheader,nounits)
expect_eq "compute-apps noheader,nounits: as the capture" "$(fix_cap "$AC/compute-apps-load-noheader-nounits.csv")" "$(live_ts <<<"$out")"
out=$(timeout 5 "$SMI" --query-compute-apps=gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_memory --format=csv)
expect_eq "compute-apps more fields: as compute-apps-more-fields.csv" "$(fix_cap "$AC/compute-apps-more-fields.csv")" "$out"
out=$(FAKE_SMI_FAULT_ONLY=apps FAKE_SMI_EXIT_AFTER=12 FAKE_SMI_EXIT_CODE=0 timeout 30 "$SMI" --query-compute-apps=$CA --format=csv,nounits -lms 500)
expect_eq "compute-apps -lms 500, 6 periods (12 rows): as compute-apps-load-lms500.csv" "$(fix_cap "$AC/compute-apps-load-lms500.csv")" "$(live_ts <<<"$out")"
expect_eq "compute-apps loop: a period's rows share one timestamp" 6 "$(sed 1d <<<"$out" | cut -d, -f1 | sort -u | wc -l)"
out=$(FAKE_SMI_APPS=$T/no-such-file timeout 5 "$SMI" --query-compute-apps=$CA --format=csv)
expect_eq "compute-apps idle: the header only (compute-apps-idle.csv)" "$(cat "$AC/compute-apps-idle.csv")" "$out"
out=$(FAKE_SMI_APPS=$T/no-such-file timeout 5 "$SMI" --query-compute-apps=$CA --format=csv,noheader); rc=$?
expect_eq "compute-apps idle, noheader: nothing at all, exit 0" "0:" "$rc:$out"
out=$(FAKE_SMI_APPS=$T/no-such-file timeout 3 "$SMI" --query-compute-apps=pid --format=csv -lms 200)
expect_eq "compute-apps idle loop: the header once, then silence" "pid" "$out"
out=$(FAKE_SMI_APPS=$T/apps3 FAKE_SMI_GPUS=3 timeout 5 "$SMI" --query-compute-apps=pid,name,used_gpu_memory --format=csv)
expect_eq "compute-apps: C and C+G processes only, full names; name/used_gpu_memory aliases" \
    "process_name|4242, /usr/bin/a very long process name.bin, 100 MiB|4243, trainer, 200 MiB" \
    "$(paste -sd'|' <<<"$out" | sed 's/^pid, //; s/, used_gpu_memory \[MiB\]//')"
out=$(FAKE_SMI_APPS=$T/apps3 FAKE_SMI_GPUS=3 timeout 5 "$SMI" --query-compute-apps=gpu_uuid,pid --format=csv,noheader -i 2)
expect_eq "compute-apps -i 2: nothing (GPU 2 has only a G process)" "" "$out"
out=$(timeout 5 "$SMI" --query-compute-apps=pid,foo --format=csv); rc=$?
expect_eq "compute-apps unknown field: the real error, exit 2" "2 Field \"foo\" is not a valid field to query." "$rc $out"
out=$(FAKE_SMI_GPUS=0 timeout 5 "$SMI" --query-compute-apps=pid --format=csv); rc=$?
expect_eq "compute-apps with no GPUs: exit 6" "6 No devices were found" "$rc $out"
out=$(FAKE_SMI_EXIT_AFTER=0 timeout 5 "$SMI" --query-compute-apps=pid --format=csv,noheader); rc=$?
expect_eq "compute-apps is not faulted by default" "0 2" "$rc $(wc -l <<<"$out")"
out=$(FAKE_SMI_FAULT_ONLY=apps FAKE_SMI_EXIT_AFTER=3 timeout 5 "$SMI" --query-compute-apps=pid --format=csv,noheader -lms 50); rc=$?
expect_eq "FAULT_ONLY=apps EXIT_AFTER=3: exit 1 after 3 rows" "1 3" "$rc $(wc -l <<<"$out")"
printf '0 1 C 5 5 5 ok\nnot a line\n0 x C 1 1 1 bad pid\n' >"$T/apps-bad"
out=$(FAKE_SMI_APPS=$T/apps-bad timeout 5 "$SMI" --query-compute-apps=pid --format=csv,noheader 2>"$T/bad.err")
expect_eq "malformed FAKE_SMI_APPS lines are skipped" "1" "$out"
expect_eq "...and named on stderr" 2 "$(grep -c 'line [23] ignored' "$T/bad.err")"
unset FAKE_SMI_APPS FAKE_SMI_MODEL

done_testing
