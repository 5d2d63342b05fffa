// Dense float32 matrices, row-major, owned by value.
//
// The engine only needs 2-D tensors: node features [N, F], edge features [M, Fe],
// weights [in, out] and biases [1, out]. Value semantics (a copy is a copy) keeps
// ownership obvious; layers hand out const references to avoid copies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hulk {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled [rows, cols]. Throws std::invalid_argument on negative sizes.
  Tensor(int64_t rows, int64_t cols);
  // Copies rows*cols floats from data (row-major).
  static Tensor from_data(int64_t rows, int64_t cols, const float* data);
  static Tensor filled(int64_t rows, int64_t cols, float value);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  bool empty() const { return size() == 0; }
  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  float* row(int64_t r) { return values_.data() + r * cols_; }
  const float* row(int64_t r) const { return values_.data() + r * cols_; }
  float& at(int64_t r, int64_t c) { return values_[static_cast<size_t>(r * cols_ + c)]; }
  float at(int64_t r, int64_t c) const { return values_[static_cast<size_t>(r * cols_ + c)]; }

  void fill(float value);
  // Resizes to [rows, cols] and zero-fills (reuses the allocation when it can).
  void reset(int64_t rows, int64_t cols);
  bool same_shape(const Tensor& other) const { return rows_ == other.rows_ && cols_ == other.cols_; }
  std::string shape_str() const;

 private:
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::vector<float> values_;
};

// Throws std::invalid_argument("<what>: expected [r, c], got [..]") when the shape differs.
// A negative expected size means "any".
void check_shape(const Tensor& t, int64_t rows, int64_t cols, const char* what);

}  // namespace hulk
