#!/usr/bin/env bash
# The layers of docs/ARCHITECTURE.md, lowest first. A file may include headers of its own
# folder and of folders below it, never above; so there can be no cycle between folders.
# Then the same for what the built objects call (nm over $BUILD/rel/LAYER/*.o, the objects
# of this tree's sources; make all builds them): no object uses a symbol defined in a layer
# above its own; within summary/, no file uses one of a file above it in SUMMARY_ORDER (the
# engine's one-way order); and the offline side (summary/, sink/, report/ and sweep/ but for
# the live sink thread) uses nothing of monitor/.
# Prints TAP: one line per layer, one for files outside any layer, three for the objects.
set -u
cd "$(dirname "$0")/.."
LAYERS=(base model runlog monitor summary sink report sweep record cli)
# summary/'s files, lowest first: each may use only those before it.
SUMMARY_ORDER=(stats sample pack csvread gpucsv dmon_read hostcsv apps smi_apps iocsv stallcsv objects metrics runlog_read segments spans
    fileagg inputs sniff period scan chunks segagg pool merge held build summary)
# The parts of the offline layers that run while recording, beside monitor/.
LIVE=(sink/sink)
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

# ---- what the objects call ------------------------------------------------------------------
OBJ=${BUILD:-$(pwd)/build}/rel
missing="" objs=()
for layer in "${LAYERS[@]}"; do
    for c in "$layer"/*.c; do
        [ -f "$c" ] || continue
        o=$OBJ/${c%.c}.o
        if [ -f "$o" ]; then objs+=("$o"); else missing+=" ${c%.c}.o"; fi
    done
done
n=$((n + 1))
if [ -n "$missing" ]; then
    echo "not ok $n - objects not built under $OBJ (make all):$missing"
    echo "1..$n"
    exit 0
fi
# "OWNER D|U SYMBOL" for every object, OWNER as layer/file; awk joins each use to its definer.
for o in "${objs[@]}"; do
    own=${o#"$OBJ"/}
    own=${own%.o}
    nm -P -g "$o" | awk -v own="$own" '$2 != "w" && $2 != "v" { print own, ($2 == "U" ? "U" : "D"), $1 }'
done >"${TMPDIR:-/tmp}/check_layers.$$"
report=$(awk -v layers="${LAYERS[*]}" -v sorder="${SUMMARY_ORDER[*]}" -v live="${LIVE[*]}" '
    BEGIN {
        nl = split(layers, l, " "); for (i = 1; i <= nl; i++) rank[l[i]] = i
        ns = split(sorder, so, " "); for (i = 1; i <= ns; i++) srank[so[i]] = i
        nv = split(live, lv, " "); for (i = 1; i <= nv; i++) islive[lv[i]] = 1
    }
    { split($1, p, "/"); layer[$1] = p[1]; file[$1] = p[2] }
    $2 == "D" { def[$3] = $1; next }
    { use[++nu] = $1 " " $3 }
    END {
        for (k = 1; k <= nu; k++) {
            split(use[k], u, " "); o = u[1]; s = u[2]
            if (!(s in def) || def[s] == o) continue
            d = def[s]; lo = layer[o]; ld = layer[d]
            if (rank[ld] > rank[lo])
                print "layer " o ".o calls " s " of " d ".c (up: " lo " -> " ld ")"
            # "in" first: reading srank[x] would create x and hide a file missing from the order
            if (lo == "summary" && ld == "summary" && (file[d] in srank) && (file[o] in srank) &&
                srank[file[d]] > srank[file[o]])
                print "order " o ".o calls " s " of " d ".c (up the file order)"
            if ((lo == "summary" || lo == "sink" || lo == "report" || lo == "sweep") && !(o in islive) && ld == "monitor")
                print "offline " o ".o calls " s " of " d ".c (the offline side uses no monitor/)"
        }
        for (o in file)
            if (layer[o] == "summary" && !(file[o] in srank))
                print "order " o ".c has no place in SUMMARY_ORDER"
    }' "${TMPDIR:-/tmp}/check_layers.$$" | sort -u)
rm -f "${TMPDIR:-/tmp}/check_layers.$$"
verdict() { # KIND DESCRIPTION
    local bad
    bad=$(grep "^$1 " <<<"$report" | sed "s/^$1 //")
    if [ -z "$bad" ]; then echo "ok $n - $2"; else
        echo "not ok $n - $2"; sed 's/^/#  /' <<<"$bad"; fi
}
verdict layer "objects call only their own layer and layers below"
n=$((n + 1))
verdict order "summary/'s files call only files below them in SUMMARY_ORDER"
n=$((n + 1))
verdict offline "the offline side (summary/, sink/, report/, sweep/; not ${LIVE[*]}) calls nothing of monitor/"
echo "1..$n"
