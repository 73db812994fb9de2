#!/usr/bin/env bash
# The end of a recording waits for writers in trouble once, 1 s in all, however many fail
# (issue 35, item 6): --influx refused with --pushgateway hung, a Pushgateway that is down
# (its only push is the final one), and three writers in trouble at once. Real sockets: a
# port where nothing listens, and a server that accepts and never answers (python3, as in
# test_export_faults.sh). The end is timed from the command's exit to runmon's, against the
# same run without writers.
. "$(dirname "$0")/lib.sh"

export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
unset RUNMON_RUNLOG RUNMON_PHASE_PATH RUNMON_SWEEP

cat >"$T/hang.py" <<'EOF'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c)
EOF
python3 "$T/hang.py" >"$T/port.hang" 2>/dev/null &
track $!
wait_for "test -s '$T/port.hang'" 10
phang=$(cat "$T/port.hang")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pnone=$(free_port)
pnone2=$(free_port)

# end NAME OPTIONS...: records a 1.5 s command; NAME.end gets the seconds from the command's
# exit to runmon's, NAME.rc runmon's status.
end() {
    local name=$1
    shift
    "$RUNMON" record -o "$T/$name" -i 0.2 "$@" -- \
        sh -c "sleep 1.5; date +%s.%N >'$T/$name.exit'; exit 3" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    local t1
    t1=$(date +%s.%N)
    echo "$t1 - $(cat "$T/$name.exit")" | bc >"$T/$name.end"
}
# Within 1 s of the run without writers (0.5 s for the load of the machine on top).
within() { # name
    awk -v e="$(cat "$T/$1.end")" -v b="$(cat "$T/base.end")" 'BEGIN { exit !(e - b < 1.5) }'
}

end base
end refused_hung --influx "http://127.0.0.1:$pnone/write?db=x" --pushgateway "http://127.0.0.1:$phang"
end push_down --pushgateway "http://127.0.0.1:$pnone"
end three --influx "http://127.0.0.1:$phang/write?db=x" --pushgateway "http://127.0.0.1:$pnone2" \
    --influx-file "$T/lines.txt"
b=$(cat "$T/base.end")
for name in refused_hung push_down three; do
    expect_eq "$name: the command's status is runmon's" 3 "$(cat "$T/$name.rc")"
    check "$name: the end waited $(cat "$T/$name.end") s, at most 1 s more than without writers ($b s)" \
        within "$name"
    expect_eq "$name: the session ended failed, exit 3" "failed 3" \
        "$(jq -r '"\(.status) \(.exit_code)"' "$(session_dir "$T/$name")/session.json")"
done
expect_match "refused + hung: the hung final push is said" \
    "--pushgateway http://127.0.0.1:$phang[^ ]*: the final push was not sent" "$(cat "$T/refused_hung.err")"
expect_match "a Pushgateway that is down: said" \
    "--pushgateway http://127.0.0.1:$pnone[^ ]*: .*(refused|connect)" "$(cat "$T/push_down.err")"
check "three: the healthy writer (--influx-file) still wrote its lines" test -s "$T/lines.txt"

done_testing
