// CompilePrepacked and PackedArguments (prepacked_kernel.h).
#include "compiler/codegen/prepacked_kernel.h"

#include <algorithm>
#include <new>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/codegen/prepack_split.h"
#include "compiler/runtime/lathe_runtime.h"

namespace lathe {
namespace {

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace

absl::StatusOr<PrepackedKernel> CompilePrepacked(
    const KernelProgram& program, const Target& target,
    const CodegenOptions& options) {
  const Program* lowered = &program.lowered;
  std::optional<PrepackSplit> split;
  std::vector<CompiledPrepack> prepacks;
  if (!program.scheduled.layout_free_inputs.empty()) {
    absl::StatusOr<PrepackSplit> made = SplitPrepack(program.scheduled);
    if (!made.ok()) return Prefixed(made.status(), "prepack split: ");
    split = *std::move(made);
    lowered = &split->main;
    for (size_t i = 0; i < split->packed.size(); ++i) {
      const PackedInput& p = split->packed[i];
      CodegenOptions prepack_options = options;
      prepack_options.function_name =
          absl::StrCat(options.function_name, "_prepack", i);
      absl::StatusOr<CompiledKernel> prepack =
          Compile(p.prepack, target, prepack_options);
      if (!prepack.ok())
        return Prefixed(prepack.status(), "code generation of a prepack: ");
      prepacks.push_back({p.input, p.original->NumElements(),
                          p.packed->NumElements(), *std::move(prepack),
                          p.original->shape, p.packed->shape});
    }
  }
  absl::StatusOr<CompiledKernel> main = Compile(*lowered, target, options);
  if (!main.ok()) return Prefixed(main.status(), "code generation: ");
  return PrepackedKernel{*std::move(main), std::move(prepacks)};
}

void PackedArguments::Free::operator()(float* p) const { lathe_free(p); }

PackedArguments::PackedArguments(const std::vector<CompiledPrepack>& prepacks)
    : prepacks_(prepacks) {
  for (const CompiledPrepack& p : prepacks) {
    auto* buffer = static_cast<float*>(lathe_alloc(
        static_cast<uint64_t>(p.packed_elements) * sizeof(float), 64));
    if (buffer == nullptr) throw std::bad_alloc();
    std::fill(buffer, buffer + p.packed_elements, 0.0f);
    storage_.emplace_back(buffer);
  }
}

absl::StatusOr<std::vector<float*>> PackedArguments::Pack(
    const std::vector<float*>& args, bool unpacked) {
  std::vector<float*> packed_args = args;
  for (size_t i = 0; i < prepacks_.size(); ++i) {
    const CompiledPrepack& p = prepacks_[i];
    float* buffer = storage_[i].get();
    if (unpacked) {
      // A packing has at least as many elements as the original.
      std::copy(args[p.input], args[p.input] + p.input_elements, buffer);
    } else if (absl::Status st = p.kernel.Run({args[p.input], buffer});
               !st.ok()) {
      return st;
    }
    packed_args[p.input] = buffer;
  }
  return packed_args;
}

}  // namespace lathe
