#!/usr/bin/env bash
# contrib/prometheus/runmon-alerts.yml: promtool accepts the rules, and its unit tests
# (runmon-alerts.test.yml: a live session, one killed with SIGKILL, one ended normally) pass.
. "$(dirname "$0")/lib.sh"

DIR=$(cd "$(dirname "$0")/../../contrib/prometheus" && pwd)
if ! command -v promtool >/dev/null 2>&1; then
    not_ok "promtool is installed" "install it with: .ci/deps.sh test  (Debian package prometheus)"
    done_testing
    exit 1
fi
ok "promtool is installed"
check "promtool check rules runmon-alerts.yml" \
    promtool check rules "$DIR/runmon-alerts.yml"
# promtool resolves rule_files relative to the test file.
promtool test rules "$DIR/runmon-alerts.test.yml" >"$T/test.out" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/#   /' "$T/test.out"
expect_eq "promtool test rules runmon-alerts.test.yml" 0 "$rc"
# The metric names the rules use are the ones runmon writes (docs/FORMATS.md's table).
for m in $(grep -o 'runmon_[a-z_]*' "$DIR/runmon-alerts.yml" | sort -u); do
    check "FORMATS.md documents $m" grep -q "\`$m" "$(dirname "$0")/../../docs/FORMATS.md"
done
done_testing
