#!/usr/bin/env bash
# proc.csv accounts for all of the command's CPU time: the sum of cpu_pct/100 x the row's
# interval equals what the shell's own `times` says it used, including the command's first
# interval (the first row counts from the sample before the command started).
. "$(dirname "$0")/lib.sh"

export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
P=$T/cpu
# Burns CPU from its first instant for 2 s of wall time, then writes its CPU time and sleeps
# past at least one more sample, so no burnt tick falls after the last row. With -i 1 the
# first interval holds about a second of the burn.
"$RUNMON" record -q --no-gpu -o "$P" -i 1 -- bash -c '
    end=$((${EPOCHREALTIME/./} + 2000000)); while [ ${EPOCHREALTIME/./} -lt $end ]; do :; done
    times >"$0"; sleep 1.6' "$T/times"
expect_eq "record: exit 0" 0 $?
S=$(session_dir "$P")
# `times`: "XmY.YYYs XmY.YYYs" for the shell, then for its children; all four summed.
used=$(tr ' ' '\n' <"$T/times" | awk -F'[ms]' 'NF >= 2 {t += $1 * 60 + $2} END {printf "%.3f", t}')
# ts is YYYY-MM-DDTHH:MM:SS.mmm...: spacing from the time of day; the first row's interval is
# the sampling interval (it counts from the sampler's previous tick).
got=$(awk -F, -v iv=1 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
    {split(substr($1, 12, 12), h, ":"); t = h[1] * 3600 + h[2] * 60 + h[3]
     dt = n++ ? t - prev : iv; if (dt < 0) dt += 86400; prev = t
     if ($c["cpu_pct"] != "") sum += $c["cpu_pct"] / 100 * dt}
    END {printf "%.3f", sum}' "$S/proc.csv")
echo "# times: $used s; proc.csv: $got s over $(rows "$S/proc.csv") rows"
check "the command burnt CPU ($used s)" awk -v u="$used" 'BEGIN {exit !(u >= 0.5)}'
check "proc.csv: sum of cpu_pct x interval ($got s) = the command's CPU time ($used s) +- 10% + 0.25 s" \
    awk -v u="$used" -v g="$got" 'BEGIN {d = g - u; if (d < 0) d = -d; exit !(d <= 0.1 * u + 0.25)}'
first=$(awk -F, 'NR == 2 {print $NF}' "$S/proc.csv")
check "proc.csv: the first row has a cpu_pct ($first)" test -n "$first"

done_testing
