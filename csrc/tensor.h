// Dense float32 matrices, row-major, owned by value, on the CPU or on a CUDA device.
//
// The engine only needs 2-D tensors: node features [N, F], edge features [M, Fe],
// weights [in, out] and biases [1, out]. Value semantics (a copy is a copy, on the same
// device) keeps ownership obvious; layers hand out const references to avoid copies.
// data() points into the tensor's own device; row() and at() are for CPU tensors only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "csrc/device.h"

namespace hulk {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled [rows, cols] on `device`. Throws std::invalid_argument on negative sizes.
  Tensor(int64_t rows, int64_t cols, Device device = Device::CPU);
  // Copies rows*cols floats from host memory (row-major) into a CPU tensor.
  static Tensor from_data(int64_t rows, int64_t cols, const float* data);
  static Tensor filled(int64_t rows, int64_t cols, float value, Device device = Device::CPU);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  bool empty() const { return size() == 0; }
  Device device() const { return device_; }
  bool on_cpu() const { return device_ == Device::CPU; }
  float* data() { return device_ == Device::CPU ? host_.data() : device_values_.data(); }
  const float* data() const { return device_ == Device::CPU ? host_.data() : device_values_.data(); }
  float* row(int64_t r) { return host_.data() + r * cols_; }
  const float* row(int64_t r) const { return host_.data() + r * cols_; }
  float& at(int64_t r, int64_t c) { return host_[static_cast<size_t>(r * cols_ + c)]; }
  float at(int64_t r, int64_t c) const { return host_[static_cast<size_t>(r * cols_ + c)]; }

  void fill(float value);
  // Resizes to [rows, cols] on the tensor's device and zero-fills (reuses the allocation
  // when the size is unchanged).
  void reset(int64_t rows, int64_t cols);
  // Like reset, also moving the (zeroed) tensor to `device`.
  void reset(int64_t rows, int64_t cols, Device device);
  // A copy on `device` (a plain copy when it is already there).
  Tensor to(Device device) const;
  // The values as a host vector, whatever the device.
  std::vector<float> to_host_vector() const;
  bool same_shape(const Tensor& other) const { return rows_ == other.rows_ && cols_ == other.cols_; }
  std::string shape_str() const;

 private:
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  Device device_ = Device::CPU;
  std::vector<float> host_;              // CPU storage
  DeviceArray<float> device_values_;     // CUDA storage
};

// Throws std::invalid_argument("<what>: expected [r, c], got [..]") when the shape differs.
// A negative expected size means "any".
void check_shape(const Tensor& t, int64_t rows, int64_t cols, const char* what);

// Throws std::invalid_argument unless t is on `device`, naming `what` and both devices.
void check_device(const Tensor& t, Device device, const char* what);

}  // namespace hulk
