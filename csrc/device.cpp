// Backend-independent parts of the device layer: names and the per-thread current stream.
#include "csrc/device.h"

#include <stdexcept>

namespace hulk {

const char* device_name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }

Device parse_device(const std::string& name) {
  if (name == "cpu") return Device::CPU;
  if (name == "cuda") return Device::CUDA;
  throw std::invalid_argument("device must be 'cpu' or 'cuda', got '" + name + "'");
}

namespace device {
namespace {
thread_local void* current = nullptr;
}  // namespace

void* current_stream() { return current; }

StreamGuard::StreamGuard(const Stream& stream) : previous_(current) { current = stream.handle(); }
StreamGuard::~StreamGuard() { current = previous_; }

}  // namespace device
}  // namespace hulk
