#!/usr/bin/env bash
# Issue 36 §9: what a new reader of the pages tripped on, measured in Chromium at 390 and
# 1400 px (report_check.js reading(), sweep_check.js): legend entries kept whole, command
# words not broken, the lane's phase names cut to their band instead of dropped, the VRAM
# cards saying what each counts, a disk chart whose scale a writeback spike does not set,
# a 3,000-character phase name cut in the tables (the page does not grow), and the sweep
# page's phases in the runs' order.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null || [ ! -d "$ROOT/node_modules/puppeteer-core" ]; then
    not_ok "chromium and puppeteer-core are installed for the browser tests" "apt-get install chromium; npm ci (in $ROOT)"
    done_testing
    exit
fi
export PATH="$FAKEBIN:$(dirname "$RUNMON"):$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
# The workload holds no GPU memory of its own: the fake's pmon lists another process only (a
# live one outside the command's tree: a pid runmon cannot place would be unattributed).
sleep 600 &
other=$!
track "$other"
echo "0 $other C 2048 - - sleep" >"$T/apps.txt"
export FAKE_SMI_APPS="$T/apps.txt" FAKE_SMI_PMON_MS=200
long=$(printf 'p%.0s' $(seq 3000))
cat >"$T/train.sh" <<'SH'
#!/bin/sh
runmon phase load_data -- sleep 1.2
runmon phase train -- sleep 2.5
runmon phase eval -- sleep 0.6
runmon phase "${LONG_PHASE:-report_metrics}" -- sleep 0.6
SH
chmod +x "$T/train.sh"
# io.csv rewritten: the command writes 23 MB/s, the disk 23 MB/s but for one second of
# writeback at 375 MB/s (cumulative byte counters, one row per second).
spike_io() {
    python3 - "$1" <<'PY'
import csv, datetime, sys
path = sys.argv[1]
rows = list(csv.DictReader(open(path)))
head = open(path).readline().strip().split(",")
ts = sorted({r["ts"] for r in rows})
tree = next((r["name"] for r in rows if r["kind"] == "tree"), "1")
out = [head]
disk = treew = 0
when = lambda t: datetime.datetime.fromisoformat(t).timestamp()
for i, t in enumerate(ts):
    if i:
        dt = when(t) - when(ts[i - 1])
        disk += int((375 if i == len(ts) - 2 else 23) * 1000000 * dt)
        treew += int(23 * 1000000 * dt)
    out.append([t, "disk", "vda", "0", str(disk), "0", "", "", "", "", "", ""])
    out.append([t, "tree", tree, "0", str(treew), "", "", "", "", "", "1", "0"])
with open(path, "w") as f:
    for r in out:
        f.write(",".join(r) + "\n")
PY
}
record() { # SINK [LONG_PHASE]
    # Words enough for the header's command to wrap at several places on a phone.
    LONG_PHASE=${2:-} "$RUNMON" record -q -o "$T/$1" -i 0.2 -- "$T/train.sh" --epochs 3 --lr 0.001 \
        --batch-size 64 --gradient-accumulation-steps 8 --output-dir /scratch/runs/lr-0.001 \
        --warmup-epochs 2 --seed 1234 --log-every 50
    spike_io "$(session_dir "$T/$1")/io.csv"
    "$RUNMON" report "$T/$1" -o "$T/$1.html" >/dev/null 2>&1
}
record plain
record long "$long"
measure() { # FILE WIDTH
    timeout 120 node "$ROOT/tests/e2e/report_check.js" "$1" "$2" "$T/shot-$2.png" "$CHROMIUM" 2>"$T/m.err"
}
for w in 390 1400; do
    m=$(measure "$T/plain.html" $w); rc=$?
    expect_eq "$w px: measured in chromium" 0 "$rc"
    r=$(jq -c .reading <<<"$m")
    expect_eq "$w px: no legend entry split over two lines" "" "$(jq -r '.legendSplit | join(", ")' <<<"$r")"
    expect_eq "$w px: no command word broken (--epochs whole)" "" "$(jq -r '.wordsBroken | join(", ")' <<<"$r")"
    lane=$(jq -c '[.lane[] | select(.path == "load_data")][0]' <<<"$r")
    expect_eq "$w px: the lane shows load_data's name, whole or cut ($lane)" true \
        "$(jq '.shown and ((.text == "load_data") or (.text | test("^lo.*…$")))' <<<"$lane")"
    expect_eq "$w px: every phase of the lane names itself ($(jq -c '[.lane[] | .text]' <<<"$r"))" 0 \
        "$(jq '[.lane[] | select(.shown | not)] | length' <<<"$r")"
    expect_match "$w px: the Peak VRAM card says it counts every process" "every process" \
        "$(jq -r '.cards[] | select(.label == "Peak VRAM") | .sub' <<<"$r")"
    expect_match "$w px: the Workload peak VRAM card says it counts the command's own" "command's own processes" \
        "$(jq -r '.cards[] | select(.label == "Workload peak VRAM") | .sub' <<<"$r")"
    clip=$(jq -c '[.clip[] | select(.id == "c-io")][0]' <<<"$r")
    expect_match "$w px: the disk chart's scale is clipped, its peak labelled ($clip)" "off the scale above: peak 375 MB/s" \
        "$(jq -r .label <<<"$clip")"
    expect_eq "$w px: ... and the label shows" true "$(jq .labelShown <<<"$clip")"
    expect_eq "$w px: the command's 23 MB/s reaches over a third of the plot's height" true \
        "$(jq '.reach["io.tree_write"] > 0.33' <<<"$clip")"
    h=$(jq .reading.height <<<"$m")
    m2=$(measure "$T/long.html" $w)
    h2=$(jq .reading.height <<<"$m2")
    # Cut to 48 characters in both phase tables: a few lines more in each, not 2,500 px.
    check "$w px: a 3,000-character phase name: the page grows by less than 150 px ($h -> $h2)" test $((h2 - h)) -lt 150
    check "$w px: ... its table cells are cut ($(jq .reading.nameCells <<<"$m2") characters)" test "$(jq .reading.nameCells <<<"$m2")" -le 49
    expect_eq "$w px: ... and the page does not scroll sideways" true "$(jq ".scrollWidth <= $w" <<<"$m2")"
done

# The sweep page: two runs with these phases, and one with the long name.
for i in 1 2; do
    "$RUNMON" record -q -o "$T/sw" -i 0.2 --sweep s --param run=$i -- "$T/train.sh" --epochs $i
done
"$RUNMON" report --sweep s "$T/sw" -o "$T/sw.html" >/dev/null 2>&1
LONG_PHASE=$long "$RUNMON" record -q -o "$T/sw" -i 0.2 --sweep s --param run=3 -- "$T/train.sh" --epochs 3
"$RUNMON" report --sweep s "$T/sw" -o "$T/swl.html" >/dev/null 2>&1
for w in 390 1400; do
    m=$(timeout 120 node "$ROOT/tests/e2e/sweep_check.js" "$T/sw.html" $w "$T/sw-$w.png" "$CHROMIUM" 2>"$T/m.err"); rc=$?
    expect_eq "sweep page at $w px: measured in chromium" 0 "$rc"
    expect_eq "sweep page at $w px: the phases in the runs' order" "load_data train eval report_metrics" \
        "$(jq -r '.phaseOrder | join(" ")' <<<"$m")"
    m2=$(timeout 120 node "$ROOT/tests/e2e/sweep_check.js" "$T/swl.html" $w "$T/swl-$w.png" "$CHROMIUM" 2>"$T/m.err")
    check "sweep page at $w px: the long phase name cut in its table ($(jq .phaseCellChars <<<"$m2") characters)" \
        test "$(jq .phaseCellChars <<<"$m2")" -le 49
    check "sweep page at $w px: its row no taller than the others (page $(jq .height <<<"$m") -> $(jq .height <<<"$m2") px, one run more)" \
        test $(($(jq .height <<<"$m2") - $(jq .height <<<"$m"))) -lt 400
done
done_testing
