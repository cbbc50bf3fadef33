// A kernel program compiled the way it is measured: when its scheduled
// program packs layout-free inputs at the root, it is split
// (prepack_split.h) and the main kernel and each prepack are compiled with
// the JIT; otherwise the lowered program is compiled as it is. What
// `lathe tune`'s workers and `lathe bench` run, so that both time the same
// kernel: the prepacks run once, before the check and the samples, and
// only the main kernel is timed.
//
// PackedArguments holds the packed buffers (64-byte aligned) and fills
// them from a call's arguments by running the prepacks: the arguments of
// the workload's C ABI become those of the main kernel.
// Not thread-safe: one PackedArguments per thread.
// Tests: tests/runner/measure_worker_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/target/target.h"

namespace lathe {

// A layout-free input that the main kernel takes packed, with the compiled
// copy that packs it.
struct CompiledPrepack {
  size_t input = 0;             // its position among the workload's inputs
  int64_t input_elements = 0;   // floats of the input
  int64_t packed_elements = 0;  // floats of the packed buffer
  CompiledKernel kernel;        // (original, packed)
  std::vector<int64_t> input_shape;
  std::vector<int64_t> packed_shape;
};

struct PrepackedKernel {
  // The main kernel of the split, or the whole kernel when nothing splits.
  CompiledKernel main;
  // In input order; empty when the kernel takes its inputs as they are.
  std::vector<CompiledPrepack> prepacks;
};

// Compiles `program` for `target`; the main kernel is named
// options.function_name, its prepacks that name with "_prepack<i>".
// Errors, prefixed with what failed: "prepack split: ", "code generation of
// a prepack: ", "code generation: ".
absl::StatusOr<PrepackedKernel> CompilePrepacked(const KernelProgram& program,
                                                 const Target& target,
                                                 const CodegenOptions& options);

class PackedArguments {
 public:
  // Allocates a packed buffer per prepack; `prepacks` must outlive this.
  explicit PackedArguments(const std::vector<CompiledPrepack>& prepacks);

  // `args` (the workload's C ABI) with the packed buffers in the places of
  // the inputs they pack, after running the prepacks on those inputs.
  // With `unpacked`, the inputs are copied as they are instead (a test's
  // fault: the kernel is handed weights it was not built for).
  absl::StatusOr<std::vector<float*>> Pack(const std::vector<float*>& args,
                                           bool unpacked = false);

 private:
  struct Free {
    void operator()(float* p) const;
  };
  const std::vector<CompiledPrepack>& prepacks_;
  std::vector<std::unique_ptr<float, Free>> storage_;
};

}  // namespace lathe
