// A model library: what `lathe compile MODEL.onnx` writes. One object holds
// every distinct kernel of the model (compiled once, internal symbols) and
// the entry point of model_entry.h with the weights embedded; the .a and
// .so around it are built as for kernels (kernel_library.h: the runtime
// inside, a .so linked by the C compiler driver and exporting the entry,
// NAME_set_num_threads and NAME_release_scratch). Its header declares the
// entry with each input's and output's name, shape and dtype, the contract
// (model_entry.h) and the kernels it runs, with the weights each takes
// embedded packed. Same inputs, same bytes (the .so
// as far as the system linker is reproducible, as for kernels).
// api/model_library.h fills a ModelLibrary from an ONNX model.
// Tests: tests/compiler/codegen/model_entry_emitter_test.cc,
// tests/cli/compile_model_test.sh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/kernel_header.h"
#include "compiler/codegen/model_entry.h"
#include "compiler/target/target.h"

namespace lathe {

// A float32 input or output of the entry, as the header documents it.
struct ModelLibraryTensor {
  std::string name;  // the model's name for it
  std::vector<int64_t> shape;
};

// An input that a kernel takes packed (prepack_split.h): every constant the
// entry passes there is embedded in the packed layout, packed when the
// library is built, and the kernel is the split's main kernel.
struct ModelPackedInput {
  size_t input = 0;  // its position among the kernel's inputs
  std::vector<int64_t> shape;
  std::vector<int64_t> packed_shape;
};

struct ModelLibrary {
  std::string model_name;  // e.g. the ONNX file's name, for the header
  // The kernels, in entry.calls' numbering; their function names are the
  // object's internal symbols. Pointers to the caller's objects.
  std::vector<LibraryKernel> kernels;
  // Per kernel: how many calls of the entry run it.
  std::vector<int> kernel_calls;
  // Per kernel: the inputs it takes packed, in input order (the vector may
  // be shorter than kernels: none).
  std::vector<std::vector<ModelPackedInput>> kernel_packed_inputs;
  std::vector<ModelLibraryTensor> inputs;
  std::vector<ModelLibraryTensor> outputs;
  ModelEntry entry;
};

// The object (model_entry_emitter.h). Errors: those of EmitModelObject.
absl::StatusOr<std::string> ModelObject(const ModelLibrary& library,
                                        const Target& target);

// The object's module as LLVM IR text before LLVM's optimizer
// (ModelModuleIr). Errors: those of EmitModelObject.
absl::StatusOr<std::string> ModelLlvmIr(const ModelLibrary& library,
                                        const Target& target);

// Builds what `path`'s extension asks for (.o, .a, .so; .ll: ModelLlvmIr)
// and writes it. Errors: those of ModelObject and of kernel_library.h's
// writers.
absl::Status WriteModelLibrary(const ModelLibrary& library,
                               const Target& target, const std::string& path);

// The header text. The include guard is LATHE_<GUARD_STEM>_<ENTRY>_H_.
std::string ModelLibraryHeader(const ModelLibrary& library,
                               const Target& target, LibraryKind kind,
                               const std::string& guard_stem);

}  // namespace lathe
