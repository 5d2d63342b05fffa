// Probe of the CUDA runtime, safe to call on machines without a GPU or driver.
#pragma once

#include <string>

namespace hulk::cuda {

// Number of usable CUDA devices; 0 when there is no driver or no device.
int device_count();
// Why device_count() is 0 ("" when it is not): the CUDA error string.
std::string unavailable_reason();

}  // namespace hulk::cuda
