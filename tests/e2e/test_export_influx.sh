#!/usr/bin/env bash
# runmon record --influx URL / --influx-file PATH against a real InfluxDB 1.x (Debian's
# influxdb: influxd started here on loopback, free ports, a temp config, no systemd): a query
# per measurement returns the rows the session's CSV files hold, none lost, none doubled;
# influxd stopped mid-run and started again: the outage's rows are sent afterwards.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH:/usr/sbin"
export FAKE_SMI_CAPTURES="$FIXTURES/captures"
unset FAKE_SMI_GPUS FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG \
    RUNMON_PHASE_PATH RUNMON_SWEEP SLURM_JOB_ID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + RANDOM % 20000))
}

# --- --influx-file needs no server ---------------------------------------------------------
LP=$T/out.lp
FAKE_SMI_GPUS=2 "$RUNMON" record -q -o "$T/f" -i 0.2 --sweep lp --influx-file "$LP" -- sleep 1.5
expect_eq "--influx-file: runmon exits 0" 0 $?
d=$(session_dir "$T/f")
expect_eq "--influx-file: one runmon_gpu line per gpu.csv row" "$(rows "$d/gpu.csv")" \
    "$(grep -c '^runmon_gpu,' "$LP")"
expect_eq "--influx-file: one runmon_cpu line per cpu.csv row" "$(rows "$d/cpu.csv")" \
    "$(grep -c '^runmon_cpu,' "$LP")"
expect_eq "--influx-file: one runmon_proc line per proc.csv row" "$(rows "$d/proc.csv")" \
    "$(grep -c '^runmon_proc,' "$LP")"
sid=$(basename "$d")
expect_match "--influx-file: tags session, host, sweep; gpu and uuid; ms timestamps" \
    "^runmon_gpu,session=$sid,host=[^ ,]+,sweep=lp,gpu=0,uuid=GPU-[0-9a-f-]+ .*utilization\.gpu=[0-9.]+.* [0-9]{13}$" \
    "$(head -n 1 "$LP")"
# Timestamps in order per measurement and GPU.
ordered=$(awk '{ split($1, a, ","); k = a[1] a[4]; if (last[k] > $NF) bad++; last[k] = $NF } END { print bad + 0 }' "$LP")
expect_eq "--influx-file: timestamps in order per measurement" 0 "$ordered"
# The ms timestamp is the row's ts.
first_ts=$(sed -n 2p "$d/gpu.csv" | cut -d, -f1)
want_ms=$(python3 -c "import datetime,sys; print(int(datetime.datetime.fromisoformat(sys.argv[1]).timestamp()*1000))" "$first_ts")
expect_eq "--influx-file: the time is gpu.csv's ts in milliseconds" "$want_ms" \
    "$(head -n 1 "$LP" | awk '{ print $NF }')"

# SLURM's job as a tag; rows through rollover (several sealed gpu files): none lost.
LP2=$T/roll.lp
SLURM_JOB_ID=77 SLURM_ARRAY_JOB_ID=70 SLURM_ARRAY_TASK_ID=3 FAKE_SMI_GPUS=2 \
    "$RUNMON" record -q -o "$T/r" -i 0.1 --rollover-mb 0.005 --retention-files 0 \
    --retention-total-mb 0 --influx-file "$LP2" -- sleep 2.5
d=$(session_dir "$T/r")
nseg=$(ls "$d"/gpu-*.csv 2>/dev/null | wc -l)
check "rollover: the gpu stream was sealed ($nseg sealed files)" test "$nseg" -ge 1
total=0
for f in "$d"/gpu*.csv; do total=$((total + $(rows "$f"))); done
expect_eq "rollover: one runmon_gpu line per row of every gpu file" "$total" \
    "$(grep -c '^runmon_gpu,' "$LP2")"
expect_eq "an array task's job tag is ARRAYJOB_TASK, its sweep slurm-ARRAYJOB" 1 \
    "$(head -n 1 "$LP2" | grep -c '^runmon_gpu,session=[^,]*,host=[^,]*,job=70_3,sweep=slurm-70,gpu=0,')"

# Bad input: a file that cannot be opened, a URL with a space.
"$RUNMON" record -q -o "$T/bad" --no-gpu --influx-file "$T/no/such/dir/x.lp" --duration 1 2>"$T/bad1"
expect_eq "--influx-file in a missing folder: exit 2" 2 $?
expect_match "--influx-file in a missing folder: a clear message" \
    "^runmon record: --influx-file: cannot open .*/no/such/dir/x.lp: No such file or directory$" \
    "$(cat "$T/bad1")"
# Bad input leaves nothing behind (issue 36 item 5): neither -o's folder nor, in a sink that
# exists, a session folder marked failed.
check "--influx-file that cannot be opened: -o's folder is not made" test ! -e "$T/bad"
mkdir "$T/sinkx"
"$RUNMON" record -q -o "$T/sinkx" --no-gpu --influx-file "$T/no/such/dir/x.lp" -- true 2>/dev/null
expect_eq "--influx-file that cannot be opened, with a command: exit 2" 2 $?
expect_eq "--influx-file that cannot be opened: no session in the sink" "" "$(ls -A "$T/sinkx")"
chmod 0555 "$T/sinkx"
touch "$T/ro.lp" && chmod 0444 "$T/ro.lp"
if [ ! -w "$T/ro.lp" ]; then # root writes anyway
    "$RUNMON" record -q -o "$T/sinkx" --no-gpu --influx-file "$T/ro.lp" -- true 2>"$T/bad3"
    expect_match "--influx-file not writable: exit 2, a clear message" \
        "2 runmon record: --influx-file: cannot open .*ro.lp: Permission denied" "$? $(cat "$T/bad3")"
fi
chmod 0755 "$T/sinkx"
LPN=$T/new.lp
"$RUNMON" record -q -o "$T/sinkx" -i 0.1 --no-gpu --influx-file "$LPN" --duration 0.5
expect_eq "--influx-file that does not exist yet: made, the rows in it" 1 \
    "$([ "$(grep -c '^runmon_cpu,' "$LPN")" -ge 1 ] && echo 1)"
"$RUNMON" record -q -o "$T/bad" --no-gpu --influx 'http://a:b@h :1/write' --duration 1 2>"$T/bad2"
expect_eq "--influx URL with a space: exit 2" 2 $?
expect_eq "--influx URL with a space: a clear message without the password" \
    "runmon record: --influx: the URL 'http://h :1/write' holds a space, a control character or a non-ASCII byte (percent-encode it)" \
    "$(cat "$T/bad2")"

# --- the real server ---------------------------------------------------------------------
if ! command -v influxd >/dev/null 2>&1; then
    echo "ok $((_t_n + 1)) # skip influxd not installed (Debian package influxdb; .ci/deps.sh test)"
    _t_n=$((_t_n + 1))
    done_testing
    exit $?
fi
http_port=$(free_port)
rpc_port=$(free_port)
IDB=$T/influx
mkdir -p "$IDB"
cat >"$IDB/influxdb.conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$rpc_port"
[meta]
  dir = "$IDB/meta"
  logging-enabled = false
[data]
  dir = "$IDB/data"
  wal-dir = "$IDB/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:$http_port"
  log-enabled = false
[continuous_queries]
  enabled = false
EOF
BASE=http://127.0.0.1:$http_port
start_influxd() {
    influxd run -config "$IDB/influxdb.conf" >>"$IDB/log" 2>&1 &
    influx_pid=$!
    track "$influx_pid"
    wait_for "curl -fsS $BASE/ping -o /dev/null" 30
}
check "influxd answers on 127.0.0.1:$http_port" start_influxd
curl -fsS -XPOST "$BASE/query" --data-urlencode 'q=CREATE DATABASE runmon' -o /dev/null
# count(FIELD) of measurement M in session S.
icount() {
    curl -fsS -G "$BASE/query" --data-urlencode db=runmon --data-urlencode \
        "q=SELECT count(\"$2\") FROM \"$1\" WHERE \"session\"='$3'" |
        jq -r '.results[0].series[0].values[0][1] // 0'
}

# One run: every row of every measurement arrives.
FAKE_SMI_GPUS=2 "$RUNMON" record -q -o "$T/s" -i 0.2 --influx "$BASE/write?db=runmon" \
    -- sleep 3 2>"$T/err1"
expect_eq "--influx: runmon exits 0" 0 $?
d=$(session_dir "$T/s")
sid=$(basename "$d")
expect_eq "--influx: runmon_gpu holds gpu.csv's rows" "$(rows "$d/gpu.csv")" \
    "$(icount runmon_gpu utilization.gpu "$sid")"
expect_eq "--influx: runmon_cpu holds cpu.csv's rows" "$(rows "$d/cpu.csv")" \
    "$(icount runmon_cpu usr_pct "$sid")"
expect_eq "--influx: runmon_proc holds proc.csv's rows" "$(rows "$d/proc.csv")" \
    "$(icount runmon_proc nprocs "$sid")"
sum_csv=$(awk -F, 'NR > 1 { s += $9 } END { print s }' "$d/gpu.csv")
sum_db=$(curl -fsS -G "$BASE/query" --data-urlencode db=runmon --data-urlencode \
    "q=SELECT sum(\"memory.used\") FROM runmon_gpu WHERE \"session\"='$sid'" |
    jq -r '.results[0].series[0].values[0][1]')
expect_eq "--influx: the values are gpu.csv's (sum of memory.used)" "$sum_csv" "$sum_db"
ev=$(event_data "$d" export_rows)
expect_eq "--influx: export_rows counts every row sent, none unsent" \
    "$(($(rows "$d/gpu.csv") + $(rows "$d/cpu.csv") + $(rows "$d/proc.csv"))) 0" \
    "$(jq -r '"\(.rows_sent) \(.rows_unsent)"' <<<"$ev")"
expect_eq "--influx: nothing on stderr while the server is well" "" "$(cat "$T/err1")"

# A URL without a path gets /write (and precision=ms).
FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/np" -i 0.2 --influx "$BASE?db=runmon" -- sleep 1
d=$(session_dir "$T/np")
expect_eq "a URL without a path: /write is added, the rows arrive" "$(rows "$d/gpu.csv")" \
    "$(icount runmon_gpu utilization.gpu "$(basename "$d")")"

# Every special character of line protocol (issue 36 item 11): a host ending in a backslash
# (`host=a\,cpu=all` escaped the comma: HTTP 400, no row arrived), a sweep name with a comma,
# a space, `=`, a double quote, backslashes before each of them and at its end; process names
# (a string field) with the same and with a tab and a control byte. influxd reads back every
# tag as it was, but a last backslash, which line protocol cannot end a tag with: it is
# written `\x5c`; control bytes as a terminal shows them (`\t`, `\x01`).
printf '0 653 C 1860 99 7 /opt/x/a,b=c "d"\\ \\\n0 654 C 100 5 1 /opt/x/t\tq\001r\n' >"$T/apps.txt"
SW='s, =\"q\ x\,y\=z\'
RUNMON_HOSTNAME='a\' FAKE_SMI_APPS=$T/apps.txt FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/sp" \
    -i 0.2 --sweep "$SW" --influx "$BASE/write?db=runmon" --influx-file "$T/sp.lp" \
    -- sleep 1.5 2>"$T/err_sp"
expect_eq "special characters: runmon exits 0" 0 $?
d=$(session_dir "$T/sp")
sid=$(basename "$d")
expect_eq "special characters: no request failed (it was HTTP 400)" "0 " \
    "$(count_event "$d" export_failed) $(cat "$T/err_sp")"
expect_eq "special characters: runmon_cpu holds cpu.csv's rows" "$(rows "$d/cpu.csv")" \
    "$(icount runmon_cpu usr_pct "$sid")"
expect_eq "special characters: runmon_gpu holds gpu.csv's rows" "$(rows "$d/gpu.csv")" \
    "$(icount runmon_gpu utilization.gpu "$sid")"
expect_eq "special characters: runmon_apps holds apps.csv's rows" "$(rows "$d/apps.csv")" \
    "$(icount runmon_apps vram_mb "$sid")"
tagvals() {
    curl -fsS -G "$BASE/query" --data-urlencode db=runmon --data-urlencode \
        "q=SHOW TAG VALUES FROM runmon_cpu WITH KEY = \"$1\" WHERE \"session\"='$sid'" |
        jq -r '.results[0].series[0].values[][1]'
}
expect_eq "special characters: host 'a\\' reads back as a\\x5c" 'a\x5c' "$(tagvals host)"
expect_eq "special characters: the sweep reads back exact (its last backslash as \\x5c)" \
    's, =\"q\ x\,y\=z\x5c' "$(tagvals sweep)"
procs=$(curl -fsS -G "$BASE/query" --data-urlencode db=runmon --data-urlencode \
    "q=SELECT process FROM runmon_apps WHERE \"session\"='$sid'" |
    jq -r '[.results[0].series[0].values[][1]] | unique | .[]')
expect_eq "special characters: process names (string field) read back exact, controls escaped" \
    "$(printf '%s\n%s' 'a,b=c "d"\ \' 't\tq\x01r')" "$procs"
# The --influx-file of the same run is what influxd takes, line for line.
curl -fsS -XPOST "$BASE/query" --data-urlencode 'q=CREATE DATABASE lpfile' -o /dev/null
code=$(curl -sS -o "$T/lp_answer" -w '%{http_code}' -XPOST "$BASE/write?db=lpfile&precision=ms" \
    --data-binary @"$T/sp.lp")
expect_eq "special characters: influxd takes the --influx-file's lines (HTTP 204)" 204 "$code"
n_file=$(wc -l <"$T/sp.lp")
n_db=$(curl -fsS -G "$BASE/query" --data-urlencode db=lpfile --data-urlencode \
    'q=SELECT count(usr_pct) FROM runmon_cpu; SELECT count(vram_mb) FROM runmon_apps; SELECT count("utilization.gpu") FROM runmon_gpu; SELECT count(nprocs) FROM runmon_proc' |
    jq '[.results[].series[0].values[0][1] // 0] | add')
expect_eq "special characters: every line of the file is a point" "$n_file" "$n_db"

# influxd stopped mid-run and started again: the outage's rows are sent afterwards.
FAKE_SMI_GPUS=2 "$RUNMON" record -o "$T/o" -i 0.2 --influx "$BASE/write?db=runmon" \
    -- sleep 9 >/dev/null 2>"$T/err2" &
rec=$!
track "$rec"
sleep 2
kill -TERM "$influx_pid"
wait "$influx_pid" 2>/dev/null
sleep 3
check "influxd starts again" start_influxd
wait "$rec"
expect_eq "outage: runmon exits 0" 0 $?
d=$(session_dir "$T/o")
sid=$(basename "$d")
expect_eq "outage: runmon_gpu holds all of gpu.csv's rows" "$(rows "$d/gpu.csv")" \
    "$(icount runmon_gpu utilization.gpu "$sid")"
expect_eq "outage: runmon_cpu holds all of cpu.csv's rows" "$(rows "$d/cpu.csv")" \
    "$(icount runmon_cpu usr_pct "$sid")"
expect_eq "outage: one export_failed and one export_recovered event" "1 1" \
    "$(count_event "$d" export_failed) $(count_event "$d" export_recovered)"
expect_match "outage: a clear line on stderr" \
    "runmon record: --influx http://127.0.0.1:$http_port/write\?\.\.\.: .*\(retrying with back-off" \
    "$(cat "$T/err2")"

# HTTP 4xx: a database that does not exist. The run goes on; the server's words are shown.
FAKE_SMI_GPUS=1 "$RUNMON" record -o "$T/n" -i 0.2 --influx "$BASE/write?db=nosuchdb" \
    -- sleep 1.5 >/dev/null 2>"$T/err3"
expect_eq "HTTP 404: runmon still exits 0" 0 $?
expect_match "HTTP 404: the server's answer in the message" "HTTP 404.*database not found" \
    "$(cat "$T/err3")"
d=$(session_dir "$T/n")
expect_eq "HTTP 404: the rows are on disk all the same" 1 "$([ "$(rows "$d/gpu.csv")" -gt 3 ] && echo 1)"

kill -TERM "$influx_pid" 2>/dev/null
wait "$influx_pid" 2>/dev/null
done_testing
