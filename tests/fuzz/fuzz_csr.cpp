// libFuzzer target: the edge-list validation and CSR builder (csrc/graph.cpp) through the
// Graph constructor and batching. Input layout (so that seeds are easy to write by hand):
//   byte 0   number of nodes - 1 (1..256 nodes)
//   byte 1   flags: bit 0 undirected, bit 1 weighted, bits 2-3 node features F, bits 4-5 edge features Fe
//   then per edge: int8 source, int8 target (negative and out-of-range ids on purpose),
//   and when weighted one byte of weight: 255 = NaN, 254 = +inf, else (b - 64) / 16.
// Every input must give a graph or std::invalid_argument; never a crash or undefined behaviour.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "csrc/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int64_t n = static_cast<int64_t>(data[0]) + 1;
  const bool undirected = data[1] & 1, weighted = data[1] & 2;
  const int64_t f = (data[1] >> 2) & 3, fe = (data[1] >> 4) & 3;
  std::vector<int64_t> src, dst;
  std::vector<float> w;
  const size_t rec = weighted ? 3 : 2;
  for (size_t i = 2; i + rec <= size; i += rec) {
    src.push_back(static_cast<int8_t>(data[i]));
    dst.push_back(static_cast<int8_t>(data[i + 1]));
    if (weighted) {
      const uint8_t b = data[i + 2];
      w.push_back(b == 255 ? std::numeric_limits<float>::quiet_NaN()
                           : b == 254 ? std::numeric_limits<float>::infinity() : (static_cast<float>(b) - 64.0f) / 16.0f);
    }
  }
  const auto m = static_cast<int64_t>(src.size());
  hulk::Tensor x(n, f), e(m, fe);
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i % 11) - 5.0f;
  for (int64_t i = 0; i < e.size(); ++i) e.data()[i] = static_cast<float>(i % 3);
  try {
    hulk::validate_edge_list(n, src, dst, w, undirected);
    hulk::Graph g(n, src, dst, std::move(x), std::move(e), w, undirected);
    // Structural invariants of what was built.
    const hulk::Csr& in = g.in();
    if (in.indptr.size() != static_cast<size_t>(n + 1) || in.indptr.back() != in.nnz()) __builtin_trap();
    if (in.nnz() != (undirected ? 2 * m : m)) __builtin_trap();
    for (int32_t c : in.indices) {
      if (c < 0 || c >= n) __builtin_trap();
    }
    const hulk::Graph b = hulk::batch_graphs({&g, &g});
    if (b.num_nodes() != 2 * n || b.num_edges() != 2 * m) __builtin_trap();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
