/* libopenblas.so for a machine whose only OpenBLAS is the one a numpy or scipy wheel bundles
 * (libscipy_openblas*.so, every symbol prefixed scipy_). Built and linked against that library by
 * benchmarks/gpu_check.sh. HULK_ILP64: the wheel's library takes 64-bit integers (numpy's,
 * symbols ending in 64_); otherwise 32-bit ones (scipy's). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cblas.h"

#ifdef HULK_ILP64
typedef int64_t blas_int;
#define WHEEL_SGEMM scipy_cblas_sgemm64_
#define WHEEL_SET_THREADS scipy_openblas_set_num_threads64_
#define WHEEL_GET_THREADS scipy_openblas_get_num_threads64_
#define WHEEL_GET_PARALLEL scipy_openblas_get_parallel64_
#else
typedef int blas_int;
#define WHEEL_SGEMM scipy_cblas_sgemm
#define WHEEL_SET_THREADS scipy_openblas_set_num_threads
#define WHEEL_GET_THREADS scipy_openblas_get_num_threads
#define WHEEL_GET_PARALLEL scipy_openblas_get_parallel
#endif

void WHEEL_SGEMM(int order, int trans_a, int trans_b, blas_int m, blas_int n, blas_int k, float alpha,
                 const float* a, blas_int lda, const float* b, blas_int ldb, float beta, float* c, blas_int ldc);

void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b, int m, int n,
                 int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  WHEEL_SGEMM(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* OpenBLAS's thread controls, so that CMake finds openblas_set_num_threads (HULK_OPENBLAS) and hulk
 * runs the BLAS on one thread inside its own OpenMP threads (csrc/ops/cpu/blas.h). Without them the
 * wheel's pthreads OpenBLAS ran 16 threads inside each of hulk's 16 (the first H200 run, 2026-11-26:
 * "Detect OpenMP Loop" warnings, and CPU epochs about 40 times slower than on a 2-core VM). */
void WHEEL_SET_THREADS(int num_threads);
int WHEEL_GET_THREADS(void);
int WHEEL_GET_PARALLEL(void);
void openblas_set_num_threads(int num_threads) { WHEEL_SET_THREADS(num_threads); }
int openblas_get_num_threads(void) { return WHEEL_GET_THREADS(); }
int openblas_get_parallel(void) { return WHEEL_GET_PARALLEL(); }

/* CMake's FindBLAS checks that sgemm_ links; hulk calls cblas_sgemm alone. */
void sgemm_(void) {
  fputs("hulk gpu_blas shim: sgemm_ is there for CMake's FindBLAS only\n", stderr);
  abort();
}
