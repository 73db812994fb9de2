#!/usr/bin/env bash
# Mutation test of tests/chaos.sh (issue 35, item 5): a chaos test that passes whatever the sink
# does proves nothing. Each tests/mutants/NAME.patch breaks one promise of the sink (retention
# over-prunes, a lost drop count, an ended line written twice, a live file pruned, recovery
# cutting too far, an end status dropped); it is applied to a copy of the sources under
# build/mutant-NAME/ (the tree itself is never changed), the ASan+UBSan runmon is built there,
# and a short chaos run (MUTANT_ROUNDS rounds, default 3, with seeds from MUTANT_SEEDS,
# default "1 2": the next seed only while the mutant survives) must fail on it. The same
# rounds on the unmutated runmon run first: they must pass, or a failure would prove nothing.
# Ends with "N of M mutants caught"; exits 0 only when all are. RUNMON, BUILD, FAKEBIN,
# FIXTURES as for tests/chaos.sh; MUTANTS: the names to run (default: all).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
: "${BUILD:?run through make chaos-mutants}"
: "${RUNMON:=$BUILD/asan/runmon}"
rounds=${MUTANT_ROUNDS:-3}
seeds=${MUTANT_SEEDS:-1 2}
names=${MUTANTS:-$(cd "$here/mutants" && ls ./*.patch | sed 's|^\./||; s|\.patch$||')}
t0=$(date +%s)

chaos() { # RUNMON SEED LOG: one short chaos run; its exit status
    env RUNMON="$1" CHAOS_ROUNDS="$rounds" CHAOS_SEED="$2" bash "$here/chaos.sh" >"$3" 2>&1
}
failed_checks() { grep '^not ok' "$1" | sed 's/^not ok [0-9]* - //; s/^round [^:]*: //' | sort -u | head -3 | tr '\n' ';'; }

mkdir -p "$BUILD"
for s in $seeds; do
    if ! chaos "$RUNMON" "$s" "$BUILD/chaos-control.$s.log"; then
        echo "control: the chaos run (seed $s) fails on the unmutated runmon: $(failed_checks "$BUILD/chaos-control.$s.log")"
        echo "see $BUILD/chaos-control.$s.log"
        echo "0 of 0 mutants caught"
        exit 1
    fi
done
echo "control: unmutated runmon passes $rounds rounds with seeds $seeds"

caught=0 total=0
for name in $names; do
    total=$((total + 1))
    dir=$BUILD/mutant-$name
    rm -rf "$dir"
    mkdir -p "$dir/src"
    # The sources a build needs, as they are in the working tree.
    (cd "$root" && tar -cf - Makefile VERSION base model runlog monitor summary sink report sweep record cli) |
        tar -xf - -C "$dir/src"
    if ! patch -s -d "$dir/src" -p1 <"$here/mutants/$name.patch" >"$dir/patch.log" 2>&1; then
        echo "mutant $name: the patch does not apply ($dir/patch.log): not caught"
        continue
    fi
    if ! make -s -j2 -C "$dir/src" BUILD=build CC="${CC:-cc}" build/asan/runmon >"$dir/build.log" 2>&1; then
        echo "mutant $name: does not build ($dir/build.log): not caught"
        continue
    fi
    verdict="survived (seeds $seeds)"
    for s in $seeds; do
        if ! chaos "$dir/src/build/asan/runmon" "$s" "$dir/chaos.$s.log"; then
            verdict="caught (seed $s): $(failed_checks "$dir/chaos.$s.log")"
            caught=$((caught + 1))
            break
        fi
    done
    echo "mutant $name: $verdict"
done
echo "# $(($(date +%s) - t0)) s"
echo "$caught of $total mutants caught"
[ "$caught" = "$total" ]
