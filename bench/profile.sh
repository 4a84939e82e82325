#!/usr/bin/env bash
# Nsight Compute profiles of copy_bench cases, on the GPU machine:
#   bench/profile.sh OUTDIR "case name" ["case name" ...]
#   bench/profile.sh --random OUTDIR 2 16 175     (cases of random_bench's set)
# Each case runs alone (`copy_bench --profile --only NAME`: its copy once, nothing else on
# the GPU) under ncu at the GPU's own clocks; one CSV per case lands in OUTDIR, and
# `python3 bench/ncu_summary.py OUTDIR/*.csv` prints the table for BENCHMARKS.md.
# PROFILE_UNITS=1 also asks what each unit had to do, for a kernel that reaches neither
# DRAM nor SM peak: L2 and L1 throughput, L2 sectors, shared-memory wavefronts, LSU and
# uniform-pipe instructions and the schedulers' issue-active share (ncu_summary.py's
# second table). Each such metric is first looked up in `ncu --query-metrics`: one this
# ncu does not know is left out and named, instead of failing the profile.
# PROFILE_SOURCE=1 also profiles each case a second time with the source counters (warp
# stall samples and instructions per SASS line) into OUTDIR/CASE.source.csv;
# `python3 bench/ncu_source_top.py OUTDIR/CASE.source.csv` prints the lines that stall most.
set -euo pipefail
random=0
if [ "$1" = "--random" ]; then
    random=1
    shift
fi
out=$1
shift
bin=${COPY_BENCH:-.gpu-build/examples/copy_bench}
rbin=${RANDOM_BENCH:-.gpu-build/examples/random_bench}
mkdir -p "$out"
stalls=""
for s in barrier long_scoreboard lg_throttle mio_throttle short_scoreboard drain membar wait \
    math_pipe_throttle not_selected dispatch_stall no_instruction imc_miss branch_resolving \
    tex_throttle; do
    stalls+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
done
metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"
metrics+=",dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed"
metrics+=",l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
metrics+=",l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
metrics+=",smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
metrics+=",launch__registers_per_thread,launch__grid_size,launch__block_size"
metrics+=",l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum${stalls}"
if [ "${PROFILE_UNITS:-0}" = 1 ]; then
    known=$(ncu --query-metrics --csv 2>/dev/null | cut -d, -f1 | tr -d '"')
    for m in lts__throughput.avg.pct_of_peak_sustained_elapsed \
        l1tex__throughput.avg.pct_of_peak_sustained_elapsed lts__t_sectors.sum \
        l1tex__data_pipe_lsu_wavefronts_mem_shared.sum smsp__inst_executed_pipe_lsu.sum \
        smsp__inst_executed_pipe_uniform.sum smsp__issue_active.avg.pct_of_peak_sustained_active; do
        if grep -qx "${m%%.*}" <<<"$known"; then
            metrics+=",$m"
        else
            echo "profile.sh: this ncu has no metric ${m%%.*}: left out" >&2
        fi
    done
fi
for name in "$@"; do
    slug=$(printf %s "$name" | tr -c 'A-Za-z0-9' '_' | cut -c1-80)
    if [ $random = 1 ]; then
        cmd=("$rbin" --profile "$name")
        label="random case $name"
    else
        cmd=("$bin" --profile --only "$name")
        label=$name
    fi
    ncu --clock-control none --print-units base --csv --page raw --metrics "$metrics" \
        "${cmd[@]}" > "$out/$slug.csv" 2> "$out/$slug.err" || {
        echo "ncu failed for $label (see $out/$slug.err)"
    }
    echo "# case: $label" >> "$out/$slug.csv"
    if [ "${PROFILE_SOURCE:-0}" = 1 ]; then
        ncu --clock-control none --section SourceCounters --page source --print-source sass \
            --csv "${cmd[@]}" > "$out/$slug.source.csv" 2> "$out/$slug.source.err" || {
            echo "ncu (source counters) failed for $label (see $out/$slug.source.err)"
        }
    fi
done
