// The one thin interface to the GPU libraries. On a GPU: cuBLAS for dense products and
// cuSPARSE for the second SpMM path. In the SIMT build: the CPU BLAS and the CPU SpMM,
// so the code around them runs in CI, while the libraries themselves are checked only on
// a GPU (tests/cpp/test_cuda_ops.cpp says so where it compares them).
#pragma once

#include <cstdint>

#include "csrc/graph.h"
#include "csrc/tensor.h"

namespace hulk::cuda {

// Row-major c [m, n] = alpha * op(a) @ op(b) + beta * c on the current stream; lda, ldb,
// ldc are the row lengths of a, b and c as stored.
void blas_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// out [rows, F] (zeroed) = A x through the sparse library. Its descriptor and algorithm are
// chosen once per matrix, width and weighting (the first of ALG3, ALG2, DEFAULT whose sizing,
// preprocessing and first run succeed) and kept with the matrix's device copy, with one
// preprocessed work buffer per stream. Operands of 2^31 elements or more (32-bit indices)
// throw std::invalid_argument naming the operand.
void sparse_library_spmm(const Csr& a, const Tensor& x, Tensor& out, bool weighted);

}  // namespace hulk::cuda
