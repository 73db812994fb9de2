#!/usr/bin/env bash
# The workload of the per-process collector benchmark (bench/run.sh, section "record: cost of
# the per-process collector"), run as `runmon record ... -- bash bench/apps_workload.sh`.
# usage: apps_workload.sh APPS_FILE GPUS PER_GPU
# Starts GPUS*PER_GPU `sleep` processes and names them in APPS_FILE (the fake nvidia-smi's
# FAKE_SMI_APPS: `GPU PID TYPE FB SM MEM NAME`), so pmon reports real pids of the workload's
# tree and runmon's in_workload walk runs for each row. SIGINT/SIGTERM (runmon passes its own
# on) end the sleeps and the script.
set -u
apps=$1 gpus=$2 per=$3
pids=()
stop() {
    kill "${pids[@]}" 2>/dev/null
    exit 0
}
trap stop INT TERM
tmp=$apps.tmp.$$
: >"$tmp"
for ((g = 0; g < gpus; g++)); do
    for ((p = 0; p < per; p++)); do
        sleep 3600 & # bounded: never outlives a forgotten benchmark by much
        pids+=("$!")
        echo "$g $! C $((1000 + 500 * p)),$((1100 + 500 * p)) 99,98,98 $((10 + p)) /bin/sleep" >>"$tmp"
    done
done
mv "$tmp" "$apps" # whole file at once: the fake reads it again at every sample
wait
