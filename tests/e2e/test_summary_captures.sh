#!/usr/bin/env bash
# Every real nvidia-smi capture (each GPU model, MIG on and off, idle and load) through
# `runmon summary --gpu-csv` / `--dmon`, against figures computed independently
# (fixtures/summary/gen_expected.py -> fixtures/summary/captures.expected).
. "$(dirname "$0")/lib.sh"

declare -A out
jqkey() { # $1 = key name in captures.expected
    case $1 in
    temp_c_max) echo '.gpus[0].temp_c_max' ;;
    sm_clock_max) echo '.gpus[0].sm_clock_mhz.max' ;;
    samples) echo '.gpus[0].samples' ;;
    *) echo ".$1" ;;
    esac
}
while read -r file key want; do
    if [ -z "${out[$file]:-}" ]; then
        case $file in
        query-gpu*) opt=--gpu-csv ;;
        *) opt=--dmon ;;
        esac
        out[$file]=$("$RUNMON" summary "$opt" "$FIXTURES/captures/$file" --format json 2>"$T/err")
        rc=$?
        expect_eq "$file: exit 0" 0 "$rc"
    fi
    got=$(jq -r "$(jqkey "$key") | if . == null then \"null\" else (. * 1000 | round / 1000) end" <<<"${out[$file]}")
    expect_eq "$file: $key" "$want" "$got"
done <"$FIXTURES/summary/captures.expected"

# MIG: utilization is [N/A] on the parent GPU: missing, never 0, and the row still counts.
j=$("$RUNMON" summary --gpu-csv "$FIXTURES/captures/query-gpu-allfields-h200-mig-590.48.01-linux-load.csv" --format json)
expect_eq "MIG: gpu util is null, not 0" "null" "$(jq -r '.gpus[0].util_pct.mean' <<<"$j")"
expect_eq "MIG: power still counted" "295.01" "$(jq -r '.gpus[0].power_w.mean' <<<"$j")"
expect_eq "MIG: idle_share null without utilization" "null" "$(jq -r '.gpus[0].idle_share' <<<"$j")"
expect_eq "allfields header with units: name read" "NVIDIA H200" "$(jq -r '.gpus[0].name' <<<"$j")"
j=$("$RUNMON" summary --dmon "$FIXTURES/captures/dmon-default-c5-h100-mig-590.48.01-linux-load.txt" --format json)
expect_eq "MIG dmon: sm '-' is missing" "null" "$(jq -r '.gpus[0].util_pct.mean' <<<"$j")"
expect_eq "MIG dmon: 5 samples counted" "5" "$(jq -r '.gpus[0].samples' <<<"$j")"
j=$("$RUNMON" summary --dmon "$FIXTURES/captures/dmon-default-c5-h200-590.48.01-linux-load.txt" --format json)
expect_eq "dmon: mem util source" "dmon" "$(jq -r '.mem_util_source' <<<"$j")"
done_testing
