// HULK_CUDA_CHECK(expr): a CUDA runtime call that must succeed. On failure throws
// std::runtime_error with the file, the line, the expression and cudaGetErrorString.
#pragma once

#include <stdexcept>
#include <string>

#include "cuda/runtime/compat.h"

namespace hulk::cuda::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  cudaGetLastError();  // the failed call also set the last error; clear it so it is not reported twice
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                           cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

}  // namespace hulk::cuda::detail

#define HULK_CUDA_CHECK(expr)                                                       \
  do {                                                                              \
    const cudaError_t hulk_cuda_err_ = (expr);                                      \
    if (hulk_cuda_err_ != cudaSuccess) {                                            \
      ::hulk::cuda::detail::throw_cuda_error(hulk_cuda_err_, #expr, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)
