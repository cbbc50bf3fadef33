// What a caller sees of a loaded model, whether it runs on the CPU
// (model.h) or on a GPU (gpu_model.h): its inputs and outputs, what its
// load made of it, and the check of the tensors a caller gives.
// Tests: tests/api/model_test.cc (Model, RefusesInputsOfTheWrong...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/graph/graph.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::api {

// A graph input or output as the caller sees it.
struct ModelTensor {
  std::string name;
  graph::TensorType type;
};

// What a model's load made of it.
struct ModelStats {
  int kernel_steps = 0;      // kernel calls per run
  int distinct_kernels = 0;  // compiled kernels (one per distinct workload)
  int kernels_tuned = 0;     // of those, from the database
  int kernels_default = 0;   // of those, the default schedule
  int host_steps = 0;
  int alias_steps = 0;
  int64_t peak_intermediate_bytes = 0;      // the arena
  int64_t unshared_intermediate_bytes = 0;  // without reuse
  int64_t constant_bytes = 0;               // float32 constants as floats
};

// Ok when `given` holds one tensor per expected input, each of its dtype,
// shape and element count. InvalidArgument otherwise, naming the first
// input at fault ("input 1 \"x\": expected f32[2,3], got float32[3,2]") or
// the first one missing.
absl::Status CheckModelInputs(const std::vector<ModelTensor>& expected,
                              const std::vector<TensorData>& given);

}  // namespace lathe::api
