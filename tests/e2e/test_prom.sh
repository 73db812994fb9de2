#!/usr/bin/env bash
# runmon record --prom-textfile against the real consumers: promtool (the Prometheus
# project's own checker of the text format) and a real prometheus-node-exporter whose
# textfile collector reads the file and serves it on /metrics.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures"
unset FAKE_SMI_GPUS FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG \
    RUNMON_PHASE_PATH

# The real tools are required: a missing one fails loudly instead of skipping.
missing=""
for tool in promtool prometheus-node-exporter curl; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    not_ok "tools for the Prometheus tests are installed" "missing:$missing" \
        "install them with: .ci/deps.sh test  (Debian packages prometheus prometheus-node-exporter curl)"
    done_testing
    exit 1
fi
ok "promtool, prometheus-node-exporter and curl are installed"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + RANDOM % 20000))
}
# An exposition has no line that promtool rejects (it prints nothing and exits 0).
lint() { promtool check metrics <"$1" >"$T/lint.out" 2>&1 || { sed 's/^/#   /' "$T/lint.out"; return 1; }; }

TF=$T/textfile
mkdir -p "$TF"
PROM=$TF/runmon.prom

# --- node_exporter reads the file while runmon records -----------------------------------
port=$(free_port)
ne_args=(--collector.textfile.directory="$TF" --web.listen-address="127.0.0.1:$port")
if prometheus-node-exporter --help 2>&1 | grep -q -- '--collector.disable-defaults'; then
    ne_args+=(--collector.disable-defaults --collector.textfile)
fi
prometheus-node-exporter "${ne_args[@]}" >"$T/ne.log" 2>&1 &
ne_pid=$!
track "$ne_pid"
check "node_exporter answers on 127.0.0.1:$port" \
    wait_for "curl -fsS http://127.0.0.1:$port/metrics -o /dev/null" 15

FAKE_SMI_GPUS=2 FAKE_SMI_DMON_MS=200 "$RUNMON" record -q -o "$T/s" -i 0.2 --prom-textfile "$PROM" \
    -- sh -c 'sleep 0.5; "$0" phase train -- "$0" phase forward -- sleep 3.5; sleep 2.5' "$RUNMON" &
rec_pid=$!
track "$rec_pid"
check "the textfile appears" wait_for "test -s '$PROM'" 20
check "the phase label follows 'runmon phase' inside the command" \
    wait_for "grep -q 'runmon_phase_info{.*phase=\"train/forward\"} 1' '$PROM'" 6
cp "$PROM" "$T/live.prom"
check "promtool accepts the live file" lint "$T/live.prom"
scrape() { curl -fsS "http://127.0.0.1:$port/metrics" >"$T/scrape.txt" 2>/dev/null; }
check "node_exporter serves runmon_gpu_utilization_ratio for gpu 1" \
    wait_for "scrape && grep -q '^runmon_gpu_utilization_ratio{.*gpu=\"1\"' '$T/scrape.txt'" 6
expect_eq "node_exporter reports no textfile error" "0" \
    "$(grep '^node_textfile_scrape_error' "$T/scrape.txt" | awk '{print $2}')"
expect_eq "two GPUs exported" "2" "$(grep -c '^runmon_gpu_power_watts{' "$T/live.prom")"
check "the phase label goes once the phases exit" \
    wait_for "! grep -q 'runmon_phase_info' '$PROM'" 20
wait "$rec_pid"
rc=$?
expect_eq "record exits 0" 0 "$rc"
check "promtool accepts the final file" lint "$PROM"
f=$(cat "$PROM")
expect_match "final file says the session completed" 'runmon_session_info\{[^}]*status="completed"\} 1' "$f"
# The final file keeps the session's final status only (no sample series): the sample checks
# are on the live copy.
l=$(cat "$T/live.prom")
expect_match "GPU metrics carry gpu, uuid, host and session" \
    'runmon_gpu_memory_used_bytes\{gpu="1",uuid="GPU-[^"]+",host="[^"]+",session="[^"]+"\} [0-9]+' "$l"
expect_match "energy is a counter" '# TYPE runmon_gpu_energy_joules_total counter' "$l"
expect_match "energy grew (about 627 W x 3 s when copied)" 'runmon_gpu_energy_joules_total\{gpu="0"[^}]*\} [0-9]{3,}' "$l"
# One energy rule (model/energy.h): the live counter equals `runmon summary` over the same
# rows, the gpu.csv rows up to the live file's last GPU sample. (The exporter may have taken
# its copy between two GPUs' rows of that sample, so a GPU may lack its last row: either total
# counts.)
S=$(readlink -f "$T/s/latest")
last=$(sed -n 's/^runmon_last_sample_timestamp_seconds{collector="gpu".*} \(.*\)$/\1/p' "$T/live.prom")
upto() { # $1 = epoch seconds (ms): gpu.csv's header and its rows up to then
    local iso
    iso=$(date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.%3N)
    awk -F, -v lim="$iso" 'NR == 1 || substr($1, 1, 23) <= lim' "$S/gpu.csv"
}
upto "$last" >"$T/upto.csv"
prev=$(awk -F, 'NR > 1 { t = substr($1, 1, 23); if (t != cur) { p = cur; cur = t } } END { print p }' "$T/upto.csv")
awk -F, -v p="$prev" 'NR == 1 || substr($1, 1, 23) <= p' "$T/upto.csv" >"$T/before.csv"
"$RUNMON" summary --gpu-csv "$T/upto.csv" --interval 0.2 --format json -o "$T/upto.json"
"$RUNMON" summary --gpu-csv "$T/before.csv" --interval 0.2 --format json -o "$T/before.json"
for g in 0 1; do
    pj=$(sed -n "s/^runmon_gpu_energy_joules_total{gpu=\"$g\".*} \(.*\)$/\1/p" "$T/live.prom")
    a=$(jq -r ".gpus[] | select(.index == $g) | .energy_wh" "$T/upto.json")
    b=$(jq -r ".gpus[] | select(.index == $g) | .energy_wh" "$T/before.json")
    check "GPU $g: live Prometheus energy ($pj J) = summary over the same rows ($a Wh, or $b without the last row)" \
        awk -v j="$pj" -v a="$a" -v b="$b" 'function ok(w) { d = j / 3600 - w; if (d < 0) d = -d; return d <= 0.001 * w + 1e-6 }
            BEGIN { exit !(j > 0 && (ok(a) || ok(b))) }'
done
expect_match "live: CPU busy ratio" 'runmon_cpu_busy_ratio\{host="[^"]+",session="[^"]+"\} [0-9.e-]+' "$l"
expect_match "live: process tree memory" 'runmon_process_resident_bytes\{[^}]*\} [0-9]+' "$l"
expect_match "live: the sampling interval for alert rules" 'runmon_sample_interval_seconds\{[^}]*\} 0.2' "$l"
expect_match "live: the critical VRAM ratio for alert rules" 'runmon_vram_threshold_ratio\{level="critical",[^}]*\} 0.98' "$l"
check "final: no sample series left (a finished run never looks current)" \
    test -z "$(grep -E '^runmon_(gpu|cpu|host|process)_|^runmon_phase_info|^runmon_sample_interval' "$PROM")"
expect_match "final: the last sample timestamps stay" \
    'runmon_last_sample_timestamp_seconds\{collector="gpu",[^}]*\} 1[0-9]{9}\.[0-9]{3}' "$f"
expect_match "final: cpu's too" 'runmon_last_sample_timestamp_seconds\{collector="cpu",' "$f"
expect_match "final: phase counter for train/forward" \
    'runmon_phase_completed_total\{path="train/forward",[^}]*\} 1' "$f"
expect_match "final: phase counter for train" 'runmon_phase_completed_total\{path="train",[^}]*\} 1' "$f"
expect_match "final: phase seconds for train/forward (about 3.5 s)" \
    'runmon_phase_seconds_total\{path="train/forward",[^}]*\} 3\.[0-9]{3}' "$f"
expect_match "phase counters are counters" '# TYPE runmon_phase_seconds_total counter' "$f"
expect_match "final: short phases counted by path (train/forward lasted 3.5 s: none)" \
    'runmon_phase_short_total\{path="train/forward",[^}]*\} 0' "$f"
for g in 0 1; do
    check "GPU $g: live energy inside its bar (runmon_gpu_energy_low/high_joules)" awk -v g="$g" '
        $0 ~ "^runmon_gpu_energy_(joules_total|low_joules|high_joules)\\{gpu=\"" g "\"" {
            split($1, n, "{"); v[n[1]] = $2 }
        END { exit !(("runmon_gpu_energy_low_joules" in v) && v["runmon_gpu_energy_low_joules"] <= v["runmon_gpu_energy_joules_total"] &&
                     v["runmon_gpu_energy_joules_total"] <= v["runmon_gpu_energy_high_joules"]) }' "$T/live.prom"
done
expect_eq "all seven collectors up (apps: the per-process collector; io: disks, network; stall: the workload's own stalls)" "gpu=1 dmon=1 cpu=1 proc=1 apps=1 io=1 stall=1" \
    "$(sed -n 's/^runmon_collector_up{collector="\([a-z]*\)".*} \([01]\)$/\1=\2/p' "$PROM" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "every family has HELP and TYPE" \
    "$(grep -v '^#' "$PROM" | sed 's/[{ ].*//' | sort -u)" \
    "$(grep '^# TYPE' "$PROM" | awk '{print $3}' | sort -u)"
expect_eq "the file ends with a newline" "" "$(tail -c 1 "$PROM")"
expect_eq "no temp file left beside it" "runmon.prom" "$(ls "$TF")"
expect_eq "session id label matches the session folder" \
    "$(basename "$(readlink -f "$T/s/latest")")" "$(sed -n 's/^runmon_session_info{.*session="\([^"]*\)".*/\1/p' "$PROM")"

kill -TERM "$ne_pid" 2>/dev/null
wait "$ne_pid" 2>/dev/null
check "node_exporter is stopped" test ! -e "/proc/$ne_pid/status"

# --- a degraded gpu collector: its metrics are removed, collector_up says 0 ---------------
P2=$T/degraded.prom
FAKE_SMI_GPUS=2 FAKE_SMI_NVML_ERROR=1 FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_DMON_MS=200 \
    "$RUNMON" record -q -o "$T/d" -i 0.2 --prom-textfile "$P2" -- sleep 3
rc=$?
expect_eq "degraded: record exits 0" 0 "$rc"
check "degraded: promtool accepts the file" lint "$P2"
f=$(cat "$P2")
check "degraded: no runmon_gpu_utilization_ratio lines" test -z "$(grep runmon_gpu_utilization_ratio "$P2")"
check "degraded: no GPU sample metric at all" test -z "$(grep '^runmon_gpu_' "$P2")"
expect_match "degraded: collector_up{collector=\"gpu\"} 0" 'runmon_collector_up\{collector="gpu",[^}]*\} 0' "$f"
expect_match "degraded: dmon still up" 'runmon_collector_up\{collector="dmon",[^}]*\} 1' "$f"

# A collector that did deliver rows and then went down: its last values are not left stale
# in the live file (the final file has no sample series at all).
P4=$T/went-down.prom
FAKE_SMI_GPUS=2 FAKE_SMI_EXIT_AFTER=4 FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_DMON_MS=200 \
    "$RUNMON" record -q -o "$T/w" -i 0.2 --flush-seconds 0.2 --prom-textfile "$P4" -- sleep 4 &
rec_pid=$!
track "$rec_pid"
check "went down: a live file with gpu down and no GPU sample metric" \
    wait_for "cp '$P4' '$T/wd.prom' 2>/dev/null && grep -q 'runmon_collector_up{collector=\"gpu\".*} 0' '$T/wd.prom' && ! grep -q '^runmon_gpu_' '$T/wd.prom'" 8
check "went down: promtool accepts it" lint "$T/wd.prom"
wait "$rec_pid"
expect_eq "went down: record exits 0" 0 "$?"
s=$(readlink -f "$T/w/latest")
check "went down: gpu rows were recorded before" test "$(wc -l <"$s/gpu.csv")" -ge 3
check "went down: no GPU sample metric in the final file" test -z "$(grep '^runmon_gpu_' "$P4")"

# --- missing values are left out, never 0 (the live file) ----------------------------------
P3=$T/missing.prom
FAKE_SMI_GPUS=1 FAKE_SMI_OVERRIDE='power.draw=[N/A]' FAKE_SMI_DMON_MS=200 \
    "$RUNMON" record -q -o "$T/m" -i 0.2 --flush-seconds 0.2 --prom-textfile "$P3" --duration 3 &
rec_pid=$!
track "$rec_pid"
check "missing: the live file has utilization" \
    wait_for "cp '$P3' '$T/ml.prom' 2>/dev/null && grep -q '^runmon_gpu_utilization_ratio{gpu=\"0\"' '$T/ml.prom'" 8
check "missing: promtool accepts the file" lint "$T/ml.prom"
check "missing: [N/A] power gives no power line" test -z "$(grep '^runmon_gpu_power_watts' "$T/ml.prom")"
check "missing: ... and no energy" test -z "$(grep '^runmon_gpu_energy' "$T/ml.prom")"
check "missing: no process metrics without a command" test -z "$(grep '^runmon_process_' "$T/ml.prom")"
wait "$rec_pid"
expect_eq "missing: record exits 0" 0 "$?"

# --- SIGKILL: the file stays as it was, and its timestamp shows how old it is ---------------
P5=$T/killed.prom
FAKE_SMI_GPUS=1 FAKE_SMI_DMON_MS=200 \
    "$RUNMON" record -q -o "$T/k" -i 0.2 --flush-seconds 0.2 --prom-textfile "$P5" -- sleep 30 &
rec_pid=$!
track "$rec_pid"
check "killed: a live file with GPU samples" \
    wait_for "grep -q '^runmon_gpu_utilization_ratio' '$P5' 2>/dev/null" 10
for p in $(pgrep -P "$rec_pid" -x sleep); do track "$p"; done # the workload outlives runmon
kill -KILL "$rec_pid"
wait "$rec_pid" 2>/dev/null
cp "$P5" "$T/k1.prom"
sleep 0.6
expect_eq "killed: the file is not rewritten" "" "$(cmp "$P5" "$T/k1.prom" 2>&1)"
expect_match "killed: it still says running" 'runmon_session_info\{[^}]*status="running"\} 1' "$(cat "$P5")"
ts=$(sed -n 's/^runmon_last_sample_timestamp_seconds{collector="gpu".*} \(.*\)$/\1/p' "$P5")
check "killed: time() - runmon_last_sample_timestamp_seconds > 3 * 0.2 s" \
    awk -v t="$ts" -v now="$(date +%s.%N)" 'BEGIN { exit !(t > 0 && now - t > 0.6) }'

# --- options ------------------------------------------------------------------------------
"$RUNMON" record -q -o "$T/e" --prom-textfile "" -- true 2>"$T/e.err"
expect_eq "an empty --prom-textfile is refused with 2" 2 "$?"
"$RUNMON" record --help >"$T/help.txt"
expect_match "--help lists --prom-textfile" "--prom-textfile PATH" "$(cat "$T/help.txt")"
"$RUNMON" record -o "$T/u" -i 0.2 --no-gpu --prom-textfile "$T/no/such/dir/x.prom" -- sleep 0.3 \
    2>"$T/u.err"
expect_eq "an unwritable textfile does not stop the recording" 0 "$?"
expect_eq "... and is reported once" 1 "$(grep -c 'cannot write .*x.prom' "$T/u.err")"

done_testing
