#!/usr/bin/env python3
"""The table of `bench/profile.sh`'s CSV files: python3 bench/ncu_summary.py DIR/*.csv.

Per kernel of each case: its time, the DRAM bytes it moved and the rate, DRAM and SM
throughput (% of peak), global sectors per request (loads, stores), achieved occupancy,
shared-memory bank conflicts, instructions issued, and the two largest stall reasons
(warps stalled per issued instruction).
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
    for path in sys.argv[1:]:
        case, rs = rows(path)
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


if __name__ == "__main__":
    main()
