#!/usr/bin/env bash
# The layer checks (tests/check_layers.sh) as part of make test, and a proof that each can
# fail: a copy of the tree with one upward include must be rejected, and copies of the built
# objects with one object that calls upwards (a layer above, a summary/ file above it in the
# engine's order, monitor/ from the offline side).
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(bash "$root/tests/check_layers.sh")
if grep -q '^not ok' <<<"$out"; then
    not_ok "the tree's includes and objects point down"
    sed 's/^/#   /' <<<"$out"
else
    ok "the tree's includes and objects point down"
fi
mkdir -p "$T/tree/build" && cp -r "$root"/{base,model,runlog,monitor,summary,sink,report,record,cli,tests} "$T/tree/" 2>/dev/null
cp -r "$BUILD/rel" "$T/tree/build/rel"
export BUILD=$T/tree/build
(cd "$T/tree" && git init -q && git add -A >/dev/null 2>&1)
echo '#include "report/prom.h"' >>"$T/tree/base/rm_time.c"
out=$(bash "$T/tree/tests/check_layers.sh")
out=$(sed 's/^/# /' <<<"$out")
expect_match "an upward include is reported" "not ok .* layer base includes upwards" "$out"
expect_match "with the file and the direction" "base/rm_time.c includes report/prom.h \\(up: base -> report\\)" "$out"
expect_match "the objects of the tree as it is call nothing upwards" \
    "ok [0-9]+ - objects call only.*ok [0-9]+ - summary/'s files.*ok [0-9]+ - the offline side" "$(tr '\n' ' ' <<<"$out")"

# The objects: call_in FILE SYMBOL writes FILE.c (a function calling SYMBOL) into the copy
# and compiles it as its object FILE.o, replacing what was there.
call_in() {
    echo "void $2(void); void zz_$(basename "$1")(void) { $2(); }" >"$T/tree/$1.c"
    cc -c -o "$T/tree/build/rel/$1.o" -x c "$T/tree/$1.c"
}
git -C "$T/tree" checkout -q -- base/rm_time.c 2>/dev/null || sed -i '$d' "$T/tree/base/rm_time.c"
call_in base/zz_up rm_summary_print_json
out=$(bash "$T/tree/tests/check_layers.sh" | sed 's/^/# /')
expect_match "an object calling a layer above is reported" "not ok .* objects call only their own layer" "$out"
expect_match "with the object, the symbol, its file and the direction" \
    "base/zz_up.o calls rm_summary_print_json of report/output.c \\(up: base -> report\\)" "$out"
rm "$T/tree/base/zz_up.c" "$T/tree/build/rel/base/zz_up.o"
cp "$T/tree/build/rel/summary/spans.o" "$T/spans.o"
call_in summary/spans rm_summary_run_jobs
out=$(bash "$T/tree/tests/check_layers.sh" | sed 's/^/# /')
expect_match "a summary/ file calling one above it in the order is reported" \
    "summary/spans.o calls rm_summary_run_jobs of summary/pool.c \\(up the file order\\)" "$out"
expect_match "  while the layers still pass" "ok [0-9]+ - objects call only their own layer" "$out"
cp "$root/summary/spans.c" "$T/tree/summary/spans.c" && cp "$T/spans.o" "$T/tree/build/rel/summary/spans.o"
# A summary/ file missing from the order is reported even when it calls one in it (reading
# the order's rank of an unknown file must not give it a place).
call_in summary/zz_new rm_stat_add
out=$(bash "$T/tree/tests/check_layers.sh" | sed 's/^/# /')
expect_match "a summary/ file with no place in the order is reported" \
    "summary/zz_new.c has no place in SUMMARY_ORDER" "$out"
rm "$T/tree/summary/zz_new.c" "$T/tree/build/rel/summary/zz_new.o"
call_in report/zz_live rm_stream_open
out=$(bash "$T/tree/tests/check_layers.sh" | sed 's/^/# /')
expect_match "the offline side calling monitor/ is reported" \
    "report/zz_live.o calls rm_stream_open of monitor/stream.c \\(the offline side uses no monitor/\\)" "$out"
expect_match "  while the layers still pass" "ok [0-9]+ - objects call only their own layer" "$out"
done_testing
