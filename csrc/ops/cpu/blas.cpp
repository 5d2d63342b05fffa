#include "csrc/ops/cpu/blas.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#ifdef HULK_OPENBLAS
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
char* openblas_get_corename(void);
}
#endif

namespace hulk::ops::cpu {

void blas_single_threaded() {
#ifdef HULK_OPENBLAS
  static const bool done = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
#endif
}

BlasInfo blas_info() {
  blas_single_threaded();
  BlasInfo info;
#ifdef HULK_OPENBLAS
  info.vendor = "openblas";
  info.parallel = openblas_get_parallel();
  info.threads = openblas_get_num_threads();
  info.core = openblas_get_corename();
#else
  info.vendor = "other";
#endif
  return info;
}

namespace {
// Below this many multiply-adds a GEMM runs on the calling thread: splitting it costs more
// than it saves (a parallel region is a few microseconds).
constexpr int64_t kMinParallelWork = int64_t{1} << 18;
constexpr int64_t kMinRowsPerThread = 16;

void sgemm_one(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
}  // namespace

void sgemm_rows(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  blas_single_threaded();
  int64_t parts = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (m * n * k < kMinParallelWork) parts = 1;
  parts = std::max<int64_t>(1, std::min(parts, m / kMinRowsPerThread));
  if (parts == 1) {
    sgemm_one(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // Row block [r0, r1) of c is op(a)'s rows r0..r1: rows of a, or columns of a when transposed.
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(parts))
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t r0 = m * p / parts, r1 = m * (p + 1) / parts;
    const float* a_p = trans_a ? a + r0 : a + r0 * lda;
    sgemm_one(trans_a, trans_b, r1 - r0, n, k, alpha, a_p, lda, b, ldb, beta, c + r0 * ldc, ldc);
  }
}

}  // namespace hulk::ops::cpu
