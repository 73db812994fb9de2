#!/usr/bin/env bash
# runmon report end to end: a session recorded with the fake nvidia-smi and the hostile
# fixture (fixtures/report/hostile: markup in every name, a collector outage, alerts) are
# turned into HTML and rendered by a real headless Chromium, which must draw the charts and
# show the injected markup as text; a 24-hour, 8-GPU, 1-second session stays under 2 MB.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
count() { grep -o -- "$1" "$2" | wc -l; }
# chromium MODE FILE OUT: --dump-dom to OUT, or --screenshot=OUT.
browse() {
    local mode=$1 file=$2 out=$3 prof
    prof=$(mktemp -d "$T/chrome.XXXXXX")
    local args=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --disable-extensions --user-data-dir="$prof" --window-size=1400,2600)
    if [ "$mode" = dom ]; then
        timeout 90 "$CHROMIUM" "${args[@]}" --dump-dom "file://$file" >"$out" 2>"$T/chrome.err"
    else
        timeout 90 "$CHROMIUM" "${args[@]}" --screenshot="$out" "file://$file" >/dev/null 2>"$T/chrome.err"
    fi
}

# --- usage and bad input -------------------------------------------------------------------
"$RUNMON" report --help >"$T/help.txt"; rc=$?
expect_eq "--help exits 0" 0 "$rc"
expect_match "--help names --session" "--session ID" "$(cat "$T/help.txt")"
"$RUNMON" report "$T/nonexistent" >"$T/out" 2>"$T/err"; rc=$?
expect_eq "a missing path exits 2" 2 "$rc"
expect_match "... naming it" "nonexistent: No such file" "$(cat "$T/err")"
check "... and prints no path" test ! -s "$T/out"
mkdir -p "$T/empty"
"$RUNMON" report "$T/empty" 2>"$T/err"; rc=$?
expect_eq "a folder without sessions exits 2" 2 "$rc"
expect_match "... saying so" "no sessions" "$(cat "$T/err")"
mkdir -p "$T/hollow"; : >"$T/hollow/cpu.csv"
"$RUNMON" report "$T/hollow" 2>"$T/err"; rc=$?
expect_eq "a session folder without data exits 2" 2 "$rc"
check "... and writes no report" test ! -e "$T/hollow/report.html"
for bad in "--bogus" "-o" "a b"; do
    # shellcheck disable=SC2086
    "$RUNMON" report $bad >/dev/null 2>&1; rc=$?
    expect_eq "bad arguments '$bad' exit 2" 2 "$rc"
done

# --- a recorded session --------------------------------------------------------------------
R=$RUNMON_REL
PATH="$FAKEBIN:$SYSPATH" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1 FAKE_SMI_CAPTURES="$FIXTURES/captures" \
    "$RUNMON" record -q -o "$T/sink" -i 0.2 -- sh -c "
        '$R' phase train -- sh -c \"'$R' phase fwd -- sleep 0.8\"
        '$R' log phase '<script>alert(1)</script>' 0.4
        '$R' phase '<img src=x onerror=alert(2)>' -- sleep 0.6"
rc=$?
expect_eq "record with phases exits 0" 0 "$rc"
s=$(for d in "$T/sink"/*/; do echo "${d%/}"; done | tail -n 1)
out=$("$RUNMON" report "$s" 2>"$T/err"); rc=$?
expect_eq "report of a session folder exits 0" 0 "$rc"
expect_eq "it prints the path written, by default <session>/report.html" "$s/report.html" "$out"
html=$s/report.html
check "the report exists" test -s "$html"
check "no temporary file left beside it" test -z "$(find "$s" -name '*.tmp*')"
# The fake nvidia-smi's pmon makes an apps.csv: the process-memory chart is the ninth; the
# I/O sampler's io.csv adds disk and network, and pressure stalls.
expect_eq "one SVG chart per timeline (8 + GPU memory by process + I/O, pressure)" 11 "$(count '<svg class="chart"' "$html")"
expect_eq "the SM clock of both GPUs" "gpu0.smclk gpu1.smclk" "$(grep -o 'data-series="gpu[0-9]*\.smclk"' "$html" | sort -u | sed 's/data-series="//; s/"//' | tr '\n' ' ' | sed 's/ $//')"
# The default fields record the throttle reasons' mask (the probe found it): none is active
# on the load capture, and the legend says so.
expect_eq "default fields: throttle reasons recorded, none active" \
    '<span class="thr none">throttle reasons recorded: none active</span>' \
    "$(grep -o '<span class="thr[^>]*>[^<]*</span>' "$html")"
expect_eq "process memory of both GPUs" "gpu0.other_vram gpu0.workload_vram gpu1.other_vram gpu1.workload_vram" "$(grep -o 'data-series="gpu[0-9]*\.[a-z]*_vram"' "$html" | sort -u | sed 's/data-series="//; s/"//' | tr '\n' ' ' | sed 's/ $//')"
check "a line per GPU and metric (2 GPUs x 5 + host 5 >= 15)" test "$(grep -o 'data-series="[^"]*"' "$html" | sort -u | wc -l)" -ge 15
expect_eq "utilization of both GPUs" "gpu0.util gpu1.util" "$(grep -o 'data-series="gpu[0-9]*\.util"' "$html" | sort -u | sed 's/data-series="//; s/"//' | tr '\n' ' ' | sed 's/ $//')"
check "the phase lane has train, fwd and the others" test "$(count '<g class="phase"' "$html")" -ge 4
expect_match "a nested phase is drawn one row down" '<g class="phase" data-depth="1" data-path="train/fwd">' "$(cat "$html")"
expect_eq "the script-named phase is escaped" 0 "$(count '<script>alert' "$html")"
check "... and shown as text" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$html"
expect_eq "no <img> injected from a phase name" 0 "$(count '<img' "$html")"
expect_eq "self-contained: no http(s) reference" 0 "$(grep -Eci '(src|href)="(https?:)?//' "$html")"
expect_eq "one script element, our own" 1 "$(count '<script' "$html")"
check "the session end is marked" grep -q '<g class="end">' "$html"
check "per-GPU table" grep -q '<th>VRAM peak GiB</th>' "$html"
check "summary cards" grep -q 'Mean GPU utilization' "$html"
echo "# recorded session report: $(wc -c <"$html") bytes"

# Sink directory: --session ID, then latest, else the newest session.
"$RUNMON" report "$T/sink" -o "$T/newest.html" >/dev/null; rc=$?
expect_eq "a sink directory without latest: the newest session" 0 "$rc"
ln -s "$(basename "$s")" "$T/sink/latest"
out=$("$RUNMON" report "$T/sink" -o "$T/latest.html"); rc=$?
expect_eq "a sink directory: PATH/latest" "0 $T/latest.html" "$rc $out"
out=$("$RUNMON" report "$T/sink" --session "$(basename "$s")" -o "$T/byid.html"); rc=$?
expect_eq "--session ID picks PATH/ID" "0 $T/byid.html" "$rc $out"
out=$("$RUNMON" report "$T/sink" --session latest -o "$T/bylatest.html" 2>"$T/err"); rc=$?
expect_eq "--session latest picks where PATH/latest points" "0 $T/bylatest.html" "$rc $out"
expect_match "... naming that session" "session $(basename "$(readlink -f "$T/sink/latest")")" "$(cat "$T/err")"
"$RUNMON" report "$T/sink" --session nosuch 2>"$T/err"; rc=$?
expect_eq "--session with an unknown id exits 2" 2 "$rc"
expect_match "... naming it" "nosuch" "$(cat "$T/err")"
mkdir -p "$T/ro"; chmod 555 "$T/ro"
if [ "$(id -u)" -ne 0 ]; then
    "$RUNMON" report "$s" -o "$T/ro/r.html" 2>/dev/null; rc=$?
    expect_eq "an unwritable -o exits 1" 1 "$rc"
else
    "$RUNMON" report "$s" -o "$T/nodir/r.html" 2>/dev/null; rc=$?
    expect_eq "an unwritable -o exits 1" 1 "$rc"
fi

# --- the hostile fixture -------------------------------------------------------------------
cp -r "$FIXTURES/report/hostile" "$T/hostile"
"$RUNMON" report "$T/hostile" >/dev/null; rc=$?
expect_eq "hostile fixture: exit 0" 0 "$rc"
h=$T/hostile/report.html
expect_eq "hostile: no raw markup from names, host, command or reasons" 0 "$(grep -Ec '<(script|img|b)[ >]' <(sed 's#<script>(function#SCRIPT#' "$h"))"
check "hostile: GPU name escaped" grep -q 'H200 &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; &#39;y&#39;' "$h"
check "hostile: host escaped" grep -q 'evil&lt;host&gt;' "$h"
check "hostile: degraded reason escaped inside an SVG title" grep -q '<title>gpu collector degraded: nvidia-smi exited: &lt;/title&gt;&lt;script&gt;alert(3)' "$h"
expect_eq "hostile: one shaded degraded span" 1 "$(count 'class="degraded"' "$h")"
expect_eq "hostile: a warning and a critical marker" "1 1" "$(count 'class="alert warning"' "$h") $(count 'class="alert critical"' "$h")"
# Samples stop from 60 s to 76 s: every GPU line breaks there (two polylines per series).
expect_eq "hostile: the outage breaks each GPU line in two" 2 "$(count 'data-series="gpu0.util"' "$h")"
expect_eq "hostile: host lines are unbroken" 1 "$(count 'data-series="cpu.busy"' "$h")"
# The 100 % sample at 40 s of GPU 0 reaches the top of the plot (y = 8).
check "hostile: the one-sample spike is drawn" grep -Eq 'data-series="gpu0.util"[^>]* points="[^"]*,8\.0( |")' "$h"
expect_match "hostile: nested phases sit in their own row" 'data-depth="1" data-path="[^"]*"><rect x="[0-9.]+" y="29.0"' "$(cat "$h")"

# An outage shorter than the gap the samples' spacing allows (06:00:20.2-20.8, between the
# samples at 20 s and 21 s): the lines of that collector still break there, the others not.
cp -r "$FIXTURES/report/hostile" "$T/blip"
{
    echo '{"ts":"2026-11-21T06:00:20.200+00:00","type":"event","event":"collector_degraded","pid":4241,"t":1795240820.200,"data":{"collector":"gpu","reason":"blip"}}'
    echo '{"ts":"2026-11-21T06:00:20.800+00:00","type":"event","event":"collector_recovered","pid":4241,"t":1795240820.800,"data":{"collector":"gpu","down_s":0.6}}'
} >>"$T/blip/runlog.jsonl"
"$RUNMON" report "$T/blip" >/dev/null; rc=$?
expect_eq "short outage: report exits 0" 0 "$rc"
expect_eq "short outage: two shaded spans" 2 "$(count 'class="degraded"' "$T/blip/report.html")"
expect_eq "short outage: each GPU line breaks there too (3 polylines, was 2)" "3 3" "$(count 'data-series="gpu0.util"' "$T/blip/report.html") $(count 'data-series="gpu1.power"' "$T/blip/report.html")"
expect_eq "short outage: host lines are unbroken" 1 "$(count 'data-series="cpu.busy"' "$T/blip/report.html")"
# The first piece of GPU 0's line ends at 20 s (x = 64 + 20/120 * 1120 = 250.7).
check "short outage: GPU 0's first piece ends before the span" grep -Eq 'data-series="gpu0.util"[^>]* points="[^"]* 250\.7,[0-9.]+"' "$T/blip/report.html"

# Reference lines: each GPU's VRAM total with its value; the power limit where gpu.csv
# records power.limit; alert markers on the VRAM chart only, labelled with their GPU.
for g in 0 1; do
    check "hostile: a reference line for GPU $g's VRAM total, with its value" grep -q "<g class=\"ref total\" data-ref=\"gpu$g.vram_total\" data-value=\"79.6475\">" "$h"
done
check "hostile: ... labelled with it" grep -q '>GPU 1 total 79.65 GiB</text>' "$h"
expect_eq "hostile: no thresholds in session.json, no threshold lines" 0 "$(grep -Ec 'class="ref (warning|critical)"' "$h")"
expect_eq "hostile: the alert markers sit on the VRAM chart" "1 1" "$(grep '<section class="panel" id="c-vram">' "$h" | grep -o 'class="alert [a-z]*" data-gpu="1"' | sort | uniq -c | awk '{print $1}' | tr '\n' ' ' | sed 's/ $//')"
check "hostile: ... labelled with their GPU" grep -q 'data-gpu="1"><line [^>]*/><path [^>]*/><text [^>]*>GPU 1</text>' "$h"
expect_eq "hostile: ... and on no other chart" 0 "$(grep '<section class="panel" id="c-' "$h" | grep -v 'id="c-vram"' | grep -c 'class="alert ')"
# A marker sits at its sample (data.sample_ts), not at when the event was logged: the warning
# logged at 06:00:52 for a sample of 06:00:40 is drawn where one logged at 06:00:40 is.
alert_x() { grep -o 'class="alert warning" data-gpu="1"><line x1="[0-9.]*"' "$1/report.html" | sed 's/.*x1="//; s/"//'; }
for v in sampled logged; do cp -r "$FIXTURES/report/hostile" "$T/at-$v"; done
sed -i '/"event":"warning"/ s/"threshold_pct":90.0}/"threshold_pct":90.0,"sample_ts":"2026-11-21T06:00:40.000+00:00"}/' "$T/at-sampled/runlog.jsonl"
sed -i '/"event":"warning"/ s/06:00:52.000/06:00:40.000/; /"event":"warning"/ s/1795240852/1795240840/' "$T/at-logged/runlog.jsonl"
for v in sampled logged; do "$RUNMON" report "$T/at-$v" >/dev/null; done
check "an alert marker sits at its sample_ts ($(alert_x "$T/at-sampled") vs $(alert_x "$T/hostile"))" \
    test -n "$(alert_x "$T/hostile")" -a "$(alert_x "$T/at-sampled")" != "$(alert_x "$T/hostile")"
expect_eq "... where an event logged then is drawn" "$(alert_x "$T/at-logged")" "$(alert_x "$T/at-sampled")"
awk -F, 'NR == 1 { print $0 ",power.limit"; next } { print $0 ",700.00" }' "$T/blip/gpu.csv" >"$T/blip/g" && mv "$T/blip/g" "$T/blip/gpu.csv"
"$RUNMON" report "$T/blip" >/dev/null
for g in 0 1; do
    check "power.limit recorded: GPU $g's limit on the power chart" grep -Eq "<section class=\"panel\" id=\"c-power\">.*<g class=\"ref limit\" data-ref=\"gpu$g.power_limit\" data-value=\"700\">" "$T/blip/report.html"
done
check "no power.limit column: no limit line" test -z "$(grep -o 'data-ref="gpu0.power_limit"' "$h")"

# --- per-process GPU memory (apps.csv) -----------------------------------------------------
# A real H100 session: pid 416 (not the workload) holds 3656 MiB throughout, the workload's
# child pid 445 1860 MiB for ten samples; the GPU is idle (no pid) at both ends.
cp -r "$FIXTURES/sessions/h100-workload-child" "$T/wc"
"$RUNMON" report "$T/wc" >/dev/null; rc=$?
expect_eq "apps: report exits 0" 0 "$rc"
a=$T/wc/report.html
expect_eq "apps: one GPU memory by process chart" 1 "$(count '<section class="panel" id="c-apps">' "$a")"
expect_eq "apps: workload and other processes of GPU 0, one unbroken line each (idle is 0, no gap)" "1 1" "$(count 'data-series="gpu0.workload_vram"' "$a") $(count 'data-series="gpu0.other_vram"' "$a")"
check "apps: the idle start is drawn at 0 (y = 158)" grep -Eq 'data-series="gpu0.workload_vram"[^>]* points="[0-9.]+,158\.0 ' "$a"
check "apps: the legend names the GPU" grep -q '</svg>GPU 0 workload</span>' "$a"
check "thresholds: the warning line at 90 % of GPU 0's total" grep -q '<g class="ref warning" data-ref="gpu0.vram_warning" data-value="71.6827">' "$a"
check "thresholds: the critical line at 98 %" grep -q '<g class="ref critical" data-ref="gpu0.vram_critical" data-value="78.0545">' "$a"
check "apps: a Processes table" grep -q '<section class="panel" id="t-processes"><h3>Processes</h3>' "$a"
check "apps: pid 445 is the workload's, peak 1860 MiB" grep -q '<tr class="proc" data-pid="445" data-workload="yes"><td>0</td><td>445</td><td class="l">python3</td><td class="t">yes</td><td>1860</td><td>90.4</td><td>10</td>' "$a"
check "apps: pid 416 is not, peak 3656 MiB" grep -q '<tr class="proc" data-pid="416" data-workload="no"><td>0</td><td>416</td><td class="l">python3</td><td class="t">no</td><td>3656</td>' "$a"
check "apps: the GPU's workload peak/mean and other peak" grep -q 'GPU 0: workload peak 1860 MiB, mean 1162.5 MiB; other processes peak 3656 MiB' "$a"
check "apps: a workload peak VRAM card" grep -q 'Workload peak VRAM</div><div class="value">1.8 GiB' "$a"
# Framework peaks per phase: the torch session.
cp -r "$FIXTURES/sessions/h100-torch-phases" "$T/tp"
"$RUNMON" report "$T/tp" >/dev/null; rc=$?
expect_eq "apps: the torch session's report exits 0" 0 "$rc"
check "apps: memory by phase: train, torch peak 2720, workload peak 4420" grep -q '</i>train</td><td class="l">torch</td><td>2720</td><td>4420</td>' "$T/tp/report.html"
# A hostile process name, in apps.csv and in the summary.json made from it.
cp -r "$FIXTURES/sessions/h100-workload-child" "$T/wch"
sed -i 's#,445,python3,#,445,<script>alert(4)</script>\&x,#' "$T/wch/apps.csv"
"$RUNMON" summary "$T/wch" --format json >"$T/wch/summary.json"
check "hostile process: summary.json holds the name" grep -q '"<script>alert(4)</script>&x"' "$T/wch/summary.json"
"$RUNMON" report "$T/wch" >/dev/null; rc=$?
expect_eq "hostile process: report exits 0" 0 "$rc"
expect_eq "hostile process: no raw markup" 0 "$(count '<script>alert(4)' "$T/wch/report.html")"
check "hostile process: the name is text" grep -q '<td class="l">&lt;script&gt;alert(4)&lt;/script&gt;&amp;x</td>' "$T/wch/report.html"
# Without apps.csv: no chart, no table, no card.
cp -r "$FIXTURES/sessions/h100-workload-child" "$T/noapps"
rm "$T/noapps/apps.csv"
"$RUNMON" report "$T/noapps" >/dev/null; rc=$?
expect_eq "no apps.csv: report exits 0" 0 "$rc"
for f in "$T/noapps/report.html" "$h"; do
    expect_eq "no apps.csv ($(basename "$(dirname "$f")")): no process chart, tables or card" 0 "$(grep -Ec 'id="c-apps"|id="t-processes"|id="t-phase-memory"|_vram"|Workload peak' "$f")"
done
expect_eq "no apps.csv: eight charts" 8 "$(count '<svg class="chart"' "$T/noapps/report.html")"

# --- the SM clock and throttle reasons -----------------------------------------------------
# The hostile fixture plus throttle columns in both spellings: sw_power_cap (old name,
# "Active"/"Not Active") from 30 s to 45 s, gpu_idle in the bit mask from 90 s to 100 s,
# hw_slowdown "[N/A]" (unknown: not drawn).
cp -r "$FIXTURES/report/hostile" "$T/thr"
awk -F, 'NR == 1 { print $0 ",clocks_event_reasons.active,clocks_throttle_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown [N/A]"; next }
    { s = substr($1, 18, 2) + 60 * substr($1, 15, 2)
      print $0 "," (s >= 90 && s < 100 ? "0x0000000000000001" : "0x0000000000000000") "," (s >= 30 && s < 45 ? "Active" : "Not Active") ",[N/A]" }' \
    "$T/thr/gpu.csv" >"$T/thr/g" && mv "$T/thr/g" "$T/thr/gpu.csv"
"$RUNMON" report "$T/thr" >/dev/null; rc=$?
expect_eq "throttle: report exits 0" 0 "$rc"
thr=$T/thr/report.html
expect_eq "throttle: one SM clock chart, a line per GPU" "1 gpu0.smclk gpu1.smclk" "$(count '<section class="panel" id="c-clock">' "$thr") $(grep -o 'data-series="gpu[0-9]*\.smclk"' "$thr" | sort -u | sed 's/data-series="//; s/"//' | tr '\n' ' ' | sed 's/ $//')"
# 30 s to 45 s of 120 s: x = 64 + 30/120 * 1120 = 344, 15 s wide = 140 units; 90-100 s: 904, 93.3.
for g in 0 1; do
    check "throttle: GPU $g's sw_power_cap span, 30 s to 45 s" grep -q "<rect class=\"thr\" data-reason=\"sw_power_cap\" data-gpu=\"$g\" x=\"344.0\" y=\"[0-9.]*\" width=\"140.0\"" "$thr"
    check "throttle: GPU $g's gpu_idle span from the bit mask, 90 s to 100 s" grep -q "<rect class=\"thr\" data-reason=\"gpu_idle\" data-gpu=\"$g\" x=\"904.0\" y=\"[0-9.]*\" width=\"93.3\"" "$thr"
done
expect_eq "throttle: four spans in all (no [N/A] hw_slowdown)" 4 "$(count '<rect class="thr"' "$thr")"
check "throttle: each span titled with its GPU, reason and seconds" grep -q '<title>GPU 1 clocks held back: sw_power_cap, 15.0 s</title>' "$thr"
expect_eq "throttle: the legend names the reasons" "gpu_idle sw_power_cap" "$(grep -o '<span class="thr" data-reason="[a-z_]*"><i [^>]*></i>throttle: [a-z_]*</span>' "$thr" | sed 's/.*throttle: //; s/<.*//' | tr '\n' ' ' | sed 's/ $//')"
check "throttle: only on the clock chart" test -z "$(grep '<section class="panel" id="c-' "$thr" | grep -v 'id="c-clock"' | grep -o 'class="thr')"
# No clock column: no clock chart (not an empty one).
cp -r "$FIXTURES/report/hostile" "$T/noclk"
c=$(head -1 "$T/noclk/gpu.csv" | tr ',' '\n' | grep -nx clocks.current.sm | cut -d: -f1)
cut -d, -f"$c" --complement "$T/noclk/gpu.csv" >"$T/noclk/g" && mv "$T/noclk/g" "$T/noclk/gpu.csv"
"$RUNMON" report "$T/noclk" >/dev/null; rc=$?
expect_eq "no clock recorded: report exits 0" 0 "$rc"
expect_eq "no clock recorded: no clock chart, the seven others" "0 7" "$(count 'id="c-clock"' "$T/noclk/report.html") $(count '<svg class="chart"' "$T/noclk/report.html")"
# Recorded on the fake nvidia-smi with throttle fields: the bit mask sw_power_cap in the
# second and third of every four samples; without it, recorded but never active.
F=timestamp,index,uuid,name,pci.bus_id,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu,clocks.current.sm,clocks_event_reasons.active,clocks_throttle_reasons.sw_power_cap
for k in on off; do
    ov=""
    [ $k = on ] && ov="clocks_event_reasons.active=0x0000000000000000,0x0000000000000004,0x0000000000000004,0x0000000000000000"
    PATH="$FAKEBIN:$SYSPATH" FAKE_SMI_GPUS=2 FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_OVERRIDE="$ov" \
        "$RUNMON" record -q -o "$T/thr-$k" -i 0.2 --gpu-fields "$F" -- sleep 1.6
    expect_eq "throttle recorded ($k): record exits 0" 0 "$?"
    "$RUNMON" report "$T/thr-$k/latest" -o "$T/thr-$k.html" >/dev/null
    expect_eq "throttle recorded ($k): report exits 0" 0 "$?"
done
check "throttle recorded: sw_power_cap spans of GPU 0 and 1" test "$(grep -o '<rect class="thr" data-reason="sw_power_cap" data-gpu="[01]"' "$T/thr-on.html" | sort -u | wc -l)" -eq 2
check "throttle recorded: the legend names sw_power_cap" grep -q '</i>throttle: sw_power_cap</span>' "$T/thr-on.html"
expect_eq "throttle recorded, never active: no span, a legend line saying so" "0 1" "$(count '<rect class="thr"' "$T/thr-off.html") $(count '<span class="thr none">throttle reasons recorded: none active</span>' "$T/thr-off.html")"

# --- a real browser -------------------------------------------------------------------------
if [ -z "$CHROMIUM" ] || [ ! -x "$CHROMIUM" ]; then
    not_ok "chromium is installed for the browser tests" \
        "no chromium found: install it (Debian: apt-get install -y chromium), or set CHROMIUM=PATH"
else
    browse dom "$h" "$T/h.dom"; rc=$?
    expect_eq "chromium --dump-dom exits 0" 0 "$rc"
    [ "$rc" -eq 0 ] || sed 's/^/#   /' "$T/chrome.err" | tail -5
    body=$(grep -o '<body[^>]*>' "$T/h.dom")
    expect_match "browser: every chart has a drawn line (data-ok)" 'data-ok="1"' "$body"
    expect_match "browser: eight charts measured" 'data-charts="8"' "$body"
    check "browser: polylines in the DOM" test "$(count '<polyline' "$T/h.dom")" -ge 20
    check "browser: the phase name is text" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/h.dom"
    expect_eq "browser: no injected script or img element" 0 "$(grep -Ec '<script>alert|<img' "$T/h.dom")"
    browse dom "$html" "$T/r.dom"
    expect_match "browser: the recorded session's charts draw too" 'data-ok="1"' "$(grep -o '<body[^>]*>' "$T/r.dom")"
    browse dom "$a" "$T/a.dom"
    expect_match "browser apps: every chart draws, the process chart too" 'data-charts="9"[^>]*data-ok="1"' "$(grep -o '<body[^>]*>' "$T/a.dom")"
    check "browser apps: the process chart's lines" grep -q '<polyline data-series="gpu0.workload_vram"' "$T/a.dom"
    check "browser apps: pid 445 is the workload's, 1860 MiB" grep -Eq '<tr class="proc" data-pid="445" data-workload="yes">(<td[^>]*>[^<]*</td>){3}<td class="t">yes</td><td>1860</td>' "$T/a.dom"
    check "browser apps: pid 416 is not, 3656 MiB" grep -Eq '<tr class="proc" data-pid="416" data-workload="no">(<td[^>]*>[^<]*</td>){3}<td class="t">no</td><td>3656</td>' "$T/a.dom"
    browse dom "$T/wch/report.html" "$T/wch.dom"
    check "browser apps: the hostile process name is text" grep -q '&lt;script&gt;alert(4)&lt;/script&gt;&amp;x' "$T/wch.dom"
    expect_eq "browser apps: no injected script" 0 "$(count '<script>alert' "$T/wch.dom")"
    browse dom "$T/noapps/report.html" "$T/noapps.dom"
    expect_eq "browser: without apps.csv, no process chart or table" "0 1" "$(grep -Ec 'id="c-apps"|id="t-processes"' "$T/noapps.dom") $(grep -c 'data-ok="1"' "$T/noapps.dom")"
    browse png "$h" "$T/h.png"; rc=$?
    expect_eq "chromium --screenshot exits 0" 0 "$rc"
    expect_eq "a PNG is written" "89504e47" "$(od -An -tx1 -N4 "$T/h.png" 2>/dev/null | tr -d ' ')"
    # A blank 1400x2600 page compresses to a few KB; charts, text and hatching do not.
    sz=$(wc -c <"$T/h.png" 2>/dev/null || echo 0)
    check "the screenshot is not blank ($sz bytes > 60 KB)" test "$sz" -gt 61440
    mkdir -p "$T/blank" && echo '<html><body></body></html>' >"$T/blank/b.html"
    browse png "$T/blank/b.html" "$T/blank.png"
    bz=$(wc -c <"$T/blank.png" 2>/dev/null || echo 0)
    check "... four times a blank page's ($bz bytes)" test "$bz" -gt 0 -a "$sz" -gt $((4 * bz))
    # A desktop and a phone, measured in the page over DevTools (puppeteer-core; headless
    # --window-size stops at 500 px). 1400 px: every table fits its card; 390 px: no page
    # scroll sideways (tables scroll inside their cards), chart text stays >= 10 px. The SM
    # clock chart: a line per GPU, its text legible and inside its card, its screenshot holds
    # the lines' (and the throttle reasons') colours. Zoom: a drag (mouse at 1400 px, touch at
    # 390 px) over 25-50 % of the first chart sets that range on every chart and the lane,
    # with new time labels, the same on all, lines kept inside the plot; a double-click on
    # the last chart restores every label, line and range.
    ROOT=$(cd "$(dirname "$0")/../.." && pwd)
    if ! command -v node >/dev/null || [ ! -d "$ROOT/node_modules/puppeteer-core" ]; then
        not_ok "puppeteer-core is installed for the 390 px test" "run: npm ci (in $ROOT)"
    else
        # File, its GPU count, its charts plus the phase lane (the apps session has no phases).
        for spec in "$h 2 9" "$a 1 9" "$html 2 12" "$thr 2 9"; do
            read -r f ngpu nsvg <<<"$spec"
            n=$(basename "$(dirname "$f")")
            [ "$f" = "$html" ] && n=recorded
            for w in 1400 390; do
                timeout 120 node "$ROOT/tests/e2e/report_check.js" "$f" "$w" "$T/$n-$w.png" "$CHROMIUM" >"$T/m.json" 2>"$T/m.err"; rc=$?
                expect_eq "$n at $w px: measured in chromium" 0 "$rc"
                [ "$rc" -eq 0 ] || sed 's/^/#   /' "$T/m.err" | tail -5
                m=$(cat "$T/m.json")
                echo "# $n at $w px: $m"
                expect_eq "$n at $w px: the charts draw (data-ok)" 1 "$(jq -r .ok <<<"$m")"
                expect_eq "$n at $w px: no horizontal page scroll (scrollWidth <= $w)" true "$(jq ".scrollWidth <= $w" <<<"$m")"
                expect_eq "$n at $w px: chart text >= 10 px" true "$(jq '.chartTexts > 10 and .minChartText >= 10' <<<"$m")"
                expect_eq "$n at $w px: no table's box sticks out of its card" 0 "$(jq .tablesPageOverflow <<<"$m")"
                [ "$w" = 1400 ] && expect_eq "$n at 1400 px: every table fits its card" "" "$(jq -r '.tablesWider | join(", ")' <<<"$m")"
                expect_eq "$n at $w px: the SM clock chart, a line per GPU" "true $ngpu" "$(jq -r '"\(.clock.present) \(.clock.lines)"' <<<"$m")"
                expect_eq "$n at $w px: clock chart text >= 10 px and inside its card" true "$(jq '.clock.texts > 5 and .clock.minText >= 10 and .clock.fits' <<<"$m")"
                check "$n at $w px: the clock chart's screenshot shows its lines ($(jq .clock.pixels.lines <<<"$m") px)" test "$(jq .clock.pixels.lines <<<"$m")" -gt 50
                if [ "$f" = "$thr" ]; then
                    expect_eq "$n at $w px: the throttle legend" "gpu_idle sw_power_cap" "$(jq -r '.clock.throttleLegend | join(" ")' <<<"$m")"
                    check "$n at $w px: the screenshot shows both reasons' colours" test "$(jq '[.clock.pixels.gpu_idle, .clock.pixels.sw_power_cap] | min' <<<"$m")" -gt 50
                    # Zoomed to 30-60 s: sw_power_cap (30-45 s) is drawn four times as wide,
                    # gpu_idle (90-100 s) is out of the range.
                    expect_eq "$n at $w px: zoomed screenshot: sw_power_cap over twice the pixels, no gpu_idle ($(jq -c '[.clock.pixels.sw_power_cap, .zoom.clockPixels.sw_power_cap, .zoom.clockPixels.gpu_idle]' <<<"$m"))" true "$(jq '.zoom.clockPixels.sw_power_cap > 2 * .clock.pixels.sw_power_cap and .zoom.clockPixels.gpu_idle == 0' <<<"$m")"
                fi
                expect_eq "$n at $w px: zoom reached every chart and the lane" "$nsvg" "$(jq .zoom.charts <<<"$m")"
                expect_eq "$n at $w px: zoom: one range, the one dragged over, on every chart" true "$(jq '.zoom.rangeOk and (.zoom.ranges | length) == 1' <<<"$m")"
                expect_eq "$n at $w px: zoom: new time labels, the same on every chart ($(jq -r .zoom.labelsZoomed <<<"$m"))" true "$(jq '.zoom.labelsSame and .zoom.labelsChanged' <<<"$m")"
                expect_eq "$n at $w px: zoom: lines stay inside the plot" true "$(jq .zoom.linesInPlot <<<"$m")"
                check "$n at $w px: zoomed screenshot of the clock chart shows its lines ($(jq .zoom.clockPixels.lines <<<"$m") px)" test "$(jq .zoom.clockPixels.lines <<<"$m")" -gt 50
                expect_eq "$n at $w px: double-click restores every chart" true "$(jq .zoom.restored <<<"$m")"
                expect_eq "$n at $w px: no script error" "" "$(jq -r '.scriptErrors | join("; ")' <<<"$m")"
                # The layout as a reader sees it (report_check.js, layout()). Charts at least
                # 140 px tall: the plot is then about 120 px, its four grid rows 30 px apart (over
                # twice a label's height, so every scale label shows) and 1 % of the scale over
                # a pixel; the page draws them 150 px tall below 1011 px, 200 px at 1400.
                expect_eq "$n at $w px: no two phase-lane labels overlap ($(jq .layout.laneLabels <<<"$m") shown)" "" "$(jq -r '.layout.laneOverlaps | join(", ")' <<<"$m")"
                check "$n at $w px: every chart at least 140 px tall ($(jq -c .layout.chartHeights <<<"$m"))" test "$(jq '.layout.minChartHeight >= 140' <<<"$m")" = true
                expect_eq "$n at $w px: every table that scrolls sideways shows a scroll cue" "" "$(jq -r '.layout.cueMissing | join(", ")' <<<"$m")"
                expect_eq "$n at $w px: no scroll cue over a table that fits" "" "$(jq -r '.layout.cueSpurious | join(", ")' <<<"$m")"
                [ "$w" = 390 ] && check "$n at 390 px: some table scrolls sideways (the cue is measured, $(jq .layout.tablesScrolling <<<"$m"))" test "$(jq .layout.tablesScrolling <<<"$m")" -gt 0
                expect_eq "$n at $w px: chart bands in their lane rect's colour ($(jq .layout.bands.n <<<"$m") bands)" "" "$(jq -r '.layout.bands.mismatched | join(", ")' <<<"$m")"
                expect_eq "$n at $w px: phase swatches in tables in their lane rect's colour ($(jq .layout.swatches.n <<<"$m"))" "" "$(jq -r '.layout.swatches.mismatched | join(", ")' <<<"$m")"
                if [ "$f" != "$a" ]; then
                    check "$n at $w px: bands, lane labels and swatches measured" test "$(jq '[.layout.bands.n, .layout.laneLabels, .layout.swatches.n] | min' <<<"$m")" -gt 0
                fi
                expect_eq "$n at $w px: legend swatches in their line's colour and dash ($(jq -c '[.layout.legend.n, .layout.legend.dashed]' <<<"$m") lines, dashed)" "" "$(jq -r '.layout.legend.mismatched | join(", ")' <<<"$m")"
                check "$n at $w px: ... a dashed line among them" test "$(jq .layout.legend.dashed <<<"$m")" -gt 0
                expect_eq "$n at $w px: table headers aligned as their cells ($(jq .layout.headers.columns <<<"$m") columns)" "" "$(jq -r '.layout.headers.mismatched | join(", ")' <<<"$m")"
                expect_eq "$n at $w px: without JavaScript every chart still draws, no zoom button" true "$(jq '.noScript.ran == false and .noScript.charts > 0 and .noScript.drawn == .noScript.charts and .noScript.clock and .noScript.reset == false' <<<"$m")"
                pz=$(wc -c <"$T/$n-$w.png" 2>/dev/null || echo 0)
                check "$n at $w px: a PNG screenshot ($pz bytes)" test "$(od -An -tx1 -N4 "$T/$n-$w.png" 2>/dev/null | tr -d ' ')" = 89504e47
                check "... not blank (over 4 times a blank page's)" test "$pz" -gt $((4 * bz))
            done
        done
    fi
fi

# --- 24 hours, 8 GPUs, one sample a second -------------------------------------------------
big=$T/big
mkdir -p "$big"
start=$(date +%s)
# Day 2026-11-21 UTC; a 2-second spike to 100 % on GPU 3 at 13:00:00; GPU samples stop
# 20:00:00-20:10:00 (the collector was down): 86,400 x 8 - 600 x 8 GPU rows. GPU 5's clocks
# are held back by sw_power_cap for 4 s of every minute.
awk -v dir="$big" 'function ts(s) { return sprintf("2026-11-21T%02d:%02d:%02d.000+00:00", int(s / 3600), int(s / 60) % 60, s % 60) }
BEGIN {
    g = dir "/gpu.csv"; c = dir "/cpu.csv"; p = dir "/proc.csv"
    print "ts,index,uuid,name,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu,clocks.current.sm,clocks_event_reasons.active" > g
    print "ts,cpu,usr_pct,nice_pct,sys_pct,iowait_pct,irq_pct,softirq_pct,steal_pct,idle_pct,mem_total_mb,mem_available_mb,mem_used_mb" > c
    print "ts,root_pid,nprocs,rss_mb,cpu_pct" > p
    for (s = 0; s < 86400; s++) {
        t = ts(s)
        if (s < 72000 || s >= 72600)
            for (i = 0; i < 8; i++) {
                u = 30 + (s * 7 + i * 13) % 21
                if (i == 3 && (s == 46800 || s == 46801)) u = 100
                printf "%s,%d,GPU-%d,NVIDIA H200,%d,%d,143771,%d.%02d,%d,%d,0x%016x\n", t, i, i, u, 60000 + u * 100, 200 + u * 4, s % 100, 40 + u % 20, 1400 + u * 5, (i == 5 && s % 60 < 4 ? 4 : 0) > g
            }
        idle = 40 + s % 50
        printf "%s,all,%d.00,0.00,5.00,1.00,0.00,0.00,0.00,%d.00,515000.00,400000.00,115000.00\n", t, 54 - s % 50, idle > c
        printf "%s,777,4,%d.50,%d.00\n", t, 9000 + s % 300, 100 + s % 50 > p
    }
}'
{
    echo '{"ts":"2026-11-21T00:00:00.000+00:00","type":"event","event":"session_start","pid":1,"t":1795219200.000}'
    for h in $(seq 0 23); do
        printf '{"ts":"2026-11-21T%02d:59:59.000+00:00","type":"phase","name":"epoch%d","seconds":3599.0,"pid":2,"t":%d.000}\n' "$h" "$h" $((1795219200 + h * 3600 + 3599))
    done
    awk 'BEGIN { for (k = 0; k < 20000; k++) { s = 10 + k * 4; printf "{\"ts\":\"2026-11-21T%02d:%02d:%02d.000+00:00\",\"type\":\"phase\",\"name\":\"step\",\"seconds\":2.0,\"pid\":3,\"t\":%d.000}\n", int(s / 3600), int(s / 60) % 60, s % 60, 1795219200 + s } }'
    echo '{"ts":"2026-11-21T13:00:01.000+00:00","type":"event","event":"warning","pid":1,"t":1795266001.000,"data":{"gpu":3,"pct":91.0,"threshold_pct":90.0}}'
    echo '{"ts":"2026-11-21T20:00:01.000+00:00","type":"event","event":"collector_degraded","pid":1,"t":1795291201.000,"data":{"collector":"gpu","reason":"hung"}}'
    echo '{"ts":"2026-11-21T20:10:00.000+00:00","type":"event","event":"collector_recovered","pid":1,"t":1795291800.000,"data":{"collector":"gpu","down_s":599.0}}'
    echo '{"ts":"2026-11-22T00:00:00.000+00:00","type":"event","event":"session_end","pid":1,"t":1795305600.000}'
} >"$big/runlog.jsonl"
cat >"$big/session.json" <<'EOF'
{"format": "runmon-session", "schema_version": 1, "session_id": "20261121T000000Z-big-1",
 "status": "completed", "host": "big", "started_at": "2026-11-21T00:00:00.000+00:00",
 "ended_at": "2026-11-22T00:00:00.000+00:00", "command": ["train.sh"], "exit_code": 0,
 "interval_s": 1.0, "gpus": []}
EOF
gen=$(($(date +%s) - start))
expect_eq "24h x 8 GPUs: 686,400 GPU rows generated (in ${gen}s)" 686401 "$(wc -l <"$big/gpu.csv")"
start=$(date +%s)
# The optimised build: this measures the report's size and the work it does, not ASan.
timeout 120 "$RUNMON_REL" report "$big" -o "$T/big.html" >/dev/null 2>"$T/big.err"; rc=$?
took=$(($(date +%s) - start))
expect_eq "24h x 8 GPUs: report exits 0 (in ${took}s)" 0 "$rc"
bsz=$(wc -c <"$T/big.html" 2>/dev/null || echo 0)
echo "# 24h x 8 GPU report: $bsz bytes in ${took}s (gpu.csv $(wc -c <"$big/gpu.csv") bytes)"
check "24h x 8 GPUs: under 2 MB ($bsz bytes)" test "$bsz" -gt 0 -a "$bsz" -lt 2000000
check "24h x 8 GPUs: finishes within 60 s (${took}s)" test "$took" -lt 60
pts=$(grep -o 'data-series="gpu0.util"[^>]* points="[^"]*"' "$T/big.html" | sed 's/.*points="//; s/"$//' | tr ' ' '\n' | grep -c .)
check "24h x 8 GPUs: at most ~1000 points per series ($pts)" test "$pts" -gt 100 -a "$pts" -le 1000
check "24h x 8 GPUs: the 2-second spike of GPU 3 reaches the top" grep -Eq 'data-series="gpu3.util"[^>]* points="[^"]*,8\.0( |")' "$T/big.html"
check "24h x 8 GPUs: GPU 0 never does" test -z "$(grep -Eo 'data-series="gpu0.util"[^>]* points="[^"]*,8\.0( |")' "$T/big.html")"
expect_eq "24h x 8 GPUs: the outage breaks each GPU line" 2 "$(count 'data-series="gpu5.power"' "$T/big.html")"
check "24h x 8 GPUs: 20,000 steps merged into few bands" test "$(count '<g class="phase"' "$T/big.html")" -le 3000
expect_eq "24h x 8 GPUs: the alert is marked" 1 "$(count 'class="alert warning"' "$T/big.html")"
# A pixel is 77 s: the 4-s runs 56 s apart merge, the outage splits them (1,200 runs before it,
# 230 after).
expect_eq "24h x 8 GPUs: GPU 5's throttling, merged into two spans" 2 "$(count '<rect class="thr" data-reason="sw_power_cap" data-gpu="5"' "$T/big.html")"
check "24h x 8 GPUs: ... titled with the runs merged" grep -q '<title>GPU 5 clocks held back: sw_power_cap, 4800.0 s in 1200 runs over 71944.0 s</title>' "$T/big.html"
check "24h x 8 GPUs: ... and the other GPUs never" test "$(count '<rect class="thr"' "$T/big.html")" -eq 2
if [ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ]; then
    browse dom "$T/big.html" "$T/big.dom"
    expect_match "browser: the 24-hour report renders" 'data-ok="1"' "$(grep -o '<body[^>]*>' "$T/big.dom")"
fi

done_testing
