#!/usr/bin/env bash
# Proves a refactor changes nothing a user sees: runs two runmon binaries (before, after) over
# every fixture - `summary` of each session folder, sink and data file (as json, text, csv; by
# its guessed kind and through its --OPTION), `report`, `top --once` and `sessions` - each on
# its own copy of fixtures/ (summaries and sessions may write state), and diffs the outputs,
# exit statuses and stderr. The one field that changes per run (generated_at) is dropped; JSON
# keeps its key order. A case may set environment variables before its arguments.
#   tests/compare_outputs.sh OLD_RUNMON NEW_RUNMON [WORKDIR]
# Prints one line per difference and "N cases, M differ"; exits 1 when any differ.
set -u
old=$(realpath "$1") new=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=${3:-$(mktemp -d)}
mkdir -p "$work"

cases() { # one case per line: arguments, relative to fixtures/
    local d f
    for d in $(cd "$root/fixtures" && find . -name session.json -printf '%h\n' | sort) \
        summary/phase-windows golden/sink sink-0.1.0/sink; do
        for fmt in json text csv; do echo "summary $d --format $fmt"; done
        echo "summary $d --format json --phase ."
        echo "report $d -o OUT.html"
        echo "top --once --width 120 $d"
        # the "(other phases)" row: the phases past a budget of 2 folded into one
        for fmt in json text; do echo "RUNMON_SUMMARY_MAX_PHASES=2 summary $d --format $fmt"; done
    done
    for d in golden/sink sink-0.1.0/sink; do
        for fmt in json text csv; do echo "sessions $d --format $fmt"; done
        echo "sessions $d --format json --summary"
        echo "summary $d --format json --rescan"
    done
    for f in $(cd "$root/fixtures" && find . -type f \( -name '*.csv' -o -name '*.txt' \) | sort); do
        echo "summary $f --format json"
        for o in gpu-csv dmon cpu-csv proc-csv apps-csv; do echo "summary --$o $f --format json"; done
    done
}

run_all() { # $1 = binary, $2 = output folder
    local bin=$1 out=$2 n=0
    rm -rf "$out" && mkdir -p "$out" && cp -a "$root/fixtures" "$out/fixtures"
    while IFS= read -r args; do
        n=$((n + 1))
        local envs=() rest=$args # a case may start with VAR=VALUE words: its environment
        while [[ $rest =~ ^([A-Z_]+=[^ ]*)\ (.*)$ ]]; do
            envs+=("${BASH_REMATCH[1]}")
            rest=${BASH_REMATCH[2]}
        done
        # shellcheck disable=SC2086
        (cd "$out/fixtures" && env TZ=UTC COLUMNS=120 NO_COLOR=1 "${envs[@]}" timeout 60 "$bin" \
            ${rest//OUT/$out\/$n} >"$out/$n.out" 2>"$out/$n.err"
            echo "rc=$?" >>"$out/$n.err")
        sed -i "s|$out|OUT|g" "$out/$n.out" "$out/$n.err"
        # JSON in its own key order (a reader may stream it: the order is part of the output)
        if jq -e . "$out/$n.out" >/dev/null 2>&1; then
            jq 'walk(if type == "object" then del(.generated_at) else . end)' "$out/$n.out" \
                >"$out/$n.tmp" && mv "$out/$n.tmp" "$out/$n.out"
        fi
        [ -f "$out/$n.html" ] && sed -i 's/generated [^<]*//' "$out/$n.html"
        echo "$args" >"$out/$n.args"
    done < <(cases)
    echo "$n"
}

n=$(run_all "$old" "$work/old")
run_all "$new" "$work/new" >/dev/null
bad=0
for i in $(seq 1 "$n"); do
    for ext in out err html; do
        [ -f "$work/old/$i.$ext" ] || [ -f "$work/new/$i.$ext" ] || continue
        if ! cmp -s "$work/old/$i.$ext" "$work/new/$i.$ext"; then
            echo "differs ($ext): $(cat "$work/old/$i.args")"
            bad=$((bad + 1))
        fi
    done
done
echo "$n cases, $bad differ"
[ "$bad" -eq 0 ]
