#!/usr/bin/env bash
# Bash completion (contrib/bash-completion/runmon), called as bash calls it, against the
# runmon under test. The same cases run on the installed file in test_package.sh.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/e2e/completion_cases.sh"

# runmon on PATH, as a user has it.
mkdir -p "$T/bin" && ln -s "$RUNMON" "$T/bin/runmon"
export PATH="$T/bin:$PATH"

# A sink: two sessions, and what is not one (a link, a hidden folder, a folder without
# session.json) and must never be offered.
sink=$T/sink
for id in 20261123T070000Z-node1-100 20261123T080000Z-node1-200; do
    mkdir -p "$sink/$id" && echo '{}' >"$sink/$id/session.json"
done
ln -s 20261123T080000Z-node1-200 "$sink/latest"
mkdir -p "$sink/.hidden" "$sink/not-a-session" && echo '{}' >"$sink/.hidden/session.json"
ln -s "$sink/20261123T070000Z-node1-100" "$sink/linked-session"
completion_cases "$ROOT/contrib/bash-completion/runmon" "$sink" \
    "20261123T070000Z-node1-100 20261123T080000Z-node1-200"
done_testing
