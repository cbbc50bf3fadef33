// `lathe-gpu-check --model`: models run on the GPU the way `lathe run
// MODEL --target cuda` runs them (api/gpu_model.h: the passes, the
// partition, each kernel's default GPU schedule, device memory planned
// once, host steps between kernels), each model's outputs checked against
// the graph's host evaluation (compiler/graph/evaluate_graph.h) and its
// run timed. The graphs are built here, so that the device machine needs
// no ONNX file: a small CNN (convolution, pooling, dense, softmax), a
// ResNet basic block at ResNet's 56x56x64 with its residual and a global
// average pool, and a graph whose host step hands a tensor to a kernel and
// back. One PASS or FAIL line each.
// Tests: tests/tools/model_check_test.cc (on an emulated GPU); on a
// device, tests/tools/CMakeLists.txt (gpu.lathe_gpu_check_model) and
// scripts/gpu-check.sh (step 1).
#pragma once

#include <memory>

#include "api/model_device.h"
#include "compiler/target/target.h"

namespace lathe::tools {

// Returns true when every model passed. `device`: where the models run;
// null, this machine's first GPU (tests pass an emulated one). Each time
// is the median of `timed_runs` runs after 3 warm-up runs.
bool CheckModels(const Target& target,
                 std::shared_ptr<api::ModelDevice> device = nullptr,
                 int timed_runs = 20);

}  // namespace lathe::tools
