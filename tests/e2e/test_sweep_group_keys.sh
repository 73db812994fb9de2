#!/usr/bin/env bash
# Issue 36 §8: `runmon sessions --summary --group-by bs,lr` groups by several parameters (one
# row per combination of their values, in text, csv and json); an unknown or repeated key is
# refused (exit 2) by name.
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
K=$T/sweep
run() { "$RUNMON" record -q -o "$K" -i 0.2 --sweep g --param lr="$1" --param bs="$2" --param seed="$3" -- sleep 0.3; }
run 0.1 32 1
run 0.1 32 2
run 0.1 64 1
run 0.01 32 1
j=$("$RUNMON" sessions "$K" --summary --group-by bs,lr --format json); rc=$?
expect_eq "json: exit 0" 0 "$rc"
expect_eq "json: one group per combination, in the order of their first runs" \
    '[{"bs":32,"lr":0.1},{"bs":64,"lr":0.1},{"bs":32,"lr":0.01}]' "$(jq -c '[.groups[].params]' <<<"$j")"
expect_eq "json: runs per group" "[2,1,1]" "$(jq -c '[.groups[].runs]' <<<"$j")"
expect_eq "json: param and value as arrays" '["bs","lr"] [32,0.1]' \
    "$(jq -c '.groups[0].param' <<<"$j") $(jq -c '.groups[0].value' <<<"$j")"
expect_eq "json: the group's mean over its two runs" \
    "$(jq '[.sessions[] | select(.params.bs == 32 and .params.lr == 0.1) | .duration_s] | add / 2 * 1000 | round' <<<"$j")" \
    "$(jq '.groups[0].figures.duration_s.mean * 1000 | round' <<<"$j")"
one=$("$RUNMON" sessions "$K" --summary --group-by lr --format json)
expect_eq "one key: param and value as before" '"lr" 0.1 {"lr":0.1}' \
    "$(jq -c '.groups[0].param' <<<"$one") $(jq -c '.groups[0].value' <<<"$one") $(jq -c '.groups[0].params' <<<"$one")"
csv=$("$RUNMON" sessions "$K" --summary --group-by bs,lr --format csv)
expect_match "csv: a column per key" "^param:bs,param:lr,runs," "$(head -1 <<<"$csv")"
expect_eq "csv: the keys' values" "32,0.1,2 64,0.1,1 32,0.01,1" "$(sed 1d <<<"$csv" | cut -d, -f1-3 | xargs)"
txt=$(COLUMNS=100 "$RUNMON" sessions "$K" --summary --group-by bs,lr --format text)
expect_match "text: a column per key" "^BS +LR +RUNS " "$txt"
expect_match "text: the combination's row" $'\n''32 +0\.1 +2 ' "$txt"
err=$("$RUNMON" sessions "$K" --summary --group-by bs,momentum 2>&1 >/dev/null); rc=$?
expect_eq "an unknown key: exit 2" 2 "$rc"
expect_match "an unknown key: named" "--group-by momentum: no run has that parameter" "$err"
err=$("$RUNMON" sessions "$K" --summary --group-by lr,lr 2>&1 >/dev/null); rc=$?
expect_eq "a key twice: exit 2" 2 "$rc"
expect_match "a key twice: said" "--group-by lr: named twice" "$err"
done_testing
