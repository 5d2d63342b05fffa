// SpMM's long rows, cut into chunks of DeviceCsr::kChunk entries (cuda/kernels/sparse.cu):
//  - against a float64 reference on fresh random rectangular matrices (rows != cols): power-law
//    row lengths, rows exactly at and one past chunk boundaries, rows of many chunks, empty rows;
//  - deterministic: two runs give the same bits;
//  - the simulated time (hulk::simt::LaunchSteps, SIMT build only) of the long-row kernels does
//    not grow with the longest row: each warp's share is one chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "csrc/device.h"
#include "csrc/device_csr.h"
#include "csrc/graph.h"
#include "csrc/ops/ops.h"
#include "csrc/tensor.h"
#include "cuda/runtime/compat.h"
#include "cuda/runtime/launch.h"
#include "cuda/runtime/runtime.h"
#include "tests/cpp/reference.h"

namespace {

using hulk::Csr;
using hulk::Device;
using hulk::DeviceCsr;
using hulk::Tensor;

constexpr int64_t kChunk = DeviceCsr::kChunk;

// A CSR of the given row lengths over `cols` columns, random columns (repeats allowed) and
// values in [-1, 1), and edge ids a random permutation of 0..nnz-1.
Csr random_csr(const std::vector<int64_t>& lengths, int64_t cols, std::mt19937& rng) {
  Csr a;
  a.num_rows = static_cast<int64_t>(lengths.size());
  a.num_cols = cols;
  a.indptr.push_back(0);
  std::uniform_int_distribution<int32_t> col(0, static_cast<int32_t>(cols - 1));
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  for (int64_t len : lengths) {
    for (int64_t k = 0; k < len; ++k) {
      a.indices.push_back(col(rng));
      a.values.push_back(val(rng));
    }
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  a.edge_ids.resize(a.indices.size());
  for (size_t k = 0; k < a.edge_ids.size(); ++k) a.edge_ids[k] = static_cast<int64_t>(k);
  std::shuffle(a.edge_ids.begin(), a.edge_ids.end(), rng);
  return a;
}

// Row lengths with a power-law tail (Pareto, exponent 1.2) capped at `max_len`, plus the edge cases.
std::vector<int64_t> power_law_lengths(int64_t n, int64_t max_len, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < n; ++i) {
    const double len = 3.0 / std::pow(1.0 - u(rng), 1.0 / 1.2);
    lengths.push_back(std::min<int64_t>(max_len, static_cast<int64_t>(len)));
  }
  for (int64_t len : {int64_t{0}, DeviceCsr::kLongRow, DeviceCsr::kLongRow + 1, 2 * kChunk, 2 * kChunk + 1,
                      3 * kChunk - 1, 7 * kChunk, int64_t{0}, 11 * kChunk + 17}) {
    lengths.insert(lengths.begin() + static_cast<int64_t>(rng() % lengths.size()), len);
  }
  return lengths;
}

// out[r, :] = sum_k w_k x[col_k, :] in float64 (values used when weighted; rows of x by `src`).
std::vector<double> reference_sum(const Csr& a, const std::vector<int64_t>& src, const Tensor& x, bool weighted) {
  const int64_t f = x.cols();
  std::vector<double> out(static_cast<size_t>(a.num_rows * f), 0.0);
  for (int64_t r = 0; r < a.num_rows; ++r) {
    for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k) {
      const double w = weighted ? a.values[k] : 1.0;
      for (int64_t c = 0; c < f; ++c) out[r * f + c] += w * x.data()[src[k] * f + c];
    }
  }
  return out;
}

// |got - want| <= 1e-5 * (1 + sum of |terms|) per row: float sums of hundreds of terms in a
// fixed order that differs from the reference's.
::testing::AssertionResult close_to(const Tensor& got_device, const std::vector<double>& want, const Csr& a,
                                    const std::vector<int64_t>& src, const Tensor& x, bool weighted) {
  const Tensor got = got_device.to(Device::CPU);
  const int64_t f = x.cols();
  if (got.rows() != a.num_rows || got.cols() != f) return ::testing::AssertionFailure() << "shape " << got.shape_str();
  for (int64_t r = 0; r < a.num_rows; ++r) {
    for (int64_t c = 0; c < f; ++c) {
      double scale = 1.0;
      for (int64_t k = a.indptr[r]; k < a.indptr[r + 1]; ++k)
        scale += std::fabs((weighted ? a.values[k] : 1.0) * x.data()[src[k] * f + c]);
      const double g = got.data()[r * f + c], w = want[r * f + c];
      if (!(std::fabs(g - w) <= 1e-5 * scale))
        return ::testing::AssertionFailure() << "row " << r << " (" << a.degree(r) << " entries), column " << c
                                             << ": cuda " << g << ", float64 " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

class CudaLongRows : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hulk::device::cuda_simulated() && hulk::cuda::device_count() == 0)
      GTEST_SKIP() << "nvcc build on a machine without a GPU";
  }
  std::mt19937 rng{std::random_device{}()};
};

TEST_F(CudaLongRows, ChunkPlanCoversEveryLongRowInOrder) {
  const std::vector<int64_t> lengths = {0, 600, 3, kChunk * 2, kChunk * 2 + 1, 512, 513};
  const Csr a = random_csr(lengths, 40, rng);
  const DeviceCsr& d = a.on_device();
  EXPECT_EQ(d.long_rows.to_host(), (std::vector<int32_t>{1, 3, 4, 6}));
  EXPECT_EQ(d.long_row_chunks.to_host(), (std::vector<int32_t>{0, 2, 4, 7, 9}));
  EXPECT_EQ(d.chunk_owner.to_host(), (std::vector<int32_t>{0, 0, 1, 1, 2, 2, 2, 3, 3}));
  EXPECT_EQ(d.num_chunks, 9);
}

TEST_F(CudaLongRows, SpmmAndSegmentSumMatchFloat64OnRectangularPowerLawMatrices) {
  const unsigned seed = rng();
  SCOPED_TRACE("seed " + std::to_string(seed));
  rng.seed(seed);
  const Csr a = random_csr(power_law_lengths(300, 9 * kChunk, rng), 257, rng);
  std::vector<int64_t> cols(a.indices.begin(), a.indices.end());
  for (int64_t f : {1, 3, 4, 32, 33, 100, 256, 260, 520}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE("F " + std::to_string(f) + (weighted ? ", weighted" : ""));
      const Tensor x = ref::random_tensor(a.num_cols, f, rng);
      Tensor got;
      hulk::ops::spmm(a, x.to(Device::CUDA), got, weighted);
      EXPECT_TRUE(close_to(got, reference_sum(a, cols, x, weighted), a, cols, x, weighted));
    }
    const Tensor e = ref::random_tensor(a.nnz(), f, rng);
    Tensor got;
    hulk::ops::segment_sum_edges(a, e.to(Device::CUDA), got);
    EXPECT_TRUE(close_to(got, reference_sum(a, a.edge_ids, e, false), a, a.edge_ids, e, false));
  }
}

TEST_F(CudaLongRows, TwoRunsGiveTheSameBits) {
  const Csr a = random_csr(power_law_lengths(200, 6 * kChunk, rng), 150, rng);
  for (int64_t f : {7, 64}) {
    const Tensor x = ref::random_tensor(a.num_cols, f, rng).to(Device::CUDA);
    Tensor first, second;
    hulk::ops::spmm(a, x, first, true);
    hulk::ops::spmm(a, x, second, true);
    const Tensor h1 = first.to(Device::CPU), h2 = second.to(Device::CPU);
    ASSERT_EQ(h1.size(), h2.size());
    EXPECT_EQ(std::memcmp(h1.data(), h2.data(), sizeof(float) * static_cast<size_t>(h1.size())), 0) << "F " << f;
  }
}

#ifdef HULK_SIMT
// Block b's thread t makes 10 b + t loads, then meets the others at a barrier and a shuffle.
void steps_probe(const float* x, float* out) {
  const unsigned n = 10 * blockIdx.x + threadIdx.x;
  float s = 0.0f;
  for (unsigned i = 0; i < n; ++i) s += __ldg(x + i);
  __syncthreads();
  s += __shfl_sync(0xffffffffu, s, 0);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

TEST(SimtSteps, ABlockLastsItsBusiestThreadAndALaunchItsLongestBlock) {
  std::vector<float> host(200, 1.0f);
  hulk::DeviceArray<float> x = hulk::DeviceArray<float>::from_host(host), out(3 * 64);
  hulk::simt::record_steps(true);
  hulk::cuda::launch("steps_probe", steps_probe, dim3(3), dim3(64), 0, nullptr, x.data(), out.data());
  const std::vector<hulk::simt::LaunchSteps> launches = hulk::simt::take_steps();
  hulk::simt::record_steps(false);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(std::string(launches[0].kernel), "steps_probe");
  EXPECT_EQ(launches[0].blocks, 3u);
  EXPECT_EQ(launches[0].span, 20u + 63u + 2u);                       // block 2, thread 63: loads, barrier, shuffle
  EXPECT_EQ(launches[0].work, (0u + 10u + 20u) + 3u * (63u + 2u));  // the three blocks' busiest threads
  EXPECT_TRUE(hulk::simt::take_steps().empty());
}

// Simulated time of the long-row kernels for one hub row of `len` entries among short rows.
struct LongRowSteps {
  unsigned long long chunks_span = 0, combine_span = 0, chunks_work = 0;
};

LongRowSteps steps_for_hub(int64_t len, int64_t f, std::mt19937& rng) {
  std::vector<int64_t> lengths(64, 5);
  lengths[17] = len;
  const Csr a = random_csr(lengths, 1000, rng);
  const Tensor x = ref::random_tensor(a.num_cols, f, rng).to(Device::CUDA);
  Tensor out;
  a.on_device();  // upload outside the record
  hulk::simt::record_steps(true);
  hulk::ops::spmm(a, x, out, true);
  const std::vector<hulk::simt::LaunchSteps> launches = hulk::simt::take_steps();
  hulk::simt::record_steps(false);
  LongRowSteps s;
  for (const auto& l : launches) {
    if (std::string(l.kernel) == "spmm_long_chunks") s.chunks_span = l.span, s.chunks_work = l.work;
    if (std::string(l.kernel) == "spmm_combine_chunks") s.combine_span = l.span;
  }
  return s;
}

TEST_F(CudaLongRows, SimulatedTimeDoesNotGrowWithTheLongestRow) {
  const LongRowSteps small = steps_for_hub(4 * kChunk, 32, rng);
  const LongRowSteps large = steps_for_hub(64 * kChunk, 32, rng);
  ASSERT_GT(small.chunks_span, 0u);
  ASSERT_GT(small.combine_span, 0u);
  // 64 chunks fill 8 blocks of 8 warps, 4 chunks one block: 8 times the work (a block's steps
  // are its busiest thread's), and the same span (longest block): one chunk per warp.
  EXPECT_EQ(large.chunks_work, 8 * small.chunks_work);
  EXPECT_EQ(large.chunks_span, small.chunks_span);
  // The combine adds one load per chunk: 64 against a chunk's thousands of steps.
  const double growth = static_cast<double>(large.chunks_span + large.combine_span) /
                        static_cast<double>(small.chunks_span + small.combine_span);
  EXPECT_LT(growth, 1.1) << "span " << small.chunks_span << " + " << small.combine_span << " for 4 chunks, "
                         << large.chunks_span << " + " << large.combine_span << " for 64";
}
#endif

}  // namespace
