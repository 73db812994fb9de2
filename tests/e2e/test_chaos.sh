#!/usr/bin/env bash
# A short run of tests/chaos.sh (issues 27 and 35): 3 rounds of 8 recorders at once on one sink,
# with SIGKILLs at random moments, file-size limits, one retention limit per round and
# corruptions of index.jsonl, sink.json and state.json; after each round every folder is
# listed once with its true status, each session's listing and sink.json's totals are the
# bytes on disk, retention deleted exactly what its limit required, no whole line of a killed
# recorder's files was lost and nothing outside the sink is touched. `make chaos` runs
# CHAOS_ROUNDS of them (default 20); `make chaos-mutants` shows it failing on mutants.
exec env CHAOS_ROUNDS="${CHAOS_ROUNDS:-3}" bash "$(dirname "$0")/../chaos.sh"
