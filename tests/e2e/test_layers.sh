#!/usr/bin/env bash
# The include-direction check (tests/check_layers.sh) as part of make test, and a proof that
# it can fail: a copy of the tree with one upward include must be rejected.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(bash "$root/tests/check_layers.sh")
if grep -q '^not ok' <<<"$out"; then
    not_ok "the tree's includes point down"
    sed 's/^/#   /' <<<"$out"
else
    ok "the tree's includes point down"
fi
mkdir -p "$T/tree" && cp -r "$root"/{base,model,runlog,monitor,summary,sink,report,record,cli,tests} "$T/tree/" 2>/dev/null
(cd "$T/tree" && git init -q && git add -A >/dev/null 2>&1)
echo '#include "report/prom.h"' >>"$T/tree/base/rm_time.c"
out=$(bash "$T/tree/tests/check_layers.sh")
out=$(sed 's/^/# /' <<<"$out")
expect_match "an upward include is reported" "not ok .* layer base includes upwards" "$out"
expect_match "with the file and the direction" "base/rm_time.c includes report/prom.h \\(up: base -> report\\)" "$out"
done_testing
