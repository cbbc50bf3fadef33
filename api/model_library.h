// A model built as one library (`lathe compile MODEL.onnx`): the ONNX file
// imported, rewritten and partitioned as api/model.h does (the same passes,
// compiler/graph/kernel_partition.h and memory_plan.h, so the library runs
// the same kernels in the same order on the same buffers as Model::Run),
// each distinct workload planned once by api/kernel_plan.h (the database's
// best record, else the default schedule), and the steps turned into the
// entry of compiler/codegen/model_entry.h:
// - a kernel step is a call; an alias step is no code (its output is its
//   input's storage); a storage is the caller's input or output, an
//   embedded constant or an arena offset of the memory plan; an output
//   whose storage is an input, a constant or another output is copied at
//   the end.
// - A kernel whose tuned schedule packs a layout-free input at the root is
//   split (compiler/codegen/prepack_split.h): the library holds its main
//   kernel, and each constant passed as that input is packed at build time
//   (the prepack run with the JIT on this machine: a copy, the same bytes
//   on every build) and embedded in the packed layout. A packed input that
//   is not a constant is an Internal error.
// - Host steps (non-float32 work left after constant folding) need the
//   interpreter, which a library does not have: such a model is refused,
//   naming the step's nodes. So are inputs and outputs that are not
//   float32.
// Write the library and header with compiler/codegen/model_library.h.
// Tests: tests/cli/compile_model_test.sh.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/kernel_plan.h"
#include "compiler/codegen/model_library.h"
#include "compiler/codegen/prepack_split.h"
#include "compiler/target/target.h"
#include "database/database.h"

namespace lathe::api {

struct ModelLibraryOptions {
  // Values for the symbolic dimensions of the model's inputs, by input name.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // The entry's C symbol (kernel_header.h IsCIdentifier); the kernels are
  // internal symbols NAME_kernel_<i>.
  std::string function_name;
  db::TargetMatching matching = db::TargetMatching::kExact;
};

// One distinct kernel workload of the model and its plan.
struct ModelLibraryTask {
  std::string workload;  // the canonical form (what `lathe tasks` lists)
  int calls = 0;         // kernel steps running it
  KernelPlan plan;
  // What the library emits: plan.program, with the main kernel of its
  // split as the lowered program when it takes inputs packed.
  KernelProgram emitted;
  std::vector<PackedInput> packed;  // the split's; empty: none
};

class ModelLibraryPlan {
 public:
  // Errors: a function name that is not a C identifier; those of the
  // importer, the passes, the partition and the memory plan; a host step,
  // an input or output that is not float32 (naming it); those of
  // PlanKernel (naming the workload).
  static absl::StatusOr<std::unique_ptr<ModelLibraryPlan>> Make(
      const std::string& onnx_path, db::Database* db, const Target& target,
      const ModelLibraryOptions& options);

  ModelLibraryPlan(const ModelLibraryPlan&) = delete;
  ModelLibraryPlan& operator=(const ModelLibraryPlan&) = delete;

  // In order of first use by the steps.
  const std::vector<ModelLibraryTask>& tasks() const { return tasks_; }
  // What model_library.h writes; points into this object.
  const ModelLibrary& library() const { return library_; }

 private:
  ModelLibraryPlan() = default;

  std::vector<ModelLibraryTask> tasks_;
  std::vector<std::vector<float>> constants_;
  ModelLibrary library_;
};

}  // namespace lathe::api
