#!/usr/bin/env bash
# Issue 22 section 1: which power fields the driver offers, probed once at the start, joined
# to the default fields, and said in session.json with the field the energy rule uses.
. "$(dirname "$0")/lib.sh"
export FAKE_SMI_CAPTURES=$FIXTURES/captures
unset FAKE_SMI_VARY FAKE_SMI_OVERRIDE FAKE_SMI_STATE_DIR FAKE_SMI_FAULT_ONLY FAKE_SMI_NOISE \
    FAKE_SMI_HANG_AFTER FAKE_SMI_START_DELAY_MS FAKE_SMI_GPUS FAKE_SMI_DROP_FIELDS FAKE_SMI_POWER_SEED
rec() { # rec NAME [record options...]: records `sleep 0.5` into $T/NAME
    local name=$1
    shift
    PATH="$FAKEBIN:$PATH" "$RUNMON" record -q -o "$T/$name" -i 0.2 "$@" -- sleep 0.5
    echo "$T/$name/$(readlink "$T/$name/latest")"
}
fields() { jq -c '[.power.fields[]]' "$1/session.json"; }

d=$(FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load rec h100)
expect_eq "H100, driver 590: every power field supported" \
    '["supported","supported","supported","supported"]' "$(fields "$d")"
expect_eq "  in the order power.draw, .instant, .average, enforced.power.limit" \
    '["power.draw","power.draw.instant","power.draw.average","enforced.power.limit"]' \
    "$(jq -c '.power.fields | keys_unsorted' "$d/session.json")"
expect_match "  and recorded: gpu.csv's header has them" \
    'power\.draw,.*power\.draw\.instant,power\.draw\.average,enforced\.power\.limit$' "$(head -1 "$d/gpu.csv")"
expect_match "  the same query found clocks.max.sm and the throttle reasons' mask: recorded before them" \
    'clocks\.current\.memory,clocks\.max\.sm,clocks_event_reasons\.active,power\.draw\.instant' "$(head -1 "$d/gpu.csv")"
expect_eq "  session.json says which field the energy rule uses, and why" \
    '["power.draw",true]' "$(jq -c '[.power.energy_field, (.power.energy_field_why | test("1 s average"))]' "$d/session.json")"

d=$(FAKE_SMI_MODEL=rtx2080super-595.71.05-linux-load rec turing)
expect_eq "RTX 2080 SUPER: power.draw.average is [N/A] there: not supported, not recorded" \
    '["supported","supported","not_supported","supported"]' "$(fields "$d")"
check "  gpu.csv without power.draw.average" bash -c "! head -1 '$d/gpu.csv' | grep -q power.draw.average"

d=$(FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load \
    FAKE_SMI_DROP_FIELDS=power.draw.instant,power.draw.average rec old)
expect_eq "an older driver that rejects the new fields: asked one at a time" \
    '["supported","unknown_field","unknown_field","supported"]' "$(fields "$d")"
expect_match "  and the query it records asks for none it rejects" \
    'power\.draw,temperature\.gpu,clocks\.current\.sm,clocks\.current\.memory,enforced\.power\.limit$' \
    "$(head -1 "$d/gpu.csv")"
check "  its rows are data" test "$(wc -l <"$d/gpu.csv")" -ge 2
check "  and no clock field: they are asked only in the one query" \
    bash -c "! head -1 '$d/gpu.csv' | grep -q clocks.max.sm"

d=$(FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load FAKE_SMI_OVERRIDE='clocks_event_reasons.active=[N/A]' rec nomask)
expect_match "a driver printing [N/A] for the mask: clocks.max.sm recorded, the mask not" \
    'clocks\.current\.memory,clocks\.max\.sm,power\.draw\.instant' "$(head -1 "$d/gpu.csv")"

d=$(FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load \
    FAKE_SMI_OVERRIDE='enforced.power.limit=[Not Supported]' rec notsup)
expect_eq "[Not Supported] on every GPU: not supported" \
    '["supported","supported","supported","not_supported"]' "$(fields "$d")"

d=$(FAKE_SMI_MODEL=h100-80gb-hbm3-590.48.01-linux-load rec own --gpu-fields timestamp,index,power.draw)
expect_eq "--gpu-fields: the user's list as given, no probe" '[false,null]' \
    "$(jq -c '[.power.probed, .power.fields["power.draw.instant"]]' "$d/session.json")"
expect_eq "  gpu.csv has only those fields" 'ts,timestamp,index,power.draw' "$(head -1 "$d/gpu.csv")"
done_testing
