// Which SpMM the CUDA backend runs for aggregation: our kernels (the default) or the GPU
// sparse library (cuSPARSE), the bar ours is measured against. Process-wide.
#pragma once

#include <string>

namespace hulk::cuda {

enum class SpmmPath { Custom, Library };

void set_spmm_path(SpmmPath path);
SpmmPath spmm_path();
SpmmPath parse_spmm_path(const std::string& name);  // "custom" | "cusparse"; throws naming the value
const char* spmm_path_name(SpmmPath path);

}  // namespace hulk::cuda
