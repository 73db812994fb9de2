#!/usr/bin/env bash
# Rewrites fixtures/golden/out/ from the current build. Only for a change that means to
# change output; say so in the commit. Usage: BUILD=build bash tests/golden/regen.sh
set -eu
cd "$(dirname "$0")/../.."
FIXTURES=$(pwd)/fixtures
BIN=$(realpath "${BUILD:-build}")/runmon
. tests/golden/lib.sh
mkdir -p fixtures/golden/out
rm -f fixtures/golden/out/*
golden_cases | while IFS=$'\t' read -r name args; do
    # shellcheck disable=SC2086 # args are words by design
    golden_run "$BIN" "$name" $args >"fixtures/golden/out/$name"
done
ls fixtures/golden/out | wc -l
