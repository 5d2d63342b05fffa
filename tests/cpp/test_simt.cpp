// CUDA semantics of the kernel toolkit (cuda/runtime/compat.h, cuda/runtime/launch.h, cuda/runtime/check.h): barriers
// and shared memory, warp shuffles and votes, atomics, dynamic shared memory, vector types.
// The same tests run on a GPU (nvcc build) and on the CPU simulator (HULK_CUDA=SIMT); the
// expected values come from plain host loops written from the CUDA documentation.
// Misuse (a barrier some threads skip, warp masks that disagree, launches over the device
// limits) is undefined behaviour on a GPU, so those tests run only in the simulator, which must
// report it as an error naming the kernel.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuda/runtime/check.h"
#include "cuda/runtime/launch.h"
#include "cuda/runtime/runtime.h"
#include "tests/cpp/simt_kernels.h"

namespace {

using hulk::cuda::simulated;

// Kernels need a GPU or the simulator.
#define REQUIRE_DEVICE()                                                                      \
  do {                                                                                        \
    if (!simulated() && hulk::cuda::device_count() == 0) {                                    \
      GTEST_SKIP() << "no CUDA device and not the SIMT build: " << hulk::cuda::unavailable_reason(); \
    }                                                                                         \
  } while (0)

// Misuse checks: only the simulator defines what happens.
#define REQUIRE_SIMULATOR()                                                                    \
  do {                                                                                         \
    if (!simulated()) {                                                                        \
      GTEST_SKIP() << "misuse is undefined behaviour on a GPU; only the SIMT build reports it"; \
    }                                                                                          \
  } while (0)

// Runs f, which must throw std::runtime_error whose message contains every one of `parts`.
template <typename F>
void expect_error(F f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    return;
  }
  ADD_FAILURE() << "no std::runtime_error";
}

// After any error the simulator must work again.
void expect_usable() {
  const std::vector<float> x(300, 1.0f);
  const std::vector<float> s = simt_test::block_sums(x, 128);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], 128.0f);
  EXPECT_EQ(s[2], 44.0f);
}

TEST(Simt, RuntimeProbe) {
  if (simulated()) {
    EXPECT_EQ(hulk::cuda::device_count(), 0);
    EXPECT_NE(hulk::cuda::unavailable_reason().find("SIMT build"), std::string::npos)
        << hulk::cuda::unavailable_reason();
  } else {
    EXPECT_GE(hulk::cuda::device_count(), 0);
  }
}

TEST(Simt, CheckMacroReportsFileLineExpressionAndError) {
  // No device needed: an invalid device ordinal fails everywhere.
  int line = 0;
  try {
    line = __LINE__ + 1;
    HULK_CUDA_CHECK(cudaSetDevice(-1));
    ADD_FAILURE() << "cudaSetDevice(-1) succeeded";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("test_simt.cpp:" + std::to_string(line)), std::string::npos) << msg;
    EXPECT_NE(msg.find("cudaSetDevice(-1) failed: "), std::string::npos) << msg;
  }
  // The check clears the error it reported (without a driver, the initialisation error stays).
  if (simulated() || hulk::cuda::device_count() > 0) {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

TEST(Simt, BlockReductionWithSharedMemoryAndBarriers) {
  REQUIRE_DEVICE();
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> d(-50, 50);
  for (int block : {32, 64, 256, 1024}) {
    std::vector<float> x(block * 5 + 7);
    for (float& v : x) v = static_cast<float>(d(rng));  // small integers: sums are exact
    const std::vector<float> got = simt_test::block_sums(x, block);
    ASSERT_EQ(got.size(), (x.size() + block - 1) / block);
    for (size_t b = 0; b < got.size(); ++b) {
      float want = 0;
      for (size_t i = b * block; i < std::min(x.size(), (b + 1) * block); ++i) want += x[i];
      EXPECT_EQ(got[b], want) << "block size " << block << ", block " << b;
    }
  }
}

// Host model of one warp (CUDA Programming Guide, warp shuffle functions): `width`-lane
// segments; up/down sources outside the caller's segment give the caller's own value, xor
// sources in a later segment too; __shfl_sync takes the source lane modulo width.
template <typename T>
T shfl_ref(const std::vector<T>& warp, int lane, char kind, int arg, int width) {
  const int start = lane - lane % width, end = start + width - 1;
  int src = lane;
  switch (kind) {
    case 'i': src = start + ((arg % width) + width) % width; break;
    case 'u': src = lane - arg >= start ? lane - arg : lane; break;
    case 'd': src = lane + arg <= end ? lane + arg : lane; break;
    case 'x': src = (lane ^ arg) <= end ? (lane ^ arg) : lane; break;
  }
  return warp[src];
}

template <typename T>
void check_shuffles(T scale) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(0, 1000);
  const int block = 128;
  std::vector<T> x(block * 3);
  for (T& v : x) v = static_cast<T>(d(rng)) * scale;
  for (int width : {1, 2, 4, 8, 16, 32}) {
    const simt_test::ShuffleResults<T> got = simt_test::shuffles(x, width, block);
    for (size_t w0 = 0; w0 < x.size(); w0 += 32) {
      std::vector<T> v(x.begin() + w0, x.begin() + w0 + 32);
      std::vector<T> xs = v, ds = v, us = v;
      for (int o = width / 2; o > 0; o /= 2) {
        std::vector<T> a = xs, b = ds;
        for (int l = 0; l < 32; ++l) {
          xs[l] = a[l] + shfl_ref(a, l, 'x', o, width);
          ds[l] = b[l] + shfl_ref(b, l, 'd', o, width);
        }
      }
      for (int o = 1; o < width; o *= 2) {
        std::vector<T> a = us;
        for (int l = 0; l < 32; ++l) {
          if (l % width >= o) us[l] = a[l] + shfl_ref(a, l, 'u', o, width);
        }
      }
      for (int l = 0; l < 32; ++l) {
        const size_t i = w0 + l;
        ASSERT_EQ(got.xor_sum[i], xs[l]) << "xor, width " << width << ", thread " << i;
        ASSERT_EQ(got.down_sum[i], ds[l]) << "down, width " << width << ", thread " << i;
        ASSERT_EQ(got.up_scan[i], us[l]) << "up, width " << width << ", thread " << i;
        ASSERT_EQ(got.idx[i], shfl_ref(v, l, 'i', l * 7 + 3, width)) << "idx, width " << width << ", thread " << i;
      }
    }
  }
}

TEST(Simt, WarpShufflesAllKindsAndWidths) {
  REQUIRE_DEVICE();
  check_shuffles<int>(1);
  check_shuffles<unsigned>(3u);
  check_shuffles<float>(0.5f);
  check_shuffles<double>(0.25);
  check_shuffles<long long>(1LL << 33);  // values over 32 bits move whole
  check_shuffles<unsigned long long>(1ULL << 40);
}

TEST(Simt, ShuffleEdgeCases) {
  REQUIRE_DEVICE();
  std::vector<int> x(32);
  std::iota(x.begin(), x.end(), 100);
  struct Case {
    char kind;
    int kind_id, arg, width;
  };
  const Case cases[] = {{'u', 1, 0, 32}, {'u', 1, 3, 8},  {'u', 1, 31, 32}, {'d', 2, 5, 8},  {'d', 2, 31, 32},
                        {'x', 3, 16, 8}, {'x', 3, 31, 32}, {'x', 3, 4, 4},  {'i', 0, -1, 8}, {'i', 0, 40, 32},
                        {'i', 0, 5, 1},  {'d', 2, 1, 1}};
  for (const Case& c : cases) {
    const std::vector<int> got = simt_test::shuffle_raw(x, c.kind_id, c.arg, c.width);
    for (int l = 0; l < 32; ++l) {
      EXPECT_EQ(got[l], shfl_ref(x, l, c.kind, c.arg, c.width))
          << "kind " << c.kind << " arg " << c.arg << " width " << c.width << " lane " << l;
    }
  }
}

TEST(Simt, BallotAnyAll) {
  REQUIRE_DEVICE();
  std::mt19937 rng(3);
  std::vector<int> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int>(rng() % 3) - 1;
  for (int l = 0; l < 32; ++l) {
    x[32 + l] = 1;   // warp 1: all true
    x[64 + l] = -1;  // warp 2: none true
  }
  x[96 + 20] = 1;  // warp 3: only lane 20 (outside the low half)
  for (int l = 0; l < 32; ++l) {
    if (l != 20) x[96 + l] = 0;
  }
  const simt_test::VoteResults got = simt_test::votes(x);
  for (size_t w0 = 0; w0 < x.size(); w0 += 32) {
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) ballot |= (x[w0 + l] > 0 ? 1u : 0u) << l;
    const unsigned low = ballot & 0xffffu;
    for (int l = 0; l < 32; ++l) {
      const size_t i = w0 + l;
      EXPECT_EQ(got.ballot[i], ballot) << i;
      EXPECT_EQ(got.any[i] != 0, ballot != 0) << i;
      EXPECT_EQ(got.all[i] != 0, ballot == 0xffffffffu) << i;
      EXPECT_EQ(got.ballot_low[i], l < 16 ? low : 0u) << i;
      EXPECT_EQ(got.any_low[i] != 0, l < 16 && low != 0) << i;
      EXPECT_EQ(got.all_low[i] != 0, l < 16 && low == 0xffffu) << i;
    }
  }
}

TEST(Simt, WarpReductionsAndMatches) {
  REQUIRE_DEVICE();
  std::mt19937 rng(11);
  std::vector<int> x(128);
  for (int& v : x) v = static_cast<int>(rng() % 7) - 3;  // negatives: signed and unsigned order differ
  for (int l = 0; l < 32; ++l) x[64 + l] = 5;            // warp 2: all equal
  const simt_test::WarpReduceResults got = simt_test::warp_reductions(x);
  for (size_t w0 = 0; w0 < x.size(); w0 += 32) {
    int add = 0, mn = x[w0], mx = x[w0];
    unsigned mnu = ~0u, mxu = 0, a = ~0u, o = 0, xo = 0;
    for (int l = 0; l < 32; ++l) {
      const int v = x[w0 + l];
      const auto u = static_cast<unsigned>(v);
      add += v;
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      mnu = std::min(mnu, u);
      mxu = std::max(mxu, u);
      a &= u;
      o |= u;
      xo ^= u;
    }
    bool same = true;
    for (int l = 0; l < 32; ++l) same = same && x[w0 + l] == x[w0];
    for (int l = 0; l < 32; ++l) {
      const size_t i = w0 + l;
      unsigned any = 0;
      for (int k = 0; k < 32; ++k) any |= (x[w0 + k] == x[i] ? 1u : 0u) << k;
      EXPECT_EQ(got.add[i], add) << i;
      EXPECT_EQ(got.min[i], mn) << i;
      EXPECT_EQ(got.max[i], mx) << i;
      EXPECT_EQ(got.min_u[i], mnu) << i;
      EXPECT_EQ(got.max_u[i], mxu) << i;
      EXPECT_EQ(got.and_[i], a) << i;
      EXPECT_EQ(got.or_[i], o) << i;
      EXPECT_EQ(got.xor_[i], xo) << i;
      EXPECT_EQ(got.match_any[i], any) << i;
      EXPECT_EQ(got.match_all[i], same ? 0xffffffffu : 0u) << i;
      EXPECT_EQ(got.match_pred[i], same ? 1 : 0) << i;
    }
  }
}

TEST(Simt, AtomicsAcrossBlocks) {
  REQUIRE_DEVICE();
  std::mt19937 rng(5);
  const int n = 10000, bins = 13;
  std::vector<int> x(n);
  for (int& v : x) v = static_cast<int>(rng() % 20001) - 10000;
  const simt_test::AtomicResults got = simt_test::atomics(x, bins, 256);
  std::vector<int> hist(bins, 0);
  double fsum = 0, dsum = 0;
  unsigned long long usum = 0;
  int mx = x[0], mn = x[0];
  unsigned umax = 0;
  for (int v : x) {
    ++hist[((v % bins) + bins) % bins];
    fsum += 0.5 * (v % 8);
    dsum += 0.25 * v;
    usum += static_cast<unsigned long long>(v) + 1000000000ull;
    mx = std::max(mx, v);
    mn = std::min(mn, v);
    umax = std::max(umax, static_cast<unsigned>(v) * 3u);
  }
  EXPECT_EQ(got.histogram, hist);
  EXPECT_EQ(got.float_sum, static_cast<float>(fsum));  // halves with |sum| < 2^24: exact in any order
  EXPECT_EQ(got.double_sum, dsum);
  EXPECT_EQ(got.ull_sum, usum);
  EXPECT_EQ(got.max, mx);
  EXPECT_EQ(got.min, mn);
  EXPECT_EQ(got.umax, umax);
  EXPECT_EQ(got.cas_count, n);
  EXPECT_EQ(got.exch_seen, n - 1);
}

TEST(Simt, DynamicSharedMemory) {
  REQUIRE_DEVICE();
  std::vector<float> x(1000);
  std::iota(x.begin(), x.end(), 0.0f);
  for (int block : {32, 128, 512}) {
    const std::vector<float> y = simt_test::reverse_blocks(x, block, block * sizeof(float));
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t b = i / block, base = b * block, j = base + (block - 1 - (i - base));
      if (j < x.size()) {
        EXPECT_EQ(y[j], x[i]) << "block " << block << ", i " << i;
      }
    }
  }
  // More than 48 KiB after the opt-in.
  hulk::cuda::set_max_dynamic_shared(100 * 1024);
  const std::vector<float> y = simt_test::reverse_blocks(x, 256, 100 * 1024);
  hulk::cuda::set_max_dynamic_shared(hulk::cuda::kDefaultMaxDynamicShared);
  EXPECT_EQ(y[255], x[0]);
  EXPECT_EQ(y[0], x[255]);
  EXPECT_THROW(hulk::cuda::set_max_dynamic_shared(228 * 1024), std::invalid_argument);
}

TEST(Simt, VectorTypes) {
  REQUIRE_DEVICE();
  EXPECT_EQ(simt_test::vector_alignments(), (std::vector<int>{8, 16, 8, 16, 8, 16, 16}));
  std::vector<float> x(4 * 300);
  std::iota(x.begin(), x.end(), 1.0f);
  const std::vector<float> y = simt_test::scale_float4(x, 2.0f, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], 2.0f * x[i] - 1.0f) << i;
  std::vector<int> a(2 * 300);
  std::iota(a.begin(), a.end(), -100);
  const std::vector<int> b = simt_test::add_int2(a);
  for (size_t i = 0; i < a.size(); i += 2) {
    EXPECT_EQ(b[i], a[i] + a[i + 1]);
    EXPECT_EQ(b[i + 1], a[i] - a[i + 1]);
  }
}

TEST(Simt, MultiDimensionalBlocksFormWarpsOfConsecutiveLinearIds) {
  REQUIRE_DEVICE();
  const simt_test::LayoutResults got = simt_test::layout(8, 4, 2);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(got.linear[t], t);
    EXPECT_EQ(got.warp_base[t], t / 32 * 32);
    EXPECT_EQ(got.even_count[t], 32);  // __syncthreads_count
    EXPECT_EQ(got.and_all[t], 1);
    EXPECT_EQ(got.or_last[t], 1);
    EXPECT_EQ(got.or_none[t], 0);
  }
}

TEST(Simt, SharedMemoryInDeviceFunctions) {
  REQUIRE_DEVICE();
  std::vector<float> x(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 23) - 11);
  for (int block : {32, 96, 1024}) {
    const std::vector<float> got = simt_test::block_sums_warp(x, block);
    ASSERT_EQ(got.size(), (x.size() + block - 1) / block);
    for (size_t b = 0; b < got.size(); ++b) {
      float want = 0;
      for (size_t i = b * block; i < std::min(x.size(), (b + 1) * block); ++i) want += x[i];
      EXPECT_EQ(got[b], want) << "block size " << block << ", block " << b;
    }
  }
}

TEST(Simt, PerKernelDynamicSharedOptIn) {
  REQUIRE_DEVICE();
  std::vector<float> x(512);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::vector<float> y = simt_test::reverse_blocks_func_optin(x, 256, 64 * 1024);
  EXPECT_EQ(y[0], x[255]);
  EXPECT_EQ(y[511], x[256]);
}

TEST(Simt, KernelParametersArePerThreadCopies) {
  REQUIRE_DEVICE();
  for (int v : simt_test::param_copies(41)) EXPECT_EQ(v, 41);
}

TEST(Simt, SpinLockMakesProgress) {
  REQUIRE_DEVICE();
  EXPECT_EQ(simt_test::spin_lock_counter(3, 128, 5), 3 * 4 * 5);
}

TEST(Simt, StreamsAndConcurrentHostThreads) {
  REQUIRE_DEVICE();
  EXPECT_NO_THROW(simt_test::launch_in_stream(false));
  // Each host thread has its own simulator state, shared memory included.
  std::vector<float> x(4096);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::vector<float> want = simt_test::block_sums(x, 256);
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 5; ++rep) got[k] = simt_test::block_sums(x, 256);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

TEST(Simt, ActiveMaskInDivergentCode) {
  REQUIRE_SIMULATOR();  // on a GPU the converged set after a branch is not guaranteed
  const std::vector<unsigned> m = simt_test::activemask_diverged(10);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(m[t], t % 32 < 10 ? 0x3ffu : 0u) << t;
}

TEST(Simt, SpeedOf64kThreadsWithBarriersAndShuffles) {
  REQUIRE_DEVICE();
  double seconds = 0;
  const double sum = simt_test::barrier_shuffle_bench(256, 256, &seconds);
  // Each warp's xor-sum of the reversed tile plus the element: checks the result, not the time.
  double want = 0;
  for (int b = 0; b < 256; ++b) {
    std::vector<float> tile(256);
    for (int t = 0; t < 256; ++t) tile[t] = static_cast<float>((b * 256 + t) % 17);
    for (int t = 0; t < 256; ++t) {
      const int w0 = t / 32 * 32;
      double warp = 0;
      for (int l = 0; l < 32; ++l) warp += tile[255 - (w0 + l)];
      want += warp + tile[t];
    }
  }
  EXPECT_EQ(sum, want);
  const char* where = simulated() ? "SIMT simulator" : "GPU";
  std::cout << "[ speed    ] 256 blocks x 256 threads, 2 __syncthreads + 5 __shfl_xor_sync each: " << seconds * 1e3
            << " ms (" << where << ")" << std::endl;

  std::vector<float> x(1 << 20);
  std::iota(x.begin(), x.end(), 0.0f);
  const std::vector<float> y = simt_test::axpb(x, &seconds);
  for (size_t i = 0; i < x.size(); i += 4099) EXPECT_EQ(y[i], 2.0f * x[i] + 1.0f) << i;
  std::cout << "[ speed    ] 4096 blocks x 256 threads, elementwise, no barrier: " << seconds * 1e3 << " ms ("
            << where << ")" << std::endl;
}

// ---- misuse: clear errors in the simulator -------------------------------------------------------

TEST(SimtMisuse, BarrierNotReachedByEveryThread) {
  REQUIRE_SIMULATOR();
  expect_error(simt_test::early_return_before_barrier,
               {"kernel 'early_return'", "block (0,0,0)", "__syncthreads() is reached by 16 of 64 threads",
                "48 exited", "thread (16,0,0)"});
  expect_usable();
}

TEST(SimtMisuse, WarpMaskDisagreement) {
  REQUIRE_SIMULATOR();
  expect_error(simt_test::mask_mismatch, {"kernel 'mask_mismatch'", "__shfl_sync with mask 0xffffffff",
                                          "lane 5 waits in __shfl_sync with mask 0x0000ffff"});
  expect_usable();
  expect_error(simt_test::op_mismatch, {"kernel 'op_mismatch'", "disagree on the warp operation", "__ballot_sync",
                                        "__shfl_sync"});
  expect_usable();
}

TEST(SimtMisuse, LaneInMaskNeverArrives) {
  REQUIRE_SIMULATOR();
  expect_error(simt_test::lane_exits_before_syncwarp,
               {"kernel 'lane_exit'", "__syncwarp with mask 0xffffffff", "lane 3 exited without reaching it"});
  expect_usable();
}

TEST(SimtMisuse, BadWarpArguments) {
  REQUIRE_SIMULATOR();
  expect_error(simt_test::lane_not_in_own_mask, {"kernel 'not_in_mask'", "not in the mask"});
  expect_usable();
  expect_error(simt_test::bad_shuffle_width, {"kernel 'bad_width'", "width 3"});
  expect_usable();
}

TEST(SimtMisuse, PartialWarps) {
  REQUIRE_SIMULATOR();
  // Lanes the block does not have (48 threads: warp 1 has 16) drop out of a full mask...
  const std::vector<unsigned> b = simt_test::partial_warp(0);
  EXPECT_EQ(b[0], 0xffffffffu);
  EXPECT_EQ(b[47], 0x0000ffffu);
  // ...but reading one is an error (CUDA returns an undefined value).
  expect_error([] { simt_test::partial_warp(1); },
               {"kernel 'partial_warp'", "block (0,0,0), thread (32,0,0)", "__shfl_down_sync: lane 0 reads lane 16",
                "does not take part"});
  expect_usable();
}

TEST(SimtMisuse, ExceptionFromKernelCodeNamesTheThread) {
  REQUIRE_SIMULATOR();
  // Thread 70 = block 1, thread 6 throws while threads 0-5 of its block wait at the barrier.
  expect_error([] { simt_test::throw_in_kernel(70); }, {"kernel 'throwing'", "block (1,0,0), thread (6,0,0)", "bad row 7"});
  expect_usable();
  EXPECT_NO_THROW(simt_test::throw_in_kernel(-1));
}

TEST(SimtMisuse, SpinWaitThatCannotEnd) {
  REQUIRE_SIMULATOR();
  expect_error(simt_test::spin_forever, {"kernel 'spin_forever'", "thread (0,0,0)", "no other thread of the block can run"});
  expect_usable();
}

TEST(SimtMisuse, LaunchIntoADestroyedStream) {
  REQUIRE_SIMULATOR();
  expect_error([] { simt_test::launch_in_stream(true); }, {"kernel 'in_stream'", "stream"});
  expect_usable();
}

TEST(SimtMisuse, MissingBarrierShowsUpInOneBlockOrder) {
  REQUIRE_SIMULATOR();
  // Block 0 starts its threads from thread 0 (the lower neighbour has written), block 1 from
  // the last thread (it has not: the read sees the 0xff fill of shared memory, a NaN).
  std::vector<float> x(128, 1.0f);
  const std::vector<float> y = simt_test::racy_neighbour_sum(x, 64);
  EXPECT_EQ(y[5], 2.0f);
  EXPECT_TRUE(std::isnan(y[64 + 5])) << y[64 + 5];
}

TEST(SimtMisuse, LaunchFromAKernel) {
  REQUIRE_SIMULATOR();
  expect_error(simt_test::nested_launch, {"kernel 'inner'", "dynamic parallelism"});
  expect_usable();
}

#if defined(HULK_SIMT)  // host code of the nvcc build cannot call device functions at all
TEST(SimtMisuse, BarrierOutsideAKernel) {
  expect_error([] { __syncthreads(); }, {"__syncthreads() called outside a kernel"});
  expect_error([] { __shfl_sync(0xffffffffu, 1, 0); }, {"__shfl_sync called outside a kernel"});
}
#endif

TEST(SimtRuntime, CopiesAreCheckedAgainstAllocations) {
  REQUIRE_SIMULATOR();  // on a GPU some of these are undefined behaviour rather than errors
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 16 * sizeof(float)), cudaSuccess);
  std::vector<float> h(32, 1.0f);
  EXPECT_EQ(cudaMemcpy(d, h.data(), 16 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d + 8, h.data(), 8 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d + 8, h.data(), 9 * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(h.data(), d, 17 * sizeof(float), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(h.data(), d, 4, cudaMemcpyHostToDevice), cudaErrorInvalidValue);  // directions swapped
  EXPECT_EQ(cudaMemcpy(d, h.data(), 4, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(d, 0, 16 * sizeof(float) + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaMemset(d, 0, 16 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(h.data(), d, 16 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h[15], 0.0f);
  EXPECT_EQ(cudaFree(d + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidValue);  // twice
  cudaGetLastError();

  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d, 4 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(d, h.data(), 4 * sizeof(float), cudaMemcpyHostToDevice, s), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaMemcpyAsync(d, h.data(), 4, cudaMemcpyHostToDevice, s), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  cudaGetLastError();

  int count = -1;
  EXPECT_EQ(cudaGetDeviceCount(&count), cudaErrorNoDevice);
  EXPECT_EQ(count, 0);
  EXPECT_STREQ(cudaGetErrorString(cudaErrorNoDevice), "SIMT build: kernels run on the CPU simulator, no GPU is used");
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaGetLastError();
}

TEST(SimtMisuse, LaunchDimensionsOverTheLimits) {
  REQUIRE_SIMULATOR();
  using simt_test::launch_with;
  EXPECT_NO_THROW(launch_with(1, 1, 1, 1024, 1, 1, 0));
  EXPECT_NO_THROW(launch_with(1, 1, 1, 16, 1, 64, 0));
  EXPECT_NO_THROW(launch_with(3, 65535, 1, 1, 1, 1, 0));
  expect_error([] { launch_with(1, 1, 1, 1025, 1, 1, 0); }, {"kernel 'noop'", "block (1025,1,1)", "device limits"});
  expect_error([] { launch_with(1, 1, 1, 64, 32, 1, 0); }, {"block (64,32,1)", "1024 threads"});
  expect_error([] { launch_with(1, 1, 1, 1, 1, 65, 0); }, {"block (1,1,65)", "z <= 64"});
  expect_error([] { launch_with(1, 65536, 1, 32, 1, 1, 0); }, {"grid (1,65536,1)", "device limits"});
  expect_error([] { launch_with(1, 1, 65536, 32, 1, 1, 0); }, {"grid (1,1,65536)"});
  expect_error([] { launch_with(0, 1, 1, 32, 1, 1, 0); }, {"kernel 'noop'", "zero dimension"});
  expect_error([] { launch_with(1, 1, 1, 0, 1, 1, 0); }, {"zero dimension"});
  expect_usable();
}

TEST(SimtMisuse, SharedMemoryOverTheLimit) {
  REQUIRE_SIMULATOR();
  using simt_test::launch_with;
  EXPECT_NO_THROW(launch_with(1, 1, 1, 32, 1, 1, 48 * 1024));
  expect_error([] { launch_with(1, 1, 1, 32, 1, 1, 48 * 1024 + 1); },
               {"kernel 'noop'", "49153 bytes of dynamic shared memory", "limit of 49152"});
  hulk::cuda::set_max_dynamic_shared(227 * 1024);
  EXPECT_NO_THROW(launch_with(1, 1, 1, 32, 1, 1, 227 * 1024));
  expect_error([] { launch_with(1, 1, 1, 32, 1, 1, 227 * 1024 + 4); }, {"limit of 232448"});
  hulk::cuda::set_max_dynamic_shared(hulk::cuda::kDefaultMaxDynamicShared);
  expect_usable();
}

}  // namespace
