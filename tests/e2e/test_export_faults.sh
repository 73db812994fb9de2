#!/usr/bin/env bash
# --pushgateway and --influx against servers that fail: a tiny local HTTP server (python3)
# that answers 500, one that accepts and never answers, and a port where nothing listens.
# The recording is neither failed nor slowed: the command's status is runmon's, the rows
# are on disk at the pace asked for, the end waits a bounded time, and each failure is a
# clear line on stderr and an event in the run log, never with the URL's password.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures"
unset FAKE_SMI_GPUS FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG \
    RUNMON_PHASE_PATH RUNMON_SWEEP

# serve MODE: prints the port; MODE 500 answers every request 500, hang accepts and never
# answers (nor reads).
cat >"$T/srv.py" <<'EOF'
import http.server, socket, sys, threading, time
mode = sys.argv[1]
if mode == "hang":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
    print(s.getsockname()[1], flush=True)
    held = []
    while True:
        c, _ = s.accept(); held.append(c)
class H(http.server.BaseHTTPRequestHandler):
    def handle_one(self):
        n = int(self.headers.get("Content-Length", 0)); self.rfile.read(n)
        body = b"internal trouble\n"
        self.send_response(500); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    do_PUT = do_POST = handle_one
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
EOF
# Started in this shell, not in a $(...) subshell: there `track` would note the pid in the
# subshell's list, and the server outlived the test (one left behind per run).
serve() {
    python3 "$T/srv.py" "$1" >"$T/port.$1" 2>/dev/null &
    track $!
}
serve 500
serve hang
wait_for "test -s '$T/port.500' && test -s '$T/port.hang'" 10
p500=$(cat "$T/port.500")
phang=$(cat "$T/port.hang")
pnone=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# A run of 4 s against each kind of trouble, both writers on.
run() { # name pushgw-port influx-port
    local t0 t1
    t0=$(date +%s.%N)
    FAKE_SMI_GPUS=1 "$RUNMON" record -o "$T/$1" -i 0.2 --sweep f --param k=1 \
        --pushgateway "http://u:pw-$1-secret@127.0.0.1:$2" --push-interval 1 \
        --influx "http://u:pw-$1-secret@127.0.0.1:$3/write?db=x&u=u&p=pw-$1-secret" \
        -- sh -c 'sleep 4; exit 3' >"$T/$1.out" 2>"$T/$1.err"
    echo $? >"$T/$1.rc"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc >"$T/$1.time"
}
for kind in 500 hang none; do
    case $kind in
    500) run e500 "$p500" "$p500" ;;
    hang) run ehang "$phang" "$phang" ;;
    none) run enone "$pnone" "$pnone" ;;
    esac
done
for name in e500 ehang enone; do
    expect_eq "$name: the command's status is runmon's" 3 "$(cat "$T/$name.rc")"
    d=$(session_dir "$T/$name")
    # 4 s at 0.2 s: about 20 rows; a recorder slowed by the network would have far fewer.
    n=$(rows "$d/gpu.csv")
    check "$name: the rows are on disk at the asked pace ($n gpu rows in 4 s)" test "$n" -ge 16
    # The end waits at most 1 s per failing writer: 4 s + 1 + 1 + start and summary.
    secs=$(cat "$T/$name.time")
    check "$name: the run ended in bounded time (${secs} s)" \
        awk -v s="$secs" 'BEGIN { exit !(s < 9) }'
    expect_eq "$name: export_failed events for both writers" "1 1" \
        "$(event_data "$d" export_failed | jq -r .exporter | sort | uniq -c | awk '{ printf "%s ", $1 }' | sed 's/ $//')"
    expect_eq "$name: the session's status is still the command's" failed \
        "$(jq -r .status "$d/session.json")"
    expect_eq "$name: no password on stderr or stdout" 0 \
        "$(cat "$T/$name.err" "$T/$name.out" | grep -c "pw-$name-secret")"
    expect_eq "$name: no password in the session's files" "" \
        "$(grep -rl "pw-$name-secret" "$d")"
done
expect_match "HTTP 500: the message names the writer, the URL without credentials, the answer" \
    "runmon record: --pushgateway http://127.0.0.1:$p500/metrics/job/runmon/sweep@base64/Zg/param_k@base64/MQ: HTTP 500: internal trouble \(retrying with back-off" \
    "$(cat "$T/e500.err")"
expect_match "HTTP 500: --influx's URL is shown without its query (u, p)" \
    "runmon record: --influx http://127.0.0.1:$p500/write\?\.\.\.: HTTP 500" "$(cat "$T/e500.err")"
expect_match "a server that never answers: a time-out" \
    "--pushgateway http://127.0.0.1:$phang/[^ ]*: the final push was not sent \(no answer in [0-9.]+ s, cut at the end of the recording\)" "$(cat "$T/ehang.err")"
expect_match "nothing listening: connection refused" \
    "--influx http://127.0.0.1:$pnone/write\?\.\.\.: .*(refused|connect)" "$(cat "$T/enone.err")"
expect_match "the unsent rows are counted at the end" \
    "--influx http://127.0.0.1:$pnone/write\?\.\.\.: [0-9]+ rows were not sent" "$(cat "$T/enone.err")"
d=$(session_dir "$T/enone")
check "export_rows counts the rows not sent" \
    test "$(event_data "$d" export_rows | jq -r .rows_unsent)" -gt 0

# libcurl is loaded by the HTTP writers only: no other command pays for its libraries.
expect_eq "runmon is not linked against libcurl" 0 "$(ldd "$RUNMON" | grep -c libcurl)"

done_testing
