#!/usr/bin/env bash
# Issue 20 §3: the page that compares the runs of a sweep (`runmon report S1 S2 ...`, `runmon
# report --sweep NAME`): a 3-run sweep recorded on the fake nvidia-smi, a 30-run and a 60-run
# sweep cloned from a recording (bench/gen_sweep.py), measured in a real Chromium at 390 px and
# 1400 px (tests/e2e/sweep_check.js): no overlapping labels, charts >= 150 px tall, a scroll cue
# on tables that scroll, a legend click hides a run, a header click sorts the table.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
count() { grep -o -- "$1" "$2" | wc -l; }

# --- three runs recorded, each with its own GPU figures ---------------------------------------
R=$RUNMON_REL
K=$T/sweep
# Issue 39: each run logs 20 `metric` lines with `runmon log metric` (steps 0, 10, ... 190: loss
# falling faster the larger MI, accuracy rising) and its objective (acc:max).
cat >"$T/metrics.sh" <<'EOS'
awk -v mi="$MI" 'BEGIN { for (s = 0; s < 20; s++) printf "%d %.4f %.4f\n", 10 * s, 2.3 / (1 + s * mi), 0.5 + 0.02 * s * mi }' |
    while read -r s l a; do "$RUNMON_REL" log metric --step "$s" loss="$l" acc="$a" || exit 1; done
"$RUNMON_REL" log objective acc:max
EOS
i=0
for lr in 0.1 0.01 0.001; do
    i=$((i + 1))
    ov="memory.used=$((20000 * i)),$((21000 * i)),$((22000 * i));utilization.gpu=$((30 * i)),$((25 * i)),$((28 * i));power.draw=$((200 * i)).00,$((210 * i)).00"
    PATH="$FAKEBIN:$SYSPATH" FAKE_SMI_GPUS=1 FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_OVERRIDE="$ov" MI=$i RUNMON_REL=$R \
        "$RUNMON" record -q -o "$K" -i 0.2 --sweep lr-sweep --param lr="$lr" --param opt=adam -- \
        sh -c "sh '$T/metrics.sh'; '$R' phase train -- sleep 0.8; '$R' phase eval -- sleep 0.4" train --lr "$lr"
    expect_eq "record run $i (--sweep lr-sweep --param lr=$lr) exits 0" 0 "$?"
done
# A run of no sweep beside them.
PATH="$FAKEBIN:$SYSPATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" "$RUNMON" record -q -o "$K" -i 0.2 -- sleep 0.3
mapfile -t S < <(jq -r 'select(.sweep == "lr-sweep") | .session_id' "$K"/2*/session.json | sed "s#^#$K/#")
expect_eq "three sessions of the sweep" 3 "${#S[@]}"

out=$("$RUNMON" report --sweep lr-sweep "$K" 2>"$T/err"); rc=$?
expect_eq "report --sweep NAME SINK exits 0" 0 "$rc"
expect_eq "... writes SINK/sweep-NAME.html by default and prints it" "$K/sweep-lr-sweep.html" "$out"
p=$K/sweep-lr-sweep.html
check "the page exists" test -s "$p"
out=$(cd "$K" && "$RUNMON" report --sweep lr-sweep -o "$T/here.html"); rc=$?
expect_eq "--sweep without a SINK: the current directory" "0 $T/here.html" "$rc $out"
cmp -s "$p" "$T/here.html"
expect_eq "the same runs give the same page" 0 "$?"
expect_eq "the sweep table: a row per run of the sweep (not the other run)" 3 "$(sed -n '/id="t-sweep"/,/<\/section>/p' "$p" | grep -c '<tr data-run=')"
expect_eq "the recorded parameters are the columns, in order" "lr opt" "$(grep -o 'data-type="param">[^<]*' "$p" | sed 's/.*>//' | xargs)"
check "... not said to be inferred" test -z "$(grep -o 'inferred:' "$p")"
check "the header names the sweep" grep -q '<h1>runmon sweep &#8212; lr-sweep</h1>' "$p"
for lr in 0.1 0.01 0.001; do
    check "the legend names the run lr=$lr opt=adam" grep -q "&#183; lr=$lr opt=adam</button>" "$p"
done
for x in 0 1 2; do
    e=$(jq -r '.totals.energy_wh' "${S[$x]}/summary.json")
    check "run $((x + 1)): its energy from its summary.json ($e Wh)" grep -Eq "<td data-v=\"$e\"[ >]" "$p"
done
check "numbers sort as numbers (data-v)" grep -q '<td class="t" data-v="0.001">0.001</td>' "$p"
for x in 0 1 2; do
    read -r lo hi <<<"$(jq -r '.totals | "\(.energy_wh_low) \(.energy_wh_high)"' "${S[$x]}/summary.json")"
    check "run $((x + 1)): its energy's error bar in the table's title ($lo-$hi Wh, issue 22)" \
        grep -q "title=\"error bar $(awk -v v="$lo" 'BEGIN { printf "%.4f", v }')&#8211;$(awk -v v="$hi" 'BEGIN { printf "%.4f", v }') Wh\">" "$p"
done
expect_eq "an energy whisker on each run's bar" 3 "$(sed -n '/id="b-energy"/,/<\/section>/p' "$p" | grep -o '<span class="wk"' | wc -l)"
expect_eq "four bar panels of three bars" "4 12" "$(count '<section class="panel bars"' "$p") $(count '<div class="br"' "$p")"
check "VRAM bars against the GPU's total (140.4 GiB)" grep -Eq '<span class="bv">[0-9.]+ / 140.4 GiB \([0-9]+%\)</span>' "$p"
expect_eq "three charts: VRAM, utilization, power" "c-vram c-util c-power" "$(grep -o '<section class="panel" id="c-[a-z]*"' "$p" | sed 's/.*id="//; s/"//' | xargs)"
for c in vram util power; do
    expect_eq "$c chart: a line of each run" "0 1 2" "$(grep -o "<section class=\"panel\" id=\"c-$c\">.*</section>" "$p" | grep -o '<polyline data-run="[0-9]*"' | sed 's/.*="//; s/"//' | sort -u | xargs)"
done
# Run 3's memory (60000-66000 MiB) tops the scale, run 1's (20000-22000) sits at a third.
top=$(grep -o '<section class="panel" id="c-vram">.*</section>' "$p" | grep -o '<span style="top:0%">[^<]*' | sed 's/.*>//')
expect_eq "the VRAM scale holds the largest run (64.5 GiB: a round top)" "80 GiB" "$top"
expect_eq "phase table: train and eval of each run" 6 "$(sed -n '/id="t-phases"/,/<\/section>/p' "$p" | grep -c '<tr data-run=')"
# Issue 22: each phase's energy with its bar (summary.json's phase figures), short phases marked.
# Numbers are formatted by awk, in doubles as the page's C does: bash's printf rounds in long
# double, so 0.0225 (0.022499... as a double) printed 0.023 where the page prints 0.022.
# The bar's half-width is rounded once from the full double (awk's print goes through %.6g
# first: 0.00249999 -> 0.0025 -> 0.003, where the page prints 0.002).
# The phases in the run's order (issue 36: as summary.json lists them, not by name).
want=$(jq -r '.phases | .[] | select(.energy_wh_low != null) | "\(.energy_wh) \(.energy_wh_low) \(.energy_wh_high) \(.short_phase)"' "${S[0]}/summary.json" |
    while read -r e lo hi sh; do
        printf '<td data-v="%s" title="error bar %s&#8211;%s Wh">%s%s<small> &#177;%s</small></td>\n' "$e" \
            "$(awk -v v="$lo" 'BEGIN { printf "%.4f", v }')" "$(awk -v v="$hi" 'BEGIN { printf "%.4f", v }')" \
            "$(awk -v v="$e" 'BEGIN { printf "%.3f", v }')" \
            "$([ "$sh" = true ] && echo '<span class="short" title="short phase: shorter than 2 sensor windows or 3 samples; its energy is mostly the sensor'"'"'s smear">~</span>')" \
            "$(awk -v e="$e" -v l="$lo" -v h="$hi" 'BEGIN { a = e - l; b = h - e; printf "%.3f", (a > b ? a : b) }')"
    done)
got=$(sed -n '/id="t-phases"/,/<\/section>/p' "$p" | grep 'data-run="0"' | grep -o '<td data-v="[^"]*" title="error bar[^>]*>.*</td>' | sed 's,</td>.*,</td>,')
expect_eq "phase table: run 1's phases' energy with its bar (as its summary.json's)" "$want" "$got"
# Issue 39 §3: the metric curves, by step and by time, a line per run in its colour and dash.
expect_eq "metric charts: acc (the objective's) first, then loss" "acc loss" "$(grep -o '<section class="panel metric" id="m-[0-9]*" data-metric="[^"]*"' "$p" | sed 's/.*data-metric="//; s/"//' | xargs)"
for m in loss acc; do
    sec=$(grep -o "<section class=\"panel metric\" id=\"m-[0-9]\" data-metric=\"$m\">.*</section>" "$p" | sed 's,</section>.*,,')
    expect_eq "$m: a chart by step and one by time" "step time" "$(grep -o 'data-metric-axis="[a-z]*"' <<<"$sec" | sed 's/.*="//; s/"//' | xargs)"
    expect_eq "$m: a line of each run in each chart" "0 1 2 0 1 2" "$(grep -o '<polyline data-run="[0-9]*"' <<<"$sec" | sed 's/.*="//; s/"//' | xargs)"
    expect_eq "$m: by step up to the last step (190)" 1 "$(grep -c 'data-metric-axis="step" data-max-x="190"' <<<"$sec")"
    check "$m: run 2 in run 2's colour" grep -q '<polyline data-run="1" stroke="#f28e2b" points=' <<<"$sec"
done
# Run 1's loss by step: 2.3 at step 0, the scale 0-3 (a round range): y = 100 - 100 x 2.3 / 3.
expect_match "loss by step: run 1 starts at (0, 23.33)" '<polyline data-run="0" stroke="#4e79a7" points="0.0,23.33 52.6,' "$(grep -o '<section class="panel metric" id="m-1" data-metric="loss".*' "$p")"
# Issue 39 §3: the Pareto chart of the run log's objective (acc, its last value: 0.88, 1.26,
# 1.64) against energy (each run costs more and achieves more: all three on the front).
expect_eq "Pareto: one chart, of the run log's objective acc" '<section class="panel pareto" id="pareto-0" data-objective="acc">' "$(grep -o '<section class="panel pareto"[^>]*>' "$p")"
par=$(grep -o '<section class="panel pareto" id="pareto-0".*' "$p" | sed 's,</section>.*,,')
check "... against energy, in Wh" grep -q 'against energy <span class="unit">(Wh)</span>' <<<"$par"
expect_eq "... a point per run, each on the front" "on on on" "$(grep -o '<button type="button" class="pt [a-z]*"' <<<"$par" | sed 's/.*pt //; s/"//' | xargs)"
expect_eq "... an energy error bar per run" 3 "$(grep -o '<span class="eb"' <<<"$par" | wc -l)"
check "... the front drawn through them" grep -Eq '<polyline class="front" points="[0-9., ]+"/>' <<<"$par"
check "... a point names its run by its parameters, value and cost" grep -Eq 'title="1 &#183; lr=0.1 opt=adam: acc 0.88, energy [0-9.]+ \([0-9.]+&#8211;[0-9.]+\) Wh, on the front"' <<<"$par"
check "... the metric charts start with the objective's metric" test "$(grep -o 'data-metric="[^"]*"' "$p" | head -1)" = 'data-metric="acc"'
# Parallel coordinates: the parameters, the objective, then the costs; a line per run.
expect_eq "parallel coordinates: axes" "lr|opt|acc (max)|duration|peak VRAM|energy" "$(grep -o '<span class="pn"[^>]*>[^<]*' "$p" | sed 's/.*>//; s/ $//' | paste -sd'|')"
expect_eq "... a line per run" "0 1 2" "$(grep -o '<path data-run="[0-9]*"' "$p" | sed 's/.*="//; s/"//' | xargs)"
check "... run 1's lr (0.1) at the top of its axis, its opt (one category) in the middle" grep -q '<path data-run="0" stroke="#4e79a7" data-y="0.00 50.00 ' "$p"
# --objective and --cost on the command line (the rows judged as the sweep table judges them,
# sweep/sweep_judge.h) win over the run log's objective.
"$RUNMON" report --sweep lr-sweep "$K" --objective loss:min:best --cost duration -o "$T/obj.html" >/dev/null; rc=$?
expect_eq "--objective loss:min:best --cost duration: exit 0" 0 "$rc"
expect_eq "... one chart: loss, its best value, against duration" 1 "$(grep -c '<section class="panel pareto" id="pareto-0" data-objective="loss"><h3>loss <span class="unit">(lower is better, best value)</span> against duration <span class="unit">(s)</span>' "$T/obj.html")"
expect_eq "... no other" 1 "$(grep -o '<section class="panel pareto"' "$T/obj.html" | wc -l)"
expect_eq "... no error bar on a duration" 0 "$(grep -c '<span class="eb"' "$T/obj.html")"
"$RUNMON" report --sweep lr-sweep "$K" --objective nope:max -o "$T/nope.html" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "an objective no run logged: exit 2, nothing written" "2 no" "$rc $([ -e "$T/nope.html" ] && echo yes || echo no)"
expect_eq "... naming the metrics logged" "runmon report: --objective nope:max: no run logged metric 'nope' (the runs' metrics: loss, acc)" "$(cat "$T/err")"
"$RUNMON" report --sweep lr-sweep "$K" --objective 'acc:up' 2>"$T/err"; rc=$?
expect_match "a bad objective: exit 2, saying why" "^2 runmon report: .*acc:up" "$rc $(cat "$T/err")"
"$RUNMON" report --sweep lr-sweep "$K" --cost joules 2>"$T/err"; rc=$?
expect_match "a bad cost: exit 2, naming the costs" "^2 runmon report: --cost: cost 'joules': expected .*gpu_hours" "$rc $(cat "$T/err")"
"$RUNMON" report "${S[0]}" --objective acc:max 2>"$T/err"; rc=$?
expect_match "--objective with one session: exit 2" "^2 runmon report: --objective, --cost and --target compare runs" "$rc $(cat "$T/err")"
expect_eq "self-contained: no http(s) reference" 0 "$(grep -Eci '(src|href)="(https?:)?//' "$p")"
expect_eq "one script element" 1 "$(count '<script' "$p")"
check "the legend rule is stated" grep -q '10 colours, then 5 dash styles: up to 50 runs' "$p"

# The same runs as session paths, their parameters forgotten (session.json and summary.json):
# inferred from the commands.
mkdir -p "$T/plain"
for d in "${S[@]}"; do
    cp -r "$d" "$T/plain/"
    for f in session.json summary.json; do
        jq -c 'del(.params, .sweep)' "$d/$f" >"$T/plain/$(basename "$d")/$f"
    done
done
out=$(cd "$T" && "$RUNMON" report "$T/plain"/2*/ 2>"$T/err"); rc=$?
expect_eq "report S1 S2 S3 exits 0" 0 "$rc"
expect_eq "... writes ./sweep.html by default and prints it" "sweep.html" "$out"
check "a parameter column inferred from the commands: lr" grep -q '<th class="t" data-type="param">lr</th>' "$T/sweep.html"
check "... said to be inferred" grep -q 'parameters: lr (inferred: the command-line arguments that differ' "$T/sweep.html"
expect_eq "... and no column for what every run shares (sh -c SCRIPT, train)" 1 "$(count 'data-type="param"' "$T/sweep.html")"
check "... the legend names runs by it" grep -q '&#183; lr=0.01</button>' "$T/sweep.html"

# Parameters stored in session.json (as record --param writes them) win over the commands.
cp -r "$T/plain" "$T/stored"
n=0
for d in "$T/stored"/2*/; do
    n=$((n + 1))
    jq -c --argjson b $((32 * n)) '.params = {"batch": $b, "opt": "adam"}' "$d/session.json" >"$d/s" && mv "$d/s" "$d/session.json"
done
"$RUNMON" report "$T/stored"/2*/ -o "$T/stored.html" >/dev/null; rc=$?
expect_eq "stored params: exit 0" 0 "$rc"
expect_eq "stored params: their columns, in order" "batch opt" "$(grep -o 'data-type="param">[^<]*' "$T/stored.html" | sed 's/.*>//' | xargs)"
check "stored params: not said to be inferred" test -z "$(grep -o 'inferred:' "$T/stored.html")"
check "stored params: numbers stay numbers (data-v)" grep -q '<td class="t" data-v="64">64</td>' "$T/stored.html"

# Parameters from the run log (runmon.params in Python: summary.json's "params"), under --param.
cp -r "$T/plain" "$T/py"
n=0
for d in "$T/py"/2*/; do
    n=$((n + 1))
    jq -c --argjson s $n '.params = {"seed": $s, "lr": 9}' "$d/summary.json" >"$d/s" && mv "$d/s" "$d/summary.json"
done
jq -c '.params = {"lr": 0.5}' "$(ls -d "$T/py"/2*/ | head -1)/session.json" >"$T/s" && mv "$T/s" "$(ls -d "$T/py"/2*/ | head -1)/session.json"
"$RUNMON" report "$T/py"/2*/ -o "$T/py.html" >/dev/null; rc=$?
expect_eq "run-log params: exit 0" 0 "$rc"
expect_eq "run-log params: their columns" "seed lr" "$(grep -o 'data-type="param">[^<]*' "$T/py.html" | sed 's/.*>//' | xargs)"
check "run-log params: --param wins on its key" grep -q '&#183; seed=1 lr=0.5</span>' "$T/py.html"
check "run-log params: the others keep the run log's" grep -q '&#183; seed=2 lr=9</span>' "$T/py.html"

# --- bad input -----------------------------------------------------------------------------
"$RUNMON" report "${S[0]}" "$T/nonexistent" -o "$T/x.html" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "a missing path among several exits 2" 2 "$rc"
expect_match "... naming it" "nonexistent" "$(cat "$T/err")"
check "... and writes nothing" test ! -e "$T/x.html" -a ! -s "$T/out"
"$RUNMON" report "${S[0]}" "${S[1]}" --session x 2>"$T/err"; rc=$?
expect_eq "--session with several paths exits 2" 2 "$rc"
"$RUNMON" report --sweep "" 2>"$T/err"; rc=$?
expect_eq "--sweep '' exits 2" 2 "$rc"
"$RUNMON" report --sweep nosuch "$K" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "--sweep of no session exits 2" 2 "$rc"
expect_eq "... saying so, writing nothing" "runmon report: no sessions in sweep 'nosuch' 0" "$(cat "$T/err") $(find "$K" -name 'sweep-nosuch*' | wc -l)"
"$RUNMON" report --sweep lr-sweep "$T/nonexistent" 2>"$T/err"; rc=$?
expect_eq "--sweep with a missing sink exits 2" 2 "$rc"
"$RUNMON" report --sweep $'a\x1b[31m' "$K" 2>"$T/err"; rc=$?
expect_eq "--sweep with control bytes: exit 2, no raw escape on the terminal" "2 0" "$rc $(grep -c $'\x1b' "$T/err")"
mkdir -p "$T/notses"
"$RUNMON" report "${S[0]}" "$T/notses" 2>"$T/err"; rc=$?
expect_eq "a folder that is no session exits 2" 2 "$rc"
# Markup in a parameter's name and value, and in a host: text on the page.
cp -r "$T/plain" "$T/hostile"
for d in "$T/hostile"/2*/; do
    jq -c '.params = {"<b>k</b>": "<script>alert(1)</script>"} | .host = "h<img src=x>"' "$d/session.json" >"$d/s" && mv "$d/s" "$d/session.json"
done
"$RUNMON" report "$T/hostile"/2*/ -o "$T/hostile.html" >/dev/null; rc=$?
expect_eq "hostile params: exit 0" 0 "$rc"
expect_eq "hostile params: no raw markup" 0 "$(grep -Ec '<(b|img)[ >]|<script>alert' "$T/hostile.html")"
check "hostile params: the value is text" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/hostile.html"

# --- 30 and 60 runs, cloned from run 1 -------------------------------------------------------
python3 "$ROOT/bench/gen_sweep.py" --template "${S[0]}" --dest "$T/g30" --count 30 >/dev/null
expect_eq "30 runs generated" 30 "$(find "$T/g30" -maxdepth 1 -name '2*' | wc -l)"
"$RUNMON" report "$T/g30"/2*/ -o "$T/g30.html" >/dev/null; rc=$?
expect_eq "30 runs: exit 0" 0 "$rc"
expect_eq "30 runs: a legend entry each, every one drawn" "30 30" "$(count '<button type="button" class="run"' "$T/g30.html") $(grep -o '<section class="panel" id="c-util">.*</section>' "$T/g30.html" | grep -o '<polyline data-run="[0-9]*"' | sort -u | wc -l)"
sty=$(grep -o '<polyline data-run="\(0\|10\|20\)" [^>]*points' "$T/g30.html" | sed 's/ points$//; s/data-run="[0-9]*" //' | sort -u)
expect_eq "30 runs: runs 1, 11 and 21 share a colour, each in its own dash style" "1 3" "$(grep -o 'stroke="[^"]*"' <<<"$sty" | sort -u | wc -l) $(wc -l <<<"$sty")"
python3 "$ROOT/bench/gen_sweep.py" --template "${S[0]}" --dest "$T/g60" --count 60 >/dev/null
"$RUNMON" report "$T/g60"/2*/ -o "$T/g60.html" >/dev/null; rc=$?
expect_eq "60 runs: exit 0" 0 "$rc"
expect_eq "60 runs: the table and bars of every run" "60 240" "$(sed -n '/id="t-sweep"/,/<\/section>/p' "$T/g60.html" | grep -o '<tr data-run=' | wc -l) $(count '<div class="br"' "$T/g60.html")"
expect_eq "60 runs: no chart, legend or phase table" 0 "$(grep -Ec '<svg class="chart"|id="legend"|id="t-phases"' "$T/g60.html")"
check "60 runs: a line says why" grep -q '<p class="note" id="nodraw">60 runs: the overlaid series and the phase table are left out above 50 runs' "$T/g60.html"
# Downsampling: 100 times the samples, the same page size within 2 %, at most 600 points a line.
python3 "$ROOT/bench/gen_sweep.py" --template "${S[0]}" --dest "$T/long" --count 3 --samples 100 >/dev/null
python3 "$ROOT/bench/gen_sweep.py" --template "${S[0]}" --dest "$T/short" --count 3 >/dev/null
"$RUNMON" report "$T/long"/2*/ -o "$T/long.html" >/dev/null
"$RUNMON" report "$T/short"/2*/ -o "$T/short.html" >/dev/null
ls_=$(wc -c <"$T/long.html") ss=$(wc -c <"$T/short.html")
check "100 x the samples: the page's size stays ($ss -> $ls_ bytes)" test "$ls_" -lt $((ss * 102 / 100))
mx=$(grep -o 'points="[^"]*"' "$T/long.html" | awk '{ print NF }' | sort -n | tail -1)
check "at most 600 points a line ($mx)" test "$mx" -le 600

# Issue 39: metric lines downsampled in C: 32 x the lines, the same page size within 2 %, at
# most 200 points a curve (100 buckets keeping their lowest and highest value, their width
# doubled as the steps grow: 1,600 and 51,200 steps both fill the 100 buckets).
mlines() { # DIR N: N metric lines (loss, acc) over steps 0..N-1 appended to DIR's run log
    awk -v n="$2" 'BEGIN { for (s = 0; s < n; s++)
        printf "{\"ts\":\"x\",\"type\":\"metric\",\"step\":%d,\"values\":{\"loss\":%.6f,\"acc\":%.6f},\"pid\":1,\"t\":%.3f}\n",
            s, 2 / (1 + s / 100) + (s % 7) / 100, s / (n + 1), 1795256100 + s / 1000 }' >>"$1/runlog.jsonl"
}
for k in 1600 51200; do
    rm -rf "$T/ml$k" && mkdir -p "$T/ml$k"
    for x in 0 1; do cp -r "${S[$x]}" "$T/ml$k/"; done
    for d in "$T/ml$k"/2*/; do
        grep -Ev '"type":"(metric|objective)"' "$d/runlog.jsonl" >"$d/r" && mv "$d/r" "$d/runlog.jsonl"
        jq -c 'del(.metrics, .objectives)' "$d/summary.json" >"$d/s" && mv "$d/s" "$d/summary.json"
        mlines "$d" "$k"
    done
    "$RUNMON" report "$T/ml$k"/2*/ -o "$T/ml$k.html" >/dev/null
    expect_eq "$k metric lines a run: exit 0" 0 "$?"
done
ms=$(wc -c <"$T/ml1600.html") ml=$(wc -c <"$T/ml51200.html")
check "32 x the metric lines: the page's size stays ($ms -> $ml bytes)" test "$ml" -lt $((ms * 102 / 100))
check "no objective anywhere: no Pareto chart, a line says how to get one" grep -q '<p class="note" id="nopareto">No objective: no Pareto chart. Name one with <code>--objective METRIC:max</code>' "$T/ml1600.html"
mx=$(grep -o '<svg class="chart mchart".*' "$T/ml51200.html" | grep -o 'points="[^"]*"' | awk '{ print NF }' | sort -n | tail -1)
check "at most 200 points a metric curve ($mx)" test "$mx" -le 200
expect_eq "... and the curves end at the last step" 2 "$(grep -o 'data-metric-axis="step" data-max-x="51199"' "$T/ml51200.html" | wc -l)"

# Bad metric lines: not JSON (NaN), values that are strings, a key with control bytes, a line
# without a step (its order), 1,000 keys in one line (more than a line may carry: left out), a
# torn last line: drawn from what is valid, never a crash or raw bytes; 6 charts at most.
rm -rf "$T/mbad" && mkdir -p "$T/mbad" && cp -r "${S[0]}" "${S[1]}" "$T/mbad/"
bad=$(ls -d "$T/mbad"/2* | head -1)
{
    printf '{"ts":"x","type":"metric","step":1,"values":{"loss":NaN},"pid":1,"t":1}\n'
    printf '{"ts":"x","type":"metric","step":2,"values":{"loss":"inf","acc":"x","good":1.5},"pid":1,"t":1}\n'
    printf '{"ts":"x","type":"metric","values":{"k\\u001b[31m":1,"good":2.5},"pid":1,"t":1}\n'
    python3 -c 'import json; print(json.dumps({"ts": "x", "type": "metric", "step": 3, "values": {"x%d" % i: i for i in range(1000)}, "pid": 1, "t": 1}))'
    python3 -c 'import json; print(json.dumps({"ts": "x", "type": "metric", "step": 4, "values": {"m%d" % i: i for i in range(20)}, "pid": 1, "t": 1}))'
    printf '{"ts":"x","type":"metric","step":4,"values":{"torn":1}'
} >>"$bad/runlog.jsonl"
"$RUNMON" report "$T/mbad"/2*/ -o "$T/mbad.html" >/dev/null 2>"$T/err"; rc=$?
expect_eq "bad metric lines: exit 0" 0 "$rc"
expect_eq "... no raw control byte on the page" 0 "$(grep -c $'\x1b' "$T/mbad.html")"
expect_eq "... no chart of the key with control bytes, nor of the torn line" 0 "$(grep -Ec 'data-metric="(k|torn)' "$T/mbad.html")"
expect_eq "... six charts at most: acc (the objective), loss, good, then the first of m0..m19 (none of the 1,000)" "acc loss good m0 m1 m2" "$(grep -o 'data-metric="[^"]*"' "$T/mbad.html" | sed 's/.*="//; s/"//' | xargs)"

# One sweep in two sinks written on two hosts: one page, a host column.
python3 "$ROOT/bench/gen_sweep.py" --template "${S[0]}" --dest "$T/ha" --count 2 --host node-a >/dev/null
python3 "$ROOT/bench/gen_sweep.py" --template "${S[0]}" --dest "$T/hb" --count 2 --first 2 --host node-b >/dev/null
"$RUNMON" report --sweep lr-sweep "$T/ha" "$T/hb" -o "$T/hosts.html" >/dev/null; rc=$?
expect_eq "two sinks: exit 0" 0 "$rc"
expect_eq "two sinks: the runs of both, each on its host" "node-a node-a node-b node-b" "$(grep -o '<td class="t">node-[ab]</td>' "$T/hosts.html" | sed 's/<[^>]*>//g' | xargs)"
check "two sinks: a host column, the header counts the hosts" grep -q '<th class="t" data-type="text">host</th>' "$T/hosts.html"
check "... and the header counts the hosts" grep -q 'runs on <strong>2</strong> hosts' "$T/hosts.html"
check "one host: no host column" test -z "$(grep -o 'data-type="text">host<' "$p")"

# --- a real browser ----------------------------------------------------------------------------
if [ -z "$CHROMIUM" ] || [ ! -x "$CHROMIUM" ]; then
    not_ok "chromium is installed for the browser tests" "install chromium, or set CHROMIUM=PATH"
elif ! command -v node >/dev/null || [ ! -d "$ROOT/node_modules/puppeteer-core" ]; then
    not_ok "puppeteer-core is installed for the browser tests" "run: npm ci (in $ROOT)"
else
    for spec in "$p 3" "$T/g30.html 30" "$T/g60.html 60"; do
        read -r f runs <<<"$spec"
        for w in 1400 390; do
            n="$runs runs at $w px"
            timeout 120 node "$ROOT/tests/e2e/sweep_check.js" "$f" "$w" "$T/m-$runs-$w.png" "$CHROMIUM" >"$T/m.json" 2>"$T/m.err"; rc=$?
            expect_eq "$n: measured in chromium" 0 "$rc"
            [ "$rc" -eq 0 ] || sed 's/^/#   /' "$T/m.err" | tail -5
            m=$(cat "$T/m.json")
            echo "# $n: $(jq -c 'del(.tables, .sort.asc, .sort.desc, .sort.dur, .sort.paramValues, .sort.runs)' <<<"$m")"
            expect_eq "$n: no script error" "" "$(jq -r '.scriptErrors | join("; ")' <<<"$m")"
            expect_eq "$n: no horizontal page scroll" true "$(jq ".scrollWidth <= $w" <<<"$m")"
            expect_eq "$n: no two labels overlap, none leaves its panel ($(jq .texts <<<"$m") measured)" "" "$(jq -r '.overlaps | join(", ")' <<<"$m")"
            expect_eq "$n: text >= 11 px" true "$(jq '.minText >= 11' <<<"$m")"
            expect_eq "$n: a table row and 4 bars per run" "$runs $((4 * runs))" "$(jq -r '"\(.runs) \(.bars)"' <<<"$m")"
            expect_eq "$n: an energy whisker per run (issue 22)" "$runs" "$(jq -r .whiskers <<<"$m")"
            expect_eq "$n: each whisker drawn inside its bar, over no label" "" "$(jq -r '.whiskerBad | join(", ")' <<<"$m")"
            expect_eq "$n: every table that scrolls sideways shows a scroll cue" "" "$(jq -r '.cueMissing | join(", ")' <<<"$m")"
            expect_eq "$n: no scroll cue over a table that fits" "" "$(jq -r '.cueSpurious | join(", ")' <<<"$m")"
            [ "$w" = 390 ] && check "$n: the sweep table scrolls sideways at 390 px (the cue is measured)" test "$(jq .tablesScrolling <<<"$m")" -gt 0
            expect_eq "$n: sort by a click (energy up, down; duration; first parameter)" true "$(jq .sort.ok <<<"$m")"
            if [ "$runs" -le 50 ]; then
                expect_eq "$n: seven charts (3 GPU series, loss and acc by step and by time), each drawn (data-ok)" "7 1" "$(jq -r '"\(.charts) \(.ok)"' <<<"$m")"
                expect_eq "$n: every run's line in every chart" "$(printf "$runs %.0s" 1 2 3 4 5 6 7 | xargs)" "$(jq -r '.chartLines | map(tostring) | join(" ")' <<<"$m")"
                check "$n: charts >= 150 px tall ($(jq -c .chartHeights <<<"$m"))" test "$(jq '.minChartHeight >= 150' <<<"$m")" = true
                expect_eq "$n: a legend click hides run 1's lines, no other's; a second shows them" true "$(jq .legend.ok <<<"$m")"
                expect_eq "$n: metric curves: loss and acc by step and by time" 4 "$(jq .metricCharts <<<"$m")"
            else
                expect_eq "$n: no chart, the note instead" "0 true" "$(jq -r '"\(.chartHeights | length) \(.nodraw)"' <<<"$m")"
            fi
            # Issue 39 §3: the Pareto chart and the parallel coordinates.
            expect_eq "$n: a Pareto point per run" "$runs" "$(jq -r '.pareto.points' <<<"$m")"
            check "$n: Pareto points at least 8 px apart ($(jq -c '.pareto.minGap' <<<"$m") px; $(jq -c '.pareto.nudged' <<<"$m") nudged)" test "$(jq '.pareto.minGap >= 7.9' <<<"$m")" = true
            expect_eq "$n: every Pareto point inside its plot" "" "$(jq -r '.pareto.outside | join(", ")' <<<"$m")"
            check "$n: the front drawn ($(jq -c '.pareto.front' <<<"$m"))" test "$(jq '.pareto.front.on >= 1 and (.pareto.front.on < 2 or .pareto.front.width > 0)' <<<"$m")" = true
            expect_eq "$n: a tap on a point names its run" true "$(jq .pareto.tip.ok <<<"$m")"
            expect_eq "$n: parallel coordinates: a line per run" "$runs" "$(jq -r '.pcoords.lines' <<<"$m")"
            expect_eq "$n: dragging on the first axis keeps the runs in the range, a tap clears it ($(jq -c '.pcoords.kept' <<<"$m"))" true "$(jq .pcoords.ok <<<"$m")"
            check "$n: a PNG screenshot" test "$(od -An -tx1 -N4 "$T/m-$runs-$w.png" 2>/dev/null | tr -d ' ')" = 89504e47
        done
    done
fi
done_testing
