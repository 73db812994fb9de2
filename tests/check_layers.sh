#!/usr/bin/env bash
# The layers of docs/ARCHITECTURE.md, lowest first. A file may include headers of its own
# folder and of folders below it, never above; so there can be no cycle between folders.
# Prints TAP: one line per layer, plus one for files outside any layer.
set -u
cd "$(dirname "$0")/.."
LAYERS=(base model runlog monitor summary sink report record cli)
declare -A rank
for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done
n=0
for layer in "${LAYERS[@]}"; do
    bad=""
    for f in "$layer"/*.c "$layer"/*.h; do
        [ -f "$f" ] || continue
        while IFS= read -r inc; do
            dir=${inc%%/*}
            if [ -z "${rank[$dir]+x}" ]; then
                bad+=" $f includes $inc (no such layer);"
            elif [ "${rank[$dir]}" -gt "${rank[$layer]}" ]; then
                bad+=" $f includes $inc (up: $layer -> $dir);"
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
    n=$((n + 1))
    if [ -z "$bad" ]; then
        echo "ok $n - layer $layer includes only itself and layers below"
    else
        echo "not ok $n - layer $layer includes upwards"
        tr ';' '\n' <<<"$bad" | sed '/^ *$/d; s/^/#  /'
    fi
done
# Every C source of the program lives in a layer.
stray=$(git ls-files '*.c' '*.h' | grep -v -E "^($(IFS='|'; echo "${LAYERS[*]}"))/|^(tests|fuzz|bench|fixtures|python)/" || true)
n=$((n + 1))
if [ -z "$stray" ]; then echo "ok $n - every program source is in a layer folder"; else
    echo "not ok $n - sources outside the layers:"; sed 's/^/#  /' <<<"$stray"; fi
echo "1..$n"
