#!/usr/bin/env bash
# What the multi-axis tile kernel (crates/stridekit/src/copy/kernels/tile_copy.cu) compiles
# to, without a GPU: for each variant (element bytes, read bytes, write bytes) the
# registers and spills `ptxas -v` reports for sm_90, and in the SASS the instructions of the
# tile loop (from the first barrier after the block's tables to the last) with its global
# and shared-memory accesses. Instructions an element are what bound byte and halfword
# tiles (BENCHMARKS.md, "Byte and halfword tiles").
#
#   bash bench/kernel_lab/tile_sass.sh [SRC_DIR] [VARIANT ...]
#
# SRC_DIR (default: this checkout) holds crates/stridekit/src/copy/kernels; compare two
# commits by passing a worktree of each. VARIANT is EB:READ:WRITE in bytes (default: every
# one-element-read variant and a few wider ones). Needs nvcc and nvdisasm on PATH or in
# the `nvidia-cuda-nvcc` and `nvidia-cuda-nvdisasm` wheels' folder given by CUDA_BIN.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
src=${1:-$here}
shift || true
kernels="$src/crates/stridekit/src/copy/kernels"
[ -f "$kernels/tile_copy.cu" ] || { echo "no tile_copy.cu under $kernels" >&2; exit 2; }
if [ -n "${CUDA_BIN:-}" ]; then export PATH="$CUDA_BIN:$PATH"; fi
command -v nvcc >/dev/null && command -v nvdisasm >/dev/null ||
    { echo "nvcc and nvdisasm are needed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm; CUDA_BIN=...)" >&2; exit 2; }
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(1:1:1 1:1:4 1:1:16 2:2:2 2:2:16 4:4:4 4:4:16 8:8:8 16:16:16
    1:4:4 1:16:16 2:16:16 4:16:16)
# The element type of a word of `bytes`, as `word_type` in copy/kernel/mod.rs names it.
word_type() {
    case $1 in 1) echo "unsigned char" ;; 2) echo "unsigned short" ;; 4) echo "unsigned int" ;;
    8) echo "unsigned long long" ;; 16) echo b16 ;; *) return 1 ;; esac
}
# Reads a thread keeps in flight (`TilePlan::loads_per_thread`).
loads() { if [ "$1" -le 2 ]; then echo 16; else echo 8; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-10s %5s %7s %6s %5s %5s %5s %5s\n' variant regs spilled loop LDG STS LDS STG
for v in "${variants[@]}"; do
    IFS=: read -r eb rb wb <<<"$v"
    {
        echo "#define ELEM $(word_type "$eb")"
        echo "#define PMAX 8"
        echo "#define EB $eb"
        echo "#define RWORD $(word_type "$rb")"
        echo "#define RW $((rb / eb))"
        echo "#define WWORD $(word_type "$wb")"
        echo "#define WW $((wb / eb))"
        echo "#define UNR $(loads "$rb")"
        cat "$kernels/prelude.cu" "$kernels/tile_copy.cu"
    } >"$work/k.cu"
    info=$(nvcc -arch=sm_90 -cubin -Xptxas -v -o "$work/k.cubin" "$work/k.cu" 2>&1)
    regs=$(grep -Eo 'Used [0-9]+ registers' <<<"$info" | grep -Eo '[0-9]+')
    spill=$(grep -Eo '[0-9]+ bytes spill stores' <<<"$info" | grep -Eo '^[0-9]+')
    nvdisasm "$work/k.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' |
        sed -E 's@^\s+/\*[0-9a-f]+\*/\s*@@; s@\s*;.*@@' >"$work/k.sass"
    # After the first barrier (the tables are built) up to the last: the first tile's
    # reads, then the tile loop with the next tile's.
    first=$(grep -n 'BAR.SYNC' "$work/k.sass" | head -1 | cut -d: -f1)
    last=$(grep -n 'BAR.SYNC' "$work/k.sass" | tail -1 | cut -d: -f1)
    sed -n "$((first + 1)),${last}p" "$work/k.sass" >"$work/loop.sass"
    count() { grep -c -E "$1" "$work/loop.sass" || true; }
    printf '%-10s %5s %7s %6s %5s %5s %5s %5s\n' "$v" "$regs" "${spill:-0}" \
        "$(grep -c . "$work/loop.sass")" "$(count 'LDG')" "$(count 'STS')" "$(count 'LDS')" \
        "$(count 'STG')"
done
echo "(loop: SASS instructions from the first barrier to the last: the first tile's reads,"
echo " then the tile loop with the next tile's; LDG/STS/LDS/STG: those among them)"
