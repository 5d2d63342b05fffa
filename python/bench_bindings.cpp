// hulk._core.bench: timings of single layers and ops on a device, for benchmarks/bench_gpu.py.
// Inputs are fresh random values made on the host and moved once; each repeat synchronises
// the device before the clock is read, and the median of the repeats is returned.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "csrc/graph.h"
#include "csrc/nn/layers.h"
#include "csrc/ops/ops.h"
#ifdef HULK_WITH_CUDA
#include "cuda/runtime/spmm_path.h"
#endif

namespace py = pybind11;
using namespace hulk;

namespace {

Tensor random_tensor(int64_t rows, int64_t cols, uint32_t seed, Device device) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t(rows, cols);
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = u(rng);
  return t.to(device);
}

// Median seconds of `repeats` runs of body after `warmup` untimed ones.
template <typename Body>
double median_seconds(int repeats, int warmup, Body&& body) {
  if (repeats < 1) throw std::invalid_argument("repeats must be >= 1, got " + std::to_string(repeats));
  for (int i = 0; i < warmup; ++i) body();
  device::synchronize();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    device::synchronize();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Runs `body` with the SpMM path named (CUDA only; "custom" elsewhere).
template <typename Body>
auto with_spmm_path(const std::string& path, Body&& body) {
#ifdef HULK_WITH_CUDA
  const auto before = cuda::spmm_path();
  cuda::set_spmm_path(cuda::parse_spmm_path(path));
  try {
    auto r = body();
    cuda::set_spmm_path(before);
    return r;
  } catch (...) {
    cuda::set_spmm_path(before);
    throw;
  }
#else
  if (path != "custom") throw std::invalid_argument("spmm path '" + path + "' needs the CUDA backend");
  return body();
#endif
}

nn::GraphInputs layer_inputs(const Graph& g, int64_t fe, Device device) {
  if (device == Device::CUDA) g.prepare_device();
  nn::GraphInputs in;
  in.graph = &g;
  in.e = random_tensor(g.num_edges(), fe, 2, device);
  ops::segment_sum_edges(g.in(), in.e, in.edge_sum);
  in.sum_coef = ops::pool_coefficients(g.in(), ops::Pooling::Sum, device);
  in.mean_coef = ops::pool_coefficients(g.in(), ops::Pooling::Mean, device);
  return in;
}

// A layer's forward + backward (input gradient included) on random input and output
// gradient: {"seconds": median, "peak_bytes": the most device memory in use meanwhile}.
py::dict time_layer(nn::Layer& layer, const nn::GraphInputs& in, int64_t n, int64_t in_features, Device dev,
                    const std::string& path, int repeats, int warmup) {
  for (nn::Param* p : layer.params()) {
    for (Tensor* t : {&p->value, &p->grad}) *t = t->to(dev);
  }
  const Tensor h = random_tensor(n, in_features, 3, dev);
  const Tensor dout = random_tensor(n, layer.out_features(), 4, dev);
  Tensor out, dh, scratch;
  device::reset_peak();
  double s = 0;
  {
    py::gil_scoped_release release;
    s = with_spmm_path(path, [&] {
      return median_seconds(repeats, warmup, [&] {
        layer.forward(in, h, out, scratch);
        layer.backward(in, h, dout, &dh, scratch);
      });
    });
  }
  py::dict d;
  d["seconds"] = s;
  d["peak_bytes"] = device::peak_allocated_bytes();
  return d;
}

}  // namespace

void bind_bench(py::module_& m) {
  auto b = m.def_submodule("bench", "Device timings for benchmarks/bench_gpu.py");
  b.def(
      "spmm",
      [](const Graph& g, int64_t features, bool normalized, const std::string& device, const std::string& path,
         int repeats, int warmup) {
        const Device dev = parse_device(device);
        if (dev == Device::CUDA) g.prepare_device();
        const Csr& a = normalized ? g.gcn(false) : g.in();
        const Tensor x = random_tensor(g.num_nodes(), features, 1, dev);
        Tensor out;
        py::gil_scoped_release release;
        return with_spmm_path(path, [&] {
          return median_seconds(repeats, warmup, [&] { ops::spmm(a, x, out, normalized); });
        });
      },
      py::arg("graph"), py::arg("features"), py::arg("normalized"), py::arg("device"), py::arg("path") = "custom",
      py::arg("repeats") = 20, py::arg("warmup") = 3,
      "Median seconds of out = A x (A the in-adjacency, or GCN-normalised) with x [N, features]");
  b.def(
      "gcn_layer",
      [](const Graph& g, int64_t in_features, int64_t out_features, const std::string& device,
         const std::string& path, int repeats, int warmup) {
        const Device dev = parse_device(device);
        nn::GraphInputs in = layer_inputs(g, 0, dev);
        nn::GcnConv layer(in_features, out_features, false, /*seed=*/0, /*index=*/1, /*layer=*/0);
        return time_layer(layer, in, g.num_nodes(), in_features, dev, path, repeats, warmup);
      },
      py::arg("graph"), py::arg("in_features"), py::arg("out_features"), py::arg("device"),
      py::arg("path") = "custom", py::arg("repeats") = 20, py::arg("warmup") = 3,
      "GCNConv forward + backward (input gradient included): median seconds and peak device bytes");
  b.def(
      "edge_pool",
      [](const Graph& g, int64_t features, int64_t edge_features, int64_t out_features, bool per_edge,
         const std::string& device, int repeats, int warmup) {
        const Device dev = parse_device(device);
        nn::GraphInputs in = layer_inputs(g, edge_features, dev);
        nn::EdgePool layer(features, edge_features, out_features, ops::Pooling::Sum, per_edge, 0);
        return time_layer(layer, in, g.num_nodes(), features, dev, "custom", repeats, warmup);
      },
      py::arg("graph"), py::arg("features"), py::arg("edge_features"), py::arg("out_features"),
      py::arg("per_edge"), py::arg("device"), py::arg("repeats") = 20, py::arg("warmup") = 3,
      "EdgePool forward + backward, fast path or per-edge reference: median seconds and peak device bytes");
  b.def(
      "copy_bandwidth",
      [](int64_t bytes, int repeats) {
        const auto floats = static_cast<size_t>(bytes / 4);
        DeviceArray<float> src(floats), dst(floats);
        device::zero(src.data(), src.bytes());
        py::gil_scoped_release release;
        const double s = median_seconds(repeats, 2, [&] {
          device::copy(dst.data(), Device::CUDA, src.data(), Device::CUDA, dst.bytes());
        });
        return 2.0 * static_cast<double>(dst.bytes()) / s;  // bytes read plus bytes written
      },
      py::arg("bytes"), py::arg("repeats") = 20,
      "Device-to-device copy bandwidth in bytes per second (read + written)");
}
