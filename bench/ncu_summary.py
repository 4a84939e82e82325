#!/usr/bin/env python3
"""The table of `bench/profile.sh`'s CSV files: python3 bench/ncu_summary.py DIR/*.csv.

Per kernel of each case: its time, the DRAM bytes it moved and the rate, DRAM and SM
throughput (% of peak), global sectors per request (loads, stores), achieved occupancy,
shared-memory bank conflicts, instructions issued, and the two largest stall reasons
(warps stalled per issued instruction). Where the profiles hold `PROFILE_UNITS=1`'s
metrics, a second table: L2 and L1 throughput (% of peak), L2 sectors and shared-memory
wavefronts a byte of DRAM traffic, LSU and uniform-pipe instructions (millions) and the
schedulers' issue-active share.
"""
import csv
import io
import sys


def num(s):
    try:
        return float(s.replace(",", ""))
    except (ValueError, AttributeError):
        return None


def rows(path):
    text = open(path).read()
    case = ""
    for line in text.splitlines():
        if line.startswith("# case: "):
            case = line[len("# case: "):]
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if not lines:
        return case, []
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    out = [r for r in reader if r.get("ID", "").isdigit()]
    return case, out


def main():
    print("| case | kernel | µs | DRAM MB | DRAM GB/s | DRAM % | SM % | ld sect/req | st sect/req | occupancy % | bank conflicts | instructions (M) | top stalls |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    profiles = [rows(path) for path in sys.argv[1:]]
    for case, rs in profiles:
        for r in rs:
            g = lambda k: num(r.get(k, ""))
            t_ns = g("gpu__time_duration.sum")
            # ncu reports duration in ns or us and bytes in (M/G)bytes by its units row;
            # the raw page with --csv gives base units when unit scaling is off.
            rd, wr = g("dram__bytes_read.sum") or 0, g("dram__bytes_write.sum") or 0
            stalls = []
            for k, v in r.items():
                if k.startswith("smsp__average_warps_issue_stalled_") and num(v):
                    stalls.append((num(v), k[len("smsp__average_warps_issue_stalled_"):-len("_per_issue_active.ratio")]))
            stalls.sort(reverse=True)
            top = ", ".join(f"{n} {v:.1f}" for v, n in stalls[:2])
            ldq, lds = g("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            stq, sts = g("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"), g("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
            name = r.get("Kernel Name", "")[:40]
            us = t_ns / 1e3 if t_ns else 0
            mb = (rd + wr) / 1e6
            print(f"| {case} | {name} | {us:.1f} | {mb:.1f} | {(rd + wr) / t_ns if t_ns else 0:.0f} | "
                  f"{g('dram__throughput.avg.pct_of_peak_sustained_elapsed') or 0:.0f} | {g('sm__throughput.avg.pct_of_peak_sustained_elapsed') or 0:.0f} | "
                  f"{lds / ldq if ldq else 0:.1f} | {sts / stq if stq else 0:.1f} | {g('sm__warps_active.avg.pct_of_peak_sustained_active') or 0:.0f} | "
                  f"{g('l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum') or 0:.0f} | {(g('smsp__inst_executed.sum') or 0) / 1e6:.1f} | {top} |")
    units_table(profiles)


# (metric, format, divisor) of the second table's plain columns, in its order around the
# two per-byte columns.
UNITS = [
    ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "{:.0f}", 1),
    ("l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "{:.0f}", 1),
    ("smsp__issue_active.avg.pct_of_peak_sustained_active", "{:.0f}", 1),
    ("smsp__inst_executed_pipe_lsu.sum", "{:.1f}", 1e6),
    ("smsp__inst_executed_pipe_uniform.sum", "{:.1f}", 1e6),
]


def units_table(profiles):
    """What each unit had to do (PROFILE_UNITS=1), where the profiles hold it."""
    lines = []
    for case, rs in profiles:
        for r in rs:
            g = lambda k: num(r.get(k, ""))
            if g(UNITS[0][0]) is None:
                continue
            dram = (g("dram__bytes_read.sum") or 0) + (g("dram__bytes_write.sum") or 0)
            cells = ["-" if g(key) is None else fmt.format(g(key) / div) for key, fmt, div in UNITS]
            per_byte = lambda v: "-" if v is None or not dram else f"{v / dram:.3f}"
            cells[3:3] = [per_byte(g("lts__t_sectors.sum")),
                          per_byte(g("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"))]
            kernel = r.get("Kernel Name", "")[:40]
            lines.append(f"| {case} | {kernel} | " + " | ".join(cells) + " |")
    if lines:
        print()
        print("| case | kernel | L2 % | L1 % | issue active % | L2 sectors / DRAM byte | shared wavefronts / DRAM byte | LSU instr (M) | uniform instr (M) |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
