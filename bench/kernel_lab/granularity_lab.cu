// How the H100's DRAM serves reads and writes that touch some sectors of a line and skip
// others: the copy `chunk` bytes at a time, every `every`-th chunk of the sparse side,
// packed on the other side. The sector-exact roofline counts only the 32-byte sectors
// touched; where the memory system fetches whole 64-byte pairs (or 128-byte lines) the
// achievable rate on sparse sides falls below it, and this lab measures by how much.
//
//   nvcc -O3 -arch=sm_90 -o granularity_lab bench/kernel_lab/granularity_lab.cu
//   ./granularity_lab        (each row: sector-exact efficiency, byte-exact checked)
#include "lab_common.h"

// dst chunk i <- src chunk i*every (sparse reads), 16 bytes a thread.
__global__ void sparse_read(const uint4* src, uint4* dst, size_t chunks, int chunk16, int every) {
    size_t n = chunks * chunk16;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x) {
        size_t c = t / chunk16, w = t % chunk16;
        dst[t] = src[c * every * chunk16 + w];
    }
}

// dst chunk i*every <- src chunk i (sparse writes of whole sectors).
__global__ void sparse_write(const uint4* src, uint4* dst, size_t chunks, int chunk16, int every) {
    size_t n = chunks * chunk16;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x) {
        size_t c = t / chunk16, w = t % chunk16;
        dst[c * every * chunk16 + w] = src[t];
    }
}

__global__ void check_sparse(const unsigned char* sparse, const unsigned char* packed, size_t chunks,
                             int chunk, int every, unsigned long long* bad) {
    unsigned long long m = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < chunks * chunk; i += (size_t)gridDim.x * blockDim.x)
        m += sparse[(i / chunk) * every * chunk + i % chunk] != packed[i];
    if (m) atomicAdd(bad, m);
}

int main() {
    Lab lab;
    const size_t packed_bytes = 128ull << 20;
    unsigned char *sp, *pk;
    CK(cudaMalloc(&sp, packed_bytes * 8));
    CK(cudaMalloc(&pk, packed_bytes));
    fill_random<<<1024, 256>>>(sp, packed_bytes * 8, 7);
    fill_random<<<1024, 256>>>(pk, packed_bytes, 9);
    CK(cudaDeviceSynchronize());
    printf("%-12s %6s %6s %10s %10s\n", "side", "chunk", "every", "ms", "sector-eff");
    for (int write = 0; write < 2; ++write)
        // 48-byte chunks: runs of three 16-byte elements (random cases 29 and 50: every
        // 2nd and every 4th), one sector of each written whole and one in part.
        for (int chunk : {16, 32, 48, 64, 128})
            for (int every : {1, 2, 4, 8}) {
                if ((chunk == 16 || chunk == 48) && every == 1) continue;
                const size_t chunks = packed_bytes / chunk;
                const int c16 = chunk / 16;
                const int blocks = (int)std::min<size_t>((chunks * c16 + 255) / 256, 132 * 64);
                auto go = [&] {
                    if (write)
                        sparse_write<<<blocks, 256, 0, lab.st>>>((const uint4*)pk, (uint4*)sp, chunks, c16, every);
                    else
                        sparse_read<<<blocks, 256, 0, lab.st>>>((const uint4*)sp, (uint4*)pk, chunks, c16, every);
                };
                const double ms = lab.median_ms(go);
                CK(cudaMemset(lab.bad, 0, 8));
                check_sparse<<<1024, 256>>>(sp, pk, chunks, chunk, every, lab.bad);
                unsigned long long bad = 0;
                CK(cudaMemcpy(&bad, lab.bad, 8, cudaMemcpyDeviceToHost));
                // Sectors the sparse side touches (the pattern repeats every 32 chunks):
                // read, each once; written, each once and a partially written one read too.
                size_t touched = 0, partial = 0;
                for (size_t c = 0; c < 32; ++c) {
                    const size_t lo = c * every * chunk, hi = lo + chunk;
                    for (size_t sec = lo / 32; sec * 32 < hi; ++sec) {
                        ++touched;
                        partial += sec * 32 < lo || sec * 32 + 32 > hi;
                    }
                }
                double sparse_side = (double)chunks / 32 * 32 * (touched + (write ? partial : 0));
                const double traffic = packed_bytes + sparse_side;
                printf("%-12s %6d %6d %10.4f %10.3f%s\n", write ? "sparse write" : "sparse read", chunk, every, ms,
                       traffic / ms / 1e6 / lab.mem_gbs, bad ? "  MISMATCH" : "");
            }
    return 0;
}
