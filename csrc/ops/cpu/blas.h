// The CPU BLAS and threads (issue 20: one threading runtime). BLAS runs single-threaded; the
// threads are ours (OpenMP), which split a large GEMM into row blocks, one BLAS call per
// thread. So one pool serves every kernel, set_num_threads (omp_set_num_threads) controls
// all of them, and no second pool (OpenBLAS's pthreads) spins against it.
#pragma once

#include <cstdint>
#include <string>

namespace hulk::ops::cpu {

// Makes the BLAS single-threaded (once per process; cheap after the first call). With
// OpenBLAS this calls openblas_set_num_threads(1), which is process-wide: other callers of
// the same libopenblas in this process get one thread too. Other BLAS libraries are taken
// to be single-threaded.
void blas_single_threaded();

struct BlasInfo {
  std::string vendor;  // "openblas" or "other"
  int parallel = -1;   // OpenBLAS: openblas_get_parallel() (0 sequential, 1 pthreads, 2 OpenMP); else -1
  int threads = -1;    // OpenBLAS: openblas_get_num_threads(); else -1
  std::string core;    // OpenBLAS: the kernels it picked for this CPU (openblas_get_corename()); else ""
};
BlasInfo blas_info();

// c = alpha op(a) op(b) + beta c, row-major, c [m, n] with leading dimension ldc: row blocks
// of c over the OpenMP threads (when the product is large enough to pay for them and we are
// not already inside a parallel region), one single-threaded BLAS call each.
void sgemm_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace hulk::ops::cpu
