// hulk::cuda::launch: the one way kernels are launched, in place of <<<...>>>.
//   launch("axpy", axpy_kernel, grid, block, shared_bytes, stream, n, alpha, x, y);
// nvcc: a <<<grid, block, shared_bytes, stream>>> launch, then cudaGetLastError, reported with
// the kernel's name. SIMT: the launch is validated against the device limits (threads per
// block, block and grid dimensions, dynamic shared memory) and every block runs on the CPU
// before launch returns. Errors are std::runtime_error naming the kernel. Never launch an
// empty grid: callers skip launches for empty inputs (CUDA rejects them too).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda/runtime/compat.h"

namespace hulk::cuda {

// Dynamic shared memory a launch may ask for, for every kernel: 48 KiB unless raised (at most
// 227 KiB, the H100's opt-in limit). Under nvcc a launch above 48 KiB sets the kernel's
// cudaFuncAttributeMaxDynamicSharedMemorySize itself when it is within this limit.
constexpr std::size_t kDefaultMaxDynamicShared = 48 * 1024;
constexpr std::size_t kMaxDynamicSharedOptin = 227 * 1024;
void set_max_dynamic_shared(std::size_t bytes);  // throws std::invalid_argument above 227 KiB
std::size_t max_dynamic_shared();

#if defined(__CUDACC__)

template <typename... KArgs, typename... Args>
void launch(const char* name, void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(KArgs) == sizeof...(Args), "launch: the argument count differs from the kernel's");
  if (shared_bytes > kDefaultMaxDynamicShared && shared_bytes <= max_dynamic_shared()) {
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes));
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(std::string("CUDA kernel '") + name + "': cannot allow " +
                               std::to_string(shared_bytes) + " bytes of dynamic shared memory: " +
                               cudaGetErrorString(err));
    }
  }
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA kernel '") + name + "' (grid " + std::to_string(grid.x) + "x" +
                             std::to_string(grid.y) + "x" + std::to_string(grid.z) + ", block " +
                             std::to_string(block.x) + "x" + std::to_string(block.y) + "x" +
                             std::to_string(block.z) + ", " + std::to_string(shared_bytes) +
                             " B dynamic shared) failed to launch: " + cudaGetErrorString(err));
  }
}

#elif defined(HULK_SIMT)

template <typename... KArgs, typename... Args>
void launch(const char* name, void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(KArgs) == sizeof...(Args), "launch: the argument count differs from the kernel's");
  // The arguments are converted to the parameter types once, as a launch does; each simulated
  // thread then gets its own copies (kernel parameters are per-thread values).
  struct Call {
    void (*kernel)(KArgs...);
    std::tuple<std::decay_t<KArgs>...> params;
  };
  Call call{kernel, std::tuple<std::decay_t<KArgs>...>(std::forward<Args>(args)...)};
  ::hulk::simt::run_kernel(
      name, reinterpret_cast<const void*>(kernel), grid, block, shared_bytes, max_dynamic_shared(), stream,
      [](void* p) {
        Call& c = *static_cast<Call*>(p);
        std::apply(c.kernel, c.params);
      },
      &call);
}

#endif  // in other C++ files (nvcc build) only the shared memory limit above is available

}  // namespace hulk::cuda
