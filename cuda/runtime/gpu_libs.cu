#include "cuda/runtime/compat.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/runtime/check.h"
#include "cuda/runtime/context.h"
#include "cuda/runtime/gpu_libs.h"
#include "csrc/ops/backends.h"

#if defined(__CUDACC__)
#include <cublas_v2.h>
#include <cusparse.h>
#else
#include "csrc/ops/cpu/blas.h"
#endif

namespace hulk::cuda {

#if defined(__CUDACC__)
namespace {

#define HULK_CUBLAS_CHECK(expr)                                                                              \
  do {                                                                                                       \
    const cublasStatus_t status_ = (expr);                                                                   \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                                                    \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #expr " failed: " + \
                               cublasGetStatusString(status_));                                              \
  } while (0)

#define HULK_CUSPARSE_CHECK(expr)                                                                            \
  do {                                                                                                       \
    const cusparseStatus_t status_ = (expr);                                                                 \
    if (status_ != CUSPARSE_STATUS_SUCCESS)                                                                  \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #expr " failed: " + \
                               cusparseGetErrorString(status_));                                             \
  } while (0)

// Handles are made once per thread and never destroyed: destroying them at exit races the
// driver's own teardown.
cublasHandle_t cublas() {
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    HULK_CUBLAS_CHECK(cublasCreate(&h));
    return h;
  }();
  HULK_CUBLAS_CHECK(cublasSetStream(handle, current_stream()));
  return handle;
}

cusparseHandle_t cusparse() {
  thread_local cusparseHandle_t handle = [] {
    cusparseHandle_t h = nullptr;
    HULK_CUSPARSE_CHECK(cusparseCreate(&h));
    return h;
  }();
  HULK_CUSPARSE_CHECK(cusparseSetStream(handle, current_stream()));
  return handle;
}

// cuSPARSE's view of one matrix: 32-bit offsets and indices, explicit ones when unweighted,
// and per (width, weighted) a buffer that cusparseSpMM_preprocess has seen.
struct SparseLibraryState {
  DeviceArray<int32_t> offsets;
  DeviceArray<float> ones;
  std::mutex mutex;
  struct Plan {
    cusparseSpMatDescr_t mat = nullptr;
    cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;
    DeviceArray<unsigned char> buffer;
  };
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Plan>> plans;
  ~SparseLibraryState() {
    for (auto& entry : plans) cusparseDestroySpMat(entry.second->mat);
  }
};

// Tried in this order, the first one cuSPARSE accepts for row-major dense matrices is kept:
// ALG3 is the one cusparseSpMM_preprocess speeds up, ALG2 is deterministic, DEFAULT always works.
constexpr cusparseSpMMAlg_t kSpmmAlgs[] = {CUSPARSE_SPMM_CSR_ALG3, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_ALG_DEFAULT};

}  // namespace

void blas_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  HULK_CUBLAS_CHECK(cublasSgemm(cublas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, b,
                                static_cast<int>(ldb), a, static_cast<int>(lda), &beta, c, static_cast<int>(ldc)));
}

void sparse_library_spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted) {
  const DeviceCsr& d = a.on_device();
  if (d.nnz >= (int64_t(1) << 31) || d.num_rows >= (int64_t(1) << 31))
    throw std::invalid_argument("cuSPARSE SpMM path: the matrix needs 64-bit indices (nnz = " + std::to_string(d.nnz) +
                                "); use the custom SpMM");
  auto& slot = const_cast<DeviceCsr&>(d).library_state;
  {
    static std::mutex init;
    std::lock_guard<std::mutex> lock(init);
    if (!slot) {
      auto state = std::make_shared<SparseLibraryState>();
      std::vector<int32_t> offsets(a.indptr.begin(), a.indptr.end());
      state->offsets = DeviceArray<int32_t>::from_host(offsets);
      state->ones = DeviceArray<float>::from_host(std::vector<float>(static_cast<size_t>(d.nnz), 1.0f));
      slot = state;
    }
  }
  auto* state = static_cast<SparseLibraryState*>(slot.get());
  const int64_t f = x.cols();
  std::lock_guard<std::mutex> lock(state->mutex);
  auto& plan = state->plans[{f, weighted}];
  const float alpha = 1.0f, beta = 0.0f;
  cusparseDnMatDescr_t xd = nullptr, od = nullptr;
  HULK_CUSPARSE_CHECK(cusparseCreateDnMat(&xd, d.num_cols, f, f, const_cast<float*>(x.data()), CUDA_R_32F,
                                          CUSPARSE_ORDER_ROW));
  HULK_CUSPARSE_CHECK(cusparseCreateDnMat(&od, d.num_rows, f, f, out.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
  if (!plan) {
    plan = std::make_unique<SparseLibraryState::Plan>();
    const float* values = weighted ? d.values.data() : state->ones.data();
    HULK_CUSPARSE_CHECK(cusparseCreateCsr(&plan->mat, d.num_rows, d.num_cols, d.nnz, state->offsets.data(),
                                          const_cast<int32_t*>(d.indices.data()), const_cast<float*>(values),
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                          CUDA_R_32F));
    size_t bytes = 0;
    cusparseStatus_t status = CUSPARSE_STATUS_NOT_SUPPORTED;
    for (cusparseSpMMAlg_t alg : kSpmmAlgs) {
      status = cusparseSpMM_bufferSize(cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       &alpha, plan->mat, xd, &beta, od, CUDA_R_32F, alg, &bytes);
      if (status == CUSPARSE_STATUS_SUCCESS) {
        plan->alg = alg;
        break;
      }
    }
    HULK_CUSPARSE_CHECK(status);
    plan->buffer = DeviceArray<unsigned char>(std::max<size_t>(bytes, 1));
    HULK_CUSPARSE_CHECK(cusparseSpMM_preprocess(cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, plan->mat, xd, &beta, od,
                                                CUDA_R_32F, plan->alg, plan->buffer.data()));
  }
  HULK_CUSPARSE_CHECK(cusparseSpMM(cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                   &alpha, plan->mat, xd, &beta, od, CUDA_R_32F, plan->alg, plan->buffer.data()));
  cusparseDestroyDnMat(xd);
  cusparseDestroyDnMat(od);
}

#else  // SIMT build: the CPU libraries stand in for cuBLAS and cuSPARSE.

void blas_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  ops::cpu::sgemm_rows(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  // as the CPU's gemm
}

void sparse_library_spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted) {
  ops::cpu::spmm(a, x, out, weighted);
}

#endif

}  // namespace hulk::cuda
