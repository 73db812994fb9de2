#!/usr/bin/env bash
# A short run of tests/chaos.sh (issue 27): 3 rounds of 8 recorders at once on one sink, with
# SIGKILLs at random moments, file-size limits and corruptions of index.jsonl, sink.json and
# state.json; after each round every folder is listed once with its true status, sink.json's
# totals are the bytes on disk and nothing outside the sink is touched. `make chaos` runs
# CHAOS_ROUNDS of them (default 20).
exec env CHAOS_ROUNDS="${CHAOS_ROUNDS:-3}" bash "$(dirname "$0")/../chaos.sh"
