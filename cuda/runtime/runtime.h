// Probe of the CUDA runtime, safe to call on machines without a GPU or driver.
#pragma once

#include <string>

namespace hulk::cuda {

// Number of usable CUDA devices; 0 when there is no driver or no device, and in the SIMT build.
int device_count();
// Why device_count() is 0 ("" when it is not): the CUDA error string; in the SIMT build, that
// kernels run on the CPU simulator.
std::string unavailable_reason();
// True in the SIMT build (HULK_CUDA=SIMT): kernels run on the CPU simulator, no GPU is used.
bool simulated();

}  // namespace hulk::cuda
