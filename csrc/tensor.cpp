#include "csrc/tensor.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace hulk {

Tensor::Tensor(int64_t rows, int64_t cols, Device device) : device_(device) { reset(rows, cols); }

Tensor Tensor::from_data(int64_t rows, int64_t cols, const float* data) {
  Tensor t(rows, cols);
  std::copy(data, data + t.size(), t.data());
  return t;
}

Tensor Tensor::filled(int64_t rows, int64_t cols, float value, Device device) {
  Tensor t(rows, cols, device);
  t.fill(value);
  return t;
}

void Tensor::fill(float value) {
  if (device_ == Device::CPU) {
    std::fill(host_.begin(), host_.end(), value);
  } else if (size() > 0) {
    device::fill(device_values_.data(), size(), value);
  }
}

void Tensor::reset(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("Tensor: negative shape [" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "]");
  }
  rows_ = rows;
  cols_ = cols;
  const auto count = static_cast<size_t>(rows * cols);
  if (device_ == Device::CPU) {
    host_.assign(count, 0.0f);
  } else {
    if (device_values_.size() != count) device_values_ = DeviceArray<float>(count);
    if (count > 0) device::zero(device_values_.data(), device_values_.bytes());
  }
}

void Tensor::reset(int64_t rows, int64_t cols, Device device) {
  if (device != device_) {
    host_ = std::vector<float>();
    device_values_ = DeviceArray<float>();
    device_ = device;
  }
  reset(rows, cols);
}

Tensor Tensor::to(Device device) const {
  if (device == device_) return *this;
  Tensor out;
  out.rows_ = rows_;
  out.cols_ = cols_;
  out.device_ = device;
  if (device == Device::CPU) {
    out.host_ = device_values_.to_host();
  } else {
    out.device_values_ = DeviceArray<float>::from_host(host_);
  }
  return out;
}

std::vector<float> Tensor::to_host_vector() const {
  return device_ == Device::CPU ? host_ : device_values_.to_host();
}

std::string Tensor::shape_str() const {
  std::ostringstream s;
  s << "[" << rows_ << ", " << cols_ << "]";
  return s.str();
}

void check_shape(const Tensor& t, int64_t rows, int64_t cols, const char* what) {
  if ((rows >= 0 && t.rows() != rows) || (cols >= 0 && t.cols() != cols)) {
    std::ostringstream s;
    s << what << ": expected [" << (rows >= 0 ? std::to_string(rows) : std::string("*")) << ", "
      << (cols >= 0 ? std::to_string(cols) : std::string("*")) << "], got " << t.shape_str();
    throw std::invalid_argument(s.str());
  }
}

void check_device(const Tensor& t, Device device, const char* what) {
  if (t.device() != device) {
    throw std::invalid_argument(std::string(what) + ": is on " + device_name(t.device()) + " but the op runs on " +
                                device_name(device) + " (move it with .to())");
  }
}

}  // namespace hulk
