#include "cuda/runtime/compat.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
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

// Descriptors owned RAII, so an exception between create and destroy leaks none.
struct SpMatDeleter {
  void operator()(cusparseSpMatDescr_t m) const { cusparseDestroySpMat(m); }
};
struct DnMatDeleter {
  void operator()(cusparseDnMatDescr_t m) const { cusparseDestroyDnMat(m); }
};
using SpMat = std::unique_ptr<std::remove_pointer_t<cusparseSpMatDescr_t>, SpMatDeleter>;
using DnMat = std::unique_ptr<std::remove_pointer_t<cusparseDnMatDescr_t>, DnMatDeleter>;

DnMat dense_row_major(int64_t rows, int64_t cols, const float* data) {
  cusparseDnMatDescr_t m = nullptr;
  HULK_CUSPARSE_CHECK(cusparseCreateDnMat(&m, rows, cols, cols, const_cast<float*>(data), CUDA_R_32F,
                                          CUSPARSE_ORDER_ROW));
  return DnMat(m);
}

// cuSPARSE's view of one matrix: 32-bit offsets and indices, explicit ones when unweighted,
// and per (width, weighted) the algorithm that worked and, per stream, a work buffer that
// cusparseSpMM_preprocess has seen (a buffer is never shared by two streams: work queued on
// different streams may run at once).
struct SparseLibraryState {
  DeviceArray<int32_t> offsets;
  DeviceArray<float> ones;
  std::mutex mutex;
  struct Plan {
    SpMat mat;
    cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;
    std::map<cudaStream_t, DeviceArray<unsigned char>> buffers;
  };
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Plan>> plans;
};

// Tried in this order; the first one for which buffer sizing, preprocessing and a first SpMM
// all succeed is kept: ALG3 is the one cusparseSpMM_preprocess speeds up, ALG2 is
// deterministic, DEFAULT always works.
constexpr cusparseSpMMAlg_t kSpmmAlgs[] = {CUSPARSE_SPMM_CSR_ALG3, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_ALG_DEFAULT};

// A work buffer for `alg` on the current stream, preprocessed; out = A x once on success.
cusparseStatus_t prepare_and_run(SparseLibraryState::Plan& plan, cusparseSpMMAlg_t alg, cusparseDnMatDescr_t xd,
                                 cusparseDnMatDescr_t od, DeviceArray<unsigned char>& buffer) {
  const float alpha = 1.0f, beta = 0.0f;
  constexpr auto kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  cusparseStatus_t status = cusparseSpMM_bufferSize(cusparse(), kOp, kOp, &alpha, plan.mat.get(), xd, &beta, od,
                                                    CUDA_R_32F, alg, &bytes);
  if (status != CUSPARSE_STATUS_SUCCESS) return status;
  buffer = DeviceArray<unsigned char>(std::max<size_t>(bytes, 1));
  status = cusparseSpMM_preprocess(cusparse(), kOp, kOp, &alpha, plan.mat.get(), xd, &beta, od, CUDA_R_32F, alg,
                                   buffer.data());
  if (status != CUSPARSE_STATUS_SUCCESS) return status;
  return cusparseSpMM(cusparse(), kOp, kOp, &alpha, plan.mat.get(), xd, &beta, od, CUDA_R_32F, alg, buffer.data());
}

// cuSPARSE's 32-bit index types: every operand must stay under 2^31 elements.
void check_32bit(const char* what, int64_t count) {
  if (count >= (int64_t(1) << 31))
    throw std::invalid_argument(std::string("cuSPARSE SpMM path: ") + what + " has " + std::to_string(count) +
                                " elements, over the 2^31 - 1 its 32-bit indices reach; use the custom SpMM "
                                "(spmm path 'custom')");
}

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
  const int64_t f = x.cols();
  check_32bit("the sparse matrix's nonzeros", d.nnz);
  check_32bit("the sparse matrix's rows", d.num_rows + 1);
  check_32bit("the dense input x [cols, F]", d.num_cols * f);
  check_32bit("the output [rows, F]", d.num_rows * f);
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
  std::lock_guard<std::mutex> lock(state->mutex);
  const DnMat xd = dense_row_major(d.num_cols, f, x.data());
  const DnMat od = dense_row_major(d.num_rows, f, out.data());
  auto& plan = state->plans[{f, weighted}];
  if (!plan) {
    auto fresh = std::make_unique<SparseLibraryState::Plan>();
    cusparseSpMatDescr_t mat = nullptr;
    const float* values = weighted ? d.values.data() : state->ones.data();
    HULK_CUSPARSE_CHECK(cusparseCreateCsr(&mat, d.num_rows, d.num_cols, d.nnz, state->offsets.data(),
                                          const_cast<int32_t*>(d.indices.data()), const_cast<float*>(values),
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                          CUDA_R_32F));
    fresh->mat.reset(mat);
    std::string failures;
    for (cusparseSpMMAlg_t alg : kSpmmAlgs) {
      DeviceArray<unsigned char> buffer;
      const cusparseStatus_t status = prepare_and_run(*fresh, alg, xd.get(), od.get(), buffer);
      if (status == CUSPARSE_STATUS_SUCCESS) {
        fresh->alg = alg;
        fresh->buffers[current_stream()] = std::move(buffer);
        plan = std::move(fresh);
        return;  // out holds A x
      }
      failures += " algorithm " + std::to_string(static_cast<int>(alg)) + ": " + cusparseGetErrorString(status) + ";";
    }
    state->plans.erase({f, weighted});
    throw std::runtime_error("cuSPARSE SpMM: no algorithm works for " + std::to_string(d.num_rows) + " x " +
                             std::to_string(d.num_cols) + " (nnz " + std::to_string(d.nnz) + ") times F = " +
                             std::to_string(f) + ":" + failures);
  }
  auto buffer = plan->buffers.find(current_stream());
  if (buffer == plan->buffers.end()) {  // the first call on this stream: a buffer of its own
    DeviceArray<unsigned char> fresh;
    HULK_CUSPARSE_CHECK(prepare_and_run(*plan, plan->alg, xd.get(), od.get(), fresh));
    plan->buffers.emplace(current_stream(), std::move(fresh));
    return;
  }
  const float alpha = 1.0f, beta = 0.0f;
  HULK_CUSPARSE_CHECK(cusparseSpMM(cusparse(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                   &alpha, plan->mat.get(), xd.get(), &beta, od.get(), CUDA_R_32F, plan->alg,
                                   buffer->second.data()));
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
