#include "cuda/runtime/compat.h"

#include "cuda/runtime/runtime.h"

namespace hulk::cuda {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later probes start fresh
    return 0;
  }
  return count;
}

std::string unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return cudaGetErrorString(err);
  }
  return count > 0 ? "" : "no CUDA device found";
}

bool simulated() {
#if defined(HULK_SIMT)
  return true;
#else
  return false;
#endif
}

}  // namespace hulk::cuda
