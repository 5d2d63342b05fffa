#include "tensor.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace hulk {

Tensor::Tensor(int64_t rows, int64_t cols) { reset(rows, cols); }

Tensor Tensor::from_data(int64_t rows, int64_t cols, const float* data) {
  Tensor t(rows, cols);
  std::copy(data, data + t.size(), t.data());
  return t;
}

Tensor Tensor::filled(int64_t rows, int64_t cols, float value) {
  Tensor t(rows, cols);
  t.fill(value);
  return t;
}

void Tensor::fill(float value) { std::fill(values_.begin(), values_.end(), value); }

void Tensor::reset(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("Tensor: negative shape [" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "]");
  }
  rows_ = rows;
  cols_ = cols;
  values_.assign(static_cast<size_t>(rows * cols), 0.0f);
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

}  // namespace hulk
