// hulk._core.engine: the GNN engine's bindings (graphs, the model, threads, the CUDA backend's
// state). Thin: converts numpy arrays to the C++ types and back. Shape and dtype checks with
// friendly messages live in the Python package; the C++ side re-checks everything it relies on.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <omp.h>

#include "csrc/graph.h"
#include "csrc/nn/model.h"
#include "csrc/ops/ops.h"
#include "csrc/ops/cpu/blas.h"
#ifdef HULK_WITH_CUDA
#include "cuda/runtime/runtime.h"
#include "cuda/runtime/spmm_path.h"
#endif

namespace py = pybind11;
using namespace hulk;

namespace {

template <typename T>
using CArray = py::array_t<T, py::array::c_style | py::array::forcecast>;

Tensor to_tensor(const CArray<float>& a, const char* what) {
  if (a.ndim() != 2) throw std::invalid_argument(std::string(what) + ": expected a 2-D array, got " + std::to_string(a.ndim()) + "-D");
  return Tensor::from_data(a.shape(0), a.shape(1), a.data());
}

// Hands a CPU tensor's storage to numpy without a copy: the array owns the moved tensor.
py::array_t<float> to_numpy(Tensor&& t) {
  if (t.device() != Device::CPU) t = t.to(Device::CPU);
  auto* owner = new Tensor(std::move(t));
  py::capsule free_when_done(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array_t<float>({owner->rows(), owner->cols()}, owner->data(), free_when_done);
}

py::array_t<float> to_numpy(const Tensor& t) { return to_numpy(t.to(Device::CPU)); }

template <typename T>
std::vector<T> to_vector(const CArray<T>& a, const char* what) {
  if (a.ndim() != 1) throw std::invalid_argument(std::string(what) + ": expected a 1-D array, got " + std::to_string(a.ndim()) + "-D");
  return std::vector<T>(a.data(), a.data() + a.size());
}

template <typename T>
py::array_t<T> vector_to_numpy(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

ops::Pooling parse_pooling(const std::string& s) {
  if (s == "sum") return ops::Pooling::Sum;
  if (s == "mean") return ops::Pooling::Mean;
  throw std::invalid_argument("pooling must be 'sum' or 'mean', got '" + s + "'");
}

py::dict stats_to_dict(const nn::EpochStats& s) {
  py::dict d;
  d["epoch"] = s.epoch;
  d["train_loss"] = s.train_loss;
  d["train_acc"] = s.train_acc;
  d["val_loss"] = s.val_loss;
  d["val_acc"] = s.val_acc;
  d["seconds"] = s.seconds;
  return d;
}

// A layer as {"kind": "gcn", "width": 16, "weight_decay": 5e-4 or None} / {"kind": "dropout",
// "rate": 0.5} / {"kind": "relu"}: the keys a kind has (hulk/nn.py converts both ways).
py::dict layer_to_dict(const nn::LayerSpec& l) {
  py::dict d;
  d["kind"] = nn::layer_kind_name(l.kind);
  if (l.has_params()) {
    d["width"] = l.width;
    d["weight_decay"] = std::isnan(l.weight_decay) ? py::object(py::none()) : py::object(py::float_(l.weight_decay));
  } else if (l.kind == nn::LayerKind::Dropout) {
    d["rate"] = l.rate;
  }
  return d;
}

nn::LayerSpec layer_from_dict(const py::dict& d, size_t i) {
  const std::string where = "layers[" + std::to_string(i) + "]";
  if (!d.contains("kind")) throw std::invalid_argument(where + ": no 'kind'");
  for (const auto& item : d) {
    const std::string key = py::str(item.first);
    if (key != "kind" && key != "width" && key != "rate" && key != "weight_decay")
      throw std::invalid_argument(where + ": unknown key '" + key + "'");
  }
  nn::LayerSpec l;
  l.kind = nn::parse_layer_kind(d["kind"].cast<std::string>(), where);
  if (d.contains("width")) l.width = d["width"].cast<int64_t>();
  if (d.contains("rate")) l.rate = d["rate"].cast<float>();
  if (d.contains("weight_decay") && !d["weight_decay"].is_none()) l.weight_decay = d["weight_decay"].cast<float>();
  return l;
}

py::dict config_to_dict(const nn::ModelConfig& c) {
  py::dict d;
  d["in_features"] = c.in_features;
  d["edge_features"] = c.edge_features;
  d["num_classes"] = c.num_classes;
  py::list layers;
  for (const nn::LayerSpec& l : c.layers) layers.append(layer_to_dict(l));
  d["layers"] = layers;
  d["pooling"] = c.pooling == ops::Pooling::Sum ? "sum" : "mean";
  d["per_edge_reference"] = c.per_edge_reference;
  d["gcn_edge_weights"] = c.gcn_edge_weights;
  d["standardize"] = c.standardize;
  d["seed"] = c.seed;
  return d;
}

}  // namespace

// Long but flat: one statement per Python name, the submodule's table of contents; the
// conversions live in the helpers above.
void bind_engine(py::module_& m) {

#ifdef HULK_WITH_CUDA
  m.attr("built_with_cuda") = true;
  m.def("cuda_device_count", &cuda::device_count, "Number of usable CUDA devices (0 without a driver or GPU)");
  m.def("cuda_unavailable_reason", &cuda::unavailable_reason);
  m.def("set_spmm_path", [](const std::string& path) { cuda::set_spmm_path(cuda::parse_spmm_path(path)); },
        py::arg("path"), "Aggregation on CUDA: 'custom' (hulk's kernels, the default) or 'cusparse'");
  m.def("spmm_path", [] { return std::string(cuda::spmm_path_name(cuda::spmm_path())); });
#else
  m.attr("built_with_cuda") = false;
  m.def("cuda_device_count", [] { return 0; });
  m.def("cuda_unavailable_reason", [] { return std::string("hulk was built without the CUDA backend (nvcc was not found)"); });
#endif
  // The SIMT build runs the CUDA kernels on the CPU simulator: device="cuda" works, no GPU is used.
  m.attr("cuda_simulated") = device::cuda_simulated();
  m.def("cuda_memory", [] {
    py::dict d;
    d["cached_bytes"] = device::cached_bytes();
    return d;
  }, "The CUDA caching allocator's state");
  m.def("cuda_empty_cache", &device::empty_cache, "Frees the device memory the caching allocator holds");
  // One thread pool (issue 20): our OpenMP threads run every kernel, GEMMs included (row blocks,
  // one single-threaded BLAS call each), so set_num_threads controls them all.
  ops::cpu::blas_single_threaded();
  m.def("get_num_threads", [] { return omp_get_max_threads(); });
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw std::invalid_argument("num_threads must be >= 1, got " + std::to_string(n));
    omp_set_num_threads(n);
    ops::cpu::blas_single_threaded();
  });
  m.def("blas_info", [] {
    const ops::cpu::BlasInfo info = ops::cpu::blas_info();
    py::dict d;
    d["vendor"] = info.vendor;
    d["parallel"] = info.parallel;
    d["threads"] = info.threads;
    d["core"] = info.core;
    return d;
  }, "The BLAS the core links: vendor, OpenBLAS's threading build (0 none, 1 pthreads, 2 OpenMP), thread count "
     "and the kernels OpenBLAS picked for this CPU");

  m.def(
      "validate_edge_list",
      [](int64_t num_nodes, const CArray<int64_t>& src, const CArray<int64_t>& dst, const CArray<float>& weights,
         bool undirected) {
        const EdgeListReport r = validate_edge_list(num_nodes, to_vector(src, "src"), to_vector(dst, "dst"),
                                                    to_vector(weights, "weights"), undirected);
        return py::make_tuple(vector_to_numpy(r.self_loops), vector_to_numpy(r.duplicates));
      },
      py::arg("num_nodes"), py::arg("src"), py::arg("dst"), py::arg("weights"), py::arg("undirected"),
      "Checks ids and weights (raises ValueError); returns (self_loop_indices, duplicate_indices)");

  py::class_<Graph>(m, "Graph")
      .def(py::init([](int64_t num_nodes, const CArray<int64_t>& src, const CArray<int64_t>& dst,
                       const CArray<float>& x, const CArray<float>& e, const CArray<float>& weights,
                       bool undirected) {
             return Graph(num_nodes, to_vector(src, "src"), to_vector(dst, "dst"), to_tensor(x, "x"),
                          to_tensor(e, "e"), to_vector(weights, "weights"), undirected);
           }),
           py::arg("num_nodes"), py::arg("src"), py::arg("dst"), py::arg("x"), py::arg("e"), py::arg("weights"),
           py::arg("undirected"))
      // Sparse node features as the arrays of a CSR [num_nodes, num_features] (issue 20).
      .def(py::init([](int64_t num_nodes, const CArray<int64_t>& src, const CArray<int64_t>& dst,
                       const CArray<int64_t>& x_indptr, const CArray<int32_t>& x_indices,
                       const CArray<float>& x_values, int64_t num_features, const CArray<float>& e,
                       const CArray<float>& weights, bool undirected) {
             Csr x;
             x.num_rows = num_nodes;
             x.num_cols = num_features;
             x.indptr = to_vector(x_indptr, "x_indptr");
             x.indices = to_vector(x_indices, "x_indices");
             x.values = to_vector(x_values, "x_values");
             return Graph(num_nodes, to_vector(src, "src"), to_vector(dst, "dst"), std::move(x), to_tensor(e, "e"),
                          to_vector(weights, "weights"), undirected);
           }),
           py::arg("num_nodes"), py::arg("src"), py::arg("dst"), py::arg("x_indptr"), py::arg("x_indices"),
           py::arg("x_values"), py::arg("num_features"), py::arg("e"), py::arg("weights"), py::arg("undirected"))
      .def_property_readonly("num_nodes", &Graph::num_nodes)
      .def_property_readonly("num_edges", &Graph::num_edges)
      .def_property_readonly("num_node_features", &Graph::num_node_features)
      .def_property_readonly("sparse_features", &Graph::sparse_features)
      .def_property_readonly("num_edge_features", [](const Graph& g) { return g.e().cols(); })
      .def_property_readonly("undirected", &Graph::undirected)
      .def_property_readonly("has_weights", [](const Graph& g) { return !g.weights().empty(); })
      .def_property_readonly("x", [](const Graph& g) { return to_numpy(g.x()); })
      .def(
          "x_csr",
          [](const Graph& g) {
            const Csr& a = g.x_sparse();
            return py::make_tuple(vector_to_numpy(a.indptr), vector_to_numpy(a.indices), vector_to_numpy(a.values));
          },
          "(indptr, indices, values) of the sparse node features (empty arrays when they are dense)")
      .def_property_readonly("e", [](const Graph& g) { return to_numpy(g.e()); })
      .def_property_readonly("src", [](const Graph& g) { return vector_to_numpy(g.src()); })
      .def_property_readonly("dst", [](const Graph& g) { return vector_to_numpy(g.dst()); })
      .def_property_readonly("weights", [](const Graph& g) { return vector_to_numpy(g.weights()); })
      .def(
          "in_csr",
          [](const Graph& g) {
            const Csr& a = g.in();
            return py::make_tuple(vector_to_numpy(a.indptr), vector_to_numpy(a.indices), vector_to_numpy(a.edge_ids));
          },
          "(indptr, indices, edge_ids) of the in-adjacency: row v lists the sources of edges into v")
      .def(
          "spmm",
          [](const Graph& g, const CArray<float>& x, bool normalized) {
            if (x.ndim() != 2) throw std::invalid_argument("x: expected a 2-D array, got " + std::to_string(x.ndim()) + "-D");
            // in() carries the input edge weights; the plain neighbour sum ignores them.
            const Csr& a = normalized ? g.gcn(false) : g.in();
            if (x.shape(0) != a.num_cols)
              throw std::invalid_argument("x: expected " + std::to_string(a.num_cols) + " rows, got " + std::to_string(x.shape(0)));
            // x is read in place and the product written straight into the result: no copies.
            py::array_t<float> out({a.num_rows, static_cast<int64_t>(x.shape(1))});
            const float* xs = x.data();
            float* os = out.mutable_data();
            {
              py::gil_scoped_release release;
              ops::spmm_host(a, xs, x.shape(1), os, /*weighted=*/normalized);
            }
            return out;
          },
          py::arg("x"), py::arg("normalized") = false,
          "A @ x with the in-adjacency (edge weights ignored), or D^-1/2 (A+I) D^-1/2 @ x when normalized")
      .def_static(
          "batch",
          [](const std::vector<const Graph*>& graphs) { return batch_graphs(graphs); }, py::arg("graphs"));

  py::class_<nn::Model>(m, "Model")
      .def(py::init([](int64_t in_features, int64_t edge_features, int64_t num_classes, std::vector<int64_t> hidden,
                       const std::string& pooling, bool edge_pool, bool per_edge_reference, bool gcn_edge_weights,
                       bool standardize, float dropout, uint64_t seed, const std::vector<py::dict>& layers) {
             nn::ModelConfig c;
             for (size_t i = 0; i < layers.size(); ++i) c.layers.push_back(layer_from_dict(layers[i], i));
             c.in_features = in_features;
             c.edge_features = edge_features;
             c.num_classes = num_classes;
             c.hidden = std::move(hidden);
             c.pooling = parse_pooling(pooling);
             c.edge_pool = edge_pool;
             c.per_edge_reference = per_edge_reference;
             c.gcn_edge_weights = gcn_edge_weights;
             c.standardize = standardize;
             c.dropout = dropout;
             c.seed = seed;
             return nn::Model(c);
           }),
           py::arg("in_features"), py::arg("edge_features"), py::arg("num_classes"),
           py::arg("hidden") = std::vector<int64_t>{64, 64}, py::arg("pooling") = "sum", py::arg("edge_pool") = true,
           py::arg("per_edge_reference") = false, py::arg("gcn_edge_weights") = false, py::arg("standardize") = true,
           py::arg("dropout") = 0.0f, py::arg("seed") = 0, py::arg("layers") = std::vector<py::dict>{},
           "The paper's shortcut (hidden, edge_pool, dropout), or the stack `layers` when given "
           "(csrc/nn/stack.h; hidden, edge_pool and dropout are then unused)")
      .def_property_readonly("config", [](const nn::Model& mdl) { return config_to_dict(mdl.config()); })
      .def_property_readonly("num_parameters", &nn::Model::num_parameters)
      .def("parameters",
           [](const nn::Model& mdl) {
             py::dict d;
             for (const nn::Param* p : mdl.parameters()) d[py::str(p->name)] = to_numpy(p->value);
             return d;
           })
      .def(
          "set_parameters",
          [](nn::Model& mdl, const std::map<std::string, CArray<float>>& values) {
            for (const auto& [name, a] : values) {
              nn::Param* found = nullptr;
              for (nn::Param* p : mdl.mutable_parameters()) found = p->name == name ? p : found;
              if (!found) throw std::invalid_argument("set_parameters: no parameter '" + name + "'");
              const Tensor t = to_tensor(a, name.c_str());
              if (t.rows() != found->value.rows() || t.cols() != found->value.cols())
                throw std::invalid_argument("set_parameters: '" + name + "' has the wrong shape");
              found->value = t.to(found->value.device());
            }
          },
          py::arg("values"), "Overwrites weights by name (for gradient checks)")
      .def(
          "gradients",
          [](nn::Model& mdl, const Graph& g, const CArray<int64_t>& labels, const CArray<uint8_t>& mask,
             bool training) {
            const double loss = mdl.compute_gradients(g, to_vector(labels, "labels"), to_vector(mask, "mask"), training);
            py::dict grads;
            for (const nn::Param* p : mdl.parameters()) grads[py::str(p->name)] = to_numpy(p->grad);
            return py::make_tuple(loss, grads);
          },
          py::arg("graph"), py::arg("labels"), py::arg("mask"), py::arg("training") = false,
          "(loss, {name: gradient}) of the current weights without a step; training: with the next step's "
          "dropout masks")
      .def(
          "fit",
          [](nn::Model& mdl, const Graph& g, const CArray<int64_t>& labels, const CArray<uint8_t>& train_mask,
             const CArray<uint8_t>& val_mask, int64_t epochs, float lr, float weight_decay, int64_t patience,
             bool restore_best, const std::function<bool(py::dict)>& on_epoch) {
            nn::TrainOptions o;
            o.epochs = epochs;
            o.lr = lr;
            o.weight_decay = weight_decay;
            o.patience = patience;
            o.restore_best = restore_best;
            std::function<bool(const nn::EpochStats&)> cb;
            if (on_epoch) cb = [&](const nn::EpochStats& s) { return on_epoch(stats_to_dict(s)); };
            const auto history = mdl.fit(g, to_vector(labels, "labels"), to_vector(train_mask, "train_mask"),
                                         to_vector(val_mask, "val_mask"), o, cb);
            py::list out;
            for (const auto& s : history) out.append(stats_to_dict(s));
            return out;
          },
          py::arg("graph"), py::arg("labels"), py::arg("train_mask"), py::arg("val_mask"), py::arg("epochs"),
          py::arg("lr"), py::arg("weight_decay"), py::arg("patience"), py::arg("restore_best"),
          py::arg("on_epoch") = nullptr)
      .def(
          "train_step",
          [](nn::Model& mdl, const Graph& g, const CArray<int64_t>& labels, const CArray<uint8_t>& mask, float lr,
             float weight_decay) {
            const auto r = mdl.train_step(g, to_vector(labels, "labels"), to_vector(mask, "mask"), lr, weight_decay);
            return py::make_tuple(r.loss, r.correct, r.count);
          },
          py::arg("graph"), py::arg("labels"), py::arg("mask"), py::arg("lr"), py::arg("weight_decay"))
      .def("fit_scaler", &nn::Model::fit_scaler, py::arg("graph"))
      .def(
          "evaluate",
          [](nn::Model& mdl, const Graph& g, const CArray<int64_t>& labels, const CArray<uint8_t>& mask) {
            const auto r = mdl.evaluate(g, to_vector(labels, "labels"), to_vector(mask, "mask"));
            return py::make_tuple(r.loss, r.correct, r.count);
          },
          py::arg("graph"), py::arg("labels"), py::arg("mask"))
      .def("logits", [](nn::Model& mdl, const Graph& g) { return to_numpy(mdl.logits(g)); })
      .def("predict_proba", [](nn::Model& mdl, const Graph& g) { return to_numpy(mdl.predict_proba(g)); })
      .def("predict", [](nn::Model& mdl, const Graph& g) { return vector_to_numpy(mdl.predict(g)); })
      .def("save", &nn::Model::save, py::arg("path"))
      .def_static("load", &nn::Model::load, py::arg("path"))
      .def_property_readonly("device", [](const nn::Model& mdl) { return std::string(device_name(mdl.device())); })
      .def(
          "to", [](nn::Model& mdl, const std::string& device) { mdl.to(parse_device(device)); }, py::arg("device"),
          "Moves the weights and optimiser state to 'cpu' or 'cuda'");
}
