#!/usr/bin/env bash
# runmon record --pushgateway URL against Debian's prometheus-pushgateway and prometheus on
# loopback (free ports, no systemd): after a 3-run sweep, PromQL through Prometheus's HTTP
# API returns each configuration's figures; a configuration run again keeps its one group;
# --push-interval pushes the live figures, replaced by the final ones (PUT semantics); the
# URL's password is never printed nor written into the session.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures"
unset FAKE_SMI_GPUS FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG \
    RUNMON_PHASE_PATH RUNMON_SWEEP

missing=""
for tool in prometheus-pushgateway prometheus curl jq; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
    echo "ok 1 # skip not installed:$missing (Debian packages prometheus-pushgateway prometheus; .ci/deps.sh test)"
    echo "1..1"
    exit 0
fi

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
        echo $((20000 + RANDOM % 20000))
}
pg=$(free_port)
pp=$(free_port)
prometheus-pushgateway --web.listen-address="127.0.0.1:$pg" --persistence.file="" \
    >"$T/pg.log" 2>&1 &
pg_pid=$!
track "$pg_pid"
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: pushgateway
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:$pg"]
EOF
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$pp" >"$T/prom.log" 2>&1 &
prom_pid=$!
track "$prom_pid"
check "the Pushgateway answers on 127.0.0.1:$pg" \
    wait_for "curl -fsS http://127.0.0.1:$pg/-/ready -o /dev/null" 30
check "Prometheus answers on 127.0.0.1:$pp" \
    wait_for "curl -fsS http://127.0.0.1:$pp/-/ready -o /dev/null" 60

# A URL with a user and password: the gateway ignores them; runmon must never show them.
URL="http://alice:s3cr3tpw@127.0.0.1:$pg"
for lr in 0.1 0.01 0.001; do
    FAKE_SMI_GPUS=2 "$RUNMON" record -o "$T/s" -i 0.2 --sweep lrsweep --param "lr=$lr" \
        --param model=tiny --pushgateway "$URL" -- sleep 1 >>"$T/out" 2>&1
    expect_eq "sweep run lr=$lr exits 0" 0 $?
done
groups() { curl -fsS "http://127.0.0.1:$pg/api/v1/metrics" | jq '[.data[] | select(.labels.sweep == "lrsweep")] | length'; }
expect_eq "three configurations: three groups" 3 "$(groups)"
FAKE_SMI_GPUS=2 "$RUNMON" record -o "$T/s" -i 0.2 --sweep lrsweep --param lr=0.1 \
    --param model=tiny --pushgateway "$URL" -- sleep 1 >>"$T/out" 2>&1
expect_eq "a configuration run again: still three groups, not one per session" 3 "$(groups)"
last=$(session_dir "$T/s")
in_group=$(curl -fsS "http://127.0.0.1:$pg/api/v1/metrics" |
    jq -r '.data[] | select(.labels.param_lr == "0.1") | .runmon_session_info.metrics[0].labels.session')
expect_eq "the group holds the newest session of its configuration" "$(basename "$last")" "$in_group"

# PromQL through Prometheus's HTTP API: each configuration's figures.
q() { curl -fsS -G "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1"; }
promql_lrs() {
    q 'runmon_session_duration_seconds{job="runmon",sweep="lrsweep",param_model="tiny"}' |
        jq -r '[.data.result[].metric.param_lr] | sort | join(" ")'
}
check "PromQL: runmon_session_duration_seconds for each configuration" \
    wait_for '[ "$(promql_lrs)" = "0.001 0.01 0.1" ]' 30
energy=$(q 'count(runmon_gpu_energy_joules_total{sweep="lrsweep"} > 0)' | jq -r '.data.result[0].value[1]')
expect_eq "PromQL: each configuration's energy, per GPU (3 x 2 series)" 6 "$energy"
status=$(q 'runmon_session_info{sweep="lrsweep",param_lr="0.01"}' | jq -r '.data.result[0].metric.status')
expect_eq "PromQL: the final status of lr=0.01" completed "$status"

# Never the password: not on stderr, not in the session's files.
expect_eq "the password is never printed" 0 "$(grep -c s3cr3tpw "$T/out")"
expect_eq "the password is in no file of the sessions" "" "$(grep -rl s3cr3tpw "$T/s" 2>/dev/null)"

# --push-interval: the live figures while running, replaced by the final ones at the end.
FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/p" -i 0.2 --sweep live --pushgateway "$URL" \
    --push-interval 1 -- sleep 4 &
rec=$!
track "$rec"
live() { curl -fsS "http://127.0.0.1:$pg/metrics" | grep -q '^runmon_gpu_utilization_ratio{.*sweep="live"'; }
check "--push-interval: live GPU figures in the group while running" wait_for live 10
wait "$rec"
expect_eq "--push-interval: runmon exits 0" 0 $?
curl -fsS "http://127.0.0.1:$pg/metrics" >"$T/after.txt"
expect_eq "--push-interval: the final push replaced the live series (PUT)" 0 \
    "$(grep -c '^runmon_gpu_utilization_ratio{.*sweep="live"' "$T/after.txt")"
expect_eq "--push-interval: the final status is in the group" 1 \
    "$(grep -c '^runmon_session_info{.*status="completed".*sweep="live"\|^runmon_session_info{.*sweep="live".*status="completed"' "$T/after.txt")"
d=$(session_dir "$T/p")
expect_eq "--push-interval: export_stats says the final push landed" true \
    "$(event_data "$d" export_stats | jq -r '.final_sent')"

# Two parameter names that make one label name (issue 36 item 12): `--param a-b=1 --param
# a_b=5` and `--param a-b=2 --param a_b=5` both pushed to param_a_b="5", one configuration
# replacing the other. Refused before anything is made, with a clear message; so is an empty
# value (to Prometheus an empty label is no label).
for ab in 1 2; do
    FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/clash" -i 0.2 --sweep clash --param "a-b=$ab" \
        --param a_b=5 --pushgateway "$URL" -- true 2>"$T/clash_err"
    expect_eq "param names a-b and a_b (a-b=$ab): exit 2" 2 $?
done
expect_eq "param names a-b and a_b: the message names both and the label" \
    "runmon record: --pushgateway: --param a-b and --param a_b are one label, param_a_b, in the grouping key (a label name holds only letters, digits and _), so two configurations would share one group: rename one of them" \
    "$(cat "$T/clash_err")"
check "param names a-b and a_b: nothing made (no -o folder)" test ! -e "$T/clash"
clash_groups() { curl -fsS "http://127.0.0.1:$pg/api/v1/metrics" | jq '[.data[] | select(.labels.sweep == "clash")] | length'; }
expect_eq "param names a-b and a_b: no group pushed" 0 "$(clash_groups)"
FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/clash" -i 0.2 --sweep clash --param a= \
    --pushgateway "$URL" -- true 2>"$T/clash_err2"
expect_eq "an empty param value with --pushgateway: exit 2, a clear message" \
    "2 runmon record: --pushgateway: --param a= has an empty value, which Prometheus reads as no param_a label at all: give it a value" \
    "$? $(cat "$T/clash_err2")"
# Without --pushgateway the same parameters are recorded (they are two keys of session.json).
FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/clash" -i 0.2 --sweep clash --param a-b=1 \
    --param a_b=5 -- true
expect_eq "param names a-b and a_b without --pushgateway: recorded" '{"a-b":1,"a_b":5}' \
    "$(jq -c .params "$(session_dir "$T/clash")/session.json")"
# Two names that stay apart after the rule (a-b and a.c -> param_a_b and param_a_c): two groups.
for ab in 1 2; do
    FAKE_SMI_GPUS=1 "$RUNMON" record -q -o "$T/clash2" -i 0.2 --sweep clash --param "a-b=$ab" \
        --param a.c=5 --pushgateway "$URL" -- true
done
expect_eq "two configurations whose names stay apart: two groups" 2 "$(clash_groups)"

# Bad input: a URL that is not http(s), --push-interval without --pushgateway.
"$RUNMON" record -o "$T/b" --pushgateway "ftp://bob:pw@x" --duration 1 2>"$T/bad1"
expect_eq "a non-http URL: exit 2" 2 $?
expect_match "a non-http URL: a clear message without the password" \
    "--pushgateway: the URL 'ftp://x' must start with http:// or https://" "$(cat "$T/bad1")"
"$RUNMON" record -o "$T/b" --push-interval 5 --duration 1 2>"$T/bad2"
expect_eq "--push-interval alone: exit 2" 2 $?

kill -TERM "$prom_pid" "$pg_pid" 2>/dev/null
wait "$prom_pid" "$pg_pid" 2>/dev/null
done_testing
