#!/usr/bin/env bash
# Builds the elementwise lab (elementwise_lab.cu) for elements of 1, 2, 4, 8 and 16 bytes at
# several depths (elements a thread keeps in flight), runs each on the random set's
# elementwise cases of that size (every one checked byte for byte first), and prints each
# case's time at every depth against the engine's own depth (`unroll` in
# copy/kernel/mod.rs). On the GPU machine: bash bench/kernel_lab/elementwise_lab.sh [OUT]
# (LAB_SMALL=1: the small many-axis permutes instead, raw times).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
# element type, bytes, the engine's depth, depths to try (for 2- and 4-byte elements the
# depth of dense destinations: those with gaps take 4 and 2, `CopyPlan::gapped_destination`)
variants=("unsigned char:1:4:1 2 4 8" "unsigned short:2:16:4 8 16" "unsigned int:4:8:2 4 8"
    "unsigned long long:8:2:1 2 4" "E16:16:1:1 2 4")
# Builds every variant of VARIANTS (as above) side by side, as PREFIX_<bytes>_<depth>.
build() { # prefix, variants...
    local prefix=$1 v elem bytes depths u
    shift
    for v in "$@"; do
        IFS=: read -r elem bytes _ depths <<<"$v"
        for u in $depths; do
            nvcc -O3 -arch=sm_90 -DLAB_UNR="$u" -DLAB_OFF=int -DLAB_ELEM="$elem" \
                -o "$out/${prefix}_${bytes}_$u" bench/kernel_lab/elementwise_lab.cu &
        done
    done
    wait
}
if [ -n "${LAB_SMALL:-}" ]; then
    # LAB_SMALL=1: the small permutes PyTorch copies faster, at every depth and at blocks
    # of 128 and 256 (the grid is one block per chunk either way: a fraction of a wave).
    build els "unsigned int:4:8:1 2 4 8" "unsigned long long:8:2:1 2 4"
    for b in "$out"/els_*; do for block in 128 256; do "$b" "$block" small; done; done | tee "$out/lab_small.txt"
    exit 0
fi
build el "${variants[@]}"
for v in "${variants[@]}"; do
    IFS=: read -r elem bytes engine depths <<<"$v"
    for u in $depths; do "$out/el_${bytes}_$u" 256 || echo "el_${bytes}_$u failed: $?"; done >"$out/lab_$bytes.txt" 2>&1
    echo "== ${bytes}-byte elements, time against the engine's depth $engine (256 threads, a block per chunk)"
    python3 - "$out/lab_$bytes.txt" "$engine" <<'PY'
import collections, re, sys
times, bad, failed = collections.defaultdict(dict), 0, []
for line in open(sys.argv[1]):
    if " failed: " in line:
        failed.append(line.strip())
    m = re.match(r"(random case \d+) .*?UNR +(\d+) .*?grid +(\d+) .*?: ([\d.]+) ms, .*?(\d+) bad bytes", line)
    if m:
        bad += int(m.group(5))
        case, unr, grid, ms = m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4))
        # Of the two grids, the larger: one block per chunk, as the engine launches.
        if unr not in times[case] or grid > times[case][unr][0]:
            times[case][unr] = (grid, ms)
for case, t in times.items():
    base = t[int(sys.argv[2])][1]
    print(f"{case:18s}", " ".join(f"{u:2d}: {t[u][1] / base:.3f}" for u in sorted(t)), f"(engine {base:.4f} ms)")
print("bad bytes:", bad, "| runs that failed:", failed or "none")
if bad or failed:
    sys.exit(1)
PY
done
