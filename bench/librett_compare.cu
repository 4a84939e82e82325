// LibreTT (github.com/victor-anisimov/Librett) on the f32/f64 permutations of
// `examples/copy_bench.rs`, for the same-run comparison in BENCHMARKS.md.
//
// Build on the GPU machine, from a LibreTT checkout built with `make cuda`:
//   nvcc -O3 -std=c++17 -arch=sm_90 -DLIBRETT_USES_CUDA -I<librett>/src \
//        bench/librett_compare.cu -L<librett>/lib -lrett -o librett_compare
// Prints, per case, LibreTT's time (median of 20, CUDA events, plan made beforehand)
// and bandwidth (read + write) against a contiguous 1 GiB cudaMemcpy of the same run.
// Every result is checked at 100000 random positions against the permutation.
#include <librett.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

template <class F> float median_ms(F f) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < 20; ++i) {
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Case { const char* name; std::vector<int> shape; std::vector<int> perm; int isz; };

int main() {
    const size_t gib = size_t(1) << 30;
    void *x, *y;
    CK(cudaMalloc(&x, gib));
    CK(cudaMalloc(&y, gib));
    CK(cudaMemset(x, 1, gib));
    float mms = median_ms([&] { CK(cudaMemcpyAsync(y, x, gib, cudaMemcpyDeviceToDevice)); });
    double ceiling = 2.0 * gib / mms / 1e6;
    std::printf("contiguous 1 GiB cudaMemcpy: %.0f GB/s (read + write)\n", ceiling);
    // C-order shapes; the output is input.permute(perm) made dense (numpy semantics).
    std::vector<Case> cases = {
        {"transpose 8192x8192 f32", {8192, 8192}, {1, 0}, 4},
        {"transpose 8192x8192 f64", {8192, 8192}, {1, 0}, 8},
        {"(512,512,256) f32 permute [2, 0, 1]", {512, 512, 256}, {2, 0, 1}, 4},
        {"(512,512,256) f32 permute [1, 0, 2]", {512, 512, 256}, {1, 0, 2}, 4},
        {"(512,512,256) f32 permute [0, 2, 1]", {512, 512, 256}, {0, 2, 1}, 4},
        {"NCHW->NHWC (64,256,64,64) f32", {64, 256, 64, 64}, {0, 2, 3, 1}, 4},
        {"5-D (32,32,32,32,32) f32 permute [4, 2, 0, 3, 1]", {32, 32, 32, 32, 32}, {4, 2, 0, 3, 1}, 4},
        {"6-D (16,16,16,16,16,16) f32 permute [5, 3, 1, 4, 2, 0]", {16, 16, 16, 16, 16, 16}, {5, 3, 1, 4, 2, 0}, 4},
        {"5-D (24,40,3,50,36) f64 permute [3, 1, 4, 0, 2]", {24, 40, 3, 50, 36}, {3, 1, 4, 0, 2}, 8},
    };
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    std::mt19937_64 rng(7);
    std::printf("%-52s %10s %9s %8s %s\n", "case", "time ms", "GB/s", "ratio", "check");
    for (auto& c : cases) {
        const int r = (int)c.shape.size();
        size_t n = 1;
        for (int e : c.shape) n *= e;
        // LibreTT counts dimensions fastest first: reverse the C-order axes.
        std::vector<int> dim(r), perm(r);
        for (int j = 0; j < r; ++j) dim[j] = c.shape[r - 1 - j];
        for (int j = 0; j < r; ++j) perm[j] = r - 1 - c.perm[r - 1 - j];
        std::vector<unsigned char> host(n * c.isz);
        for (auto& b : host) b = (unsigned char)rng();
        CK(cudaMemcpy(x, host.data(), n * c.isz, cudaMemcpyHostToDevice));
        CK(cudaMemset(y, 0xA5, n * c.isz));
        librettHandle plan;
        if (librettPlan(&plan, r, dim.data(), perm.data(), c.isz, stream) != LIBRETT_SUCCESS) {
            std::printf("%-52s plan failed\n", c.name);
            continue;
        }
        float ms = median_ms([&] {
            if (librettExecute(plan, x, y) != LIBRETT_SUCCESS) std::exit(2);
        });
        CK(cudaStreamSynchronize(stream));
        std::vector<unsigned char> out(n * c.isz);
        CK(cudaMemcpy(out.data(), y, n * c.isz, cudaMemcpyDeviceToHost));
        // out[i_out] with i_out over the permuted shape equals in[...]: walk random outputs.
        std::vector<long long> in_stride(r), out_shape(r);
        long long s = 1;
        for (int k = r - 1; k >= 0; --k) { in_stride[k] = s; s *= c.shape[k]; }
        for (int k = 0; k < r; ++k) out_shape[k] = c.shape[c.perm[k]];
        bool ok = true;
        for (int t = 0; t < 100000 && ok; ++t) {
            long long o = (long long)(rng() % n), rem = o, src = 0;
            for (int k = r - 1; k >= 0; --k) {
                long long idx = rem % out_shape[k];
                rem /= out_shape[k];
                src += idx * in_stride[c.perm[k]];
            }
            for (int b = 0; b < c.isz; ++b)
                ok = ok && out[o * c.isz + b] == host[src * c.isz + b];
        }
        double gbs = 2.0 * n * c.isz / ms / 1e6;
        std::printf("%-52s %10.3f %9.0f %8.2f %s\n", c.name, ms, gbs, gbs / ceiling, ok ? "exact" : "WRONG");
        librettDestroy(plan);
    }
    return 0;
}
