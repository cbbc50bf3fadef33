// The entry point of a model library (`lathe compile MODEL.onnx`): one C
// function that runs a model's kernel steps in order on the caller's inputs
// and outputs, the model's float32 constants embedded beside it and its
// intermediates in one arena laid out ahead of time. This is the plan of
// that function, free of the graph: api/model_library.h fills it from a
// model's partition and memory plan, model_entry_emitter.h turns it into
// LLVM IR in the same object as the kernels.
//
//   int NAME(const float* input0, ..., float* output0, ...);
//
// Contract of the generated function:
// - Calls[i].kernel runs with calls[i].args in order (a kernel's C ABI:
//   inputs, then its one output); then each copy fills an output from where
//   its value lives (an output that is an input, a constant or another
//   output's storage).
// - The arena (arena_bytes, 64-byte aligned) comes from the runtime's
//   lathe_alloc on each call and goes back by lathe_free before it returns,
//   so calls from several threads at once do not share intermediates.
// - Returns 0 on success; 1 when the arena cannot be allocated; else the
//   non-zero code of the first kernel that failed (the rest do not run).
// Tests: tests/compiler/codegen/model_entry_emitter_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/runtime/huge_pages.h"

namespace lathe {

// Where a buffer an entry reads or writes lives.
struct EntryBuffer {
  enum class Kind {
    kInput,     // the entry's parameter `index`
    kOutput,    // the entry's output parameter `index` (0-based among them)
    kConstant,  // ModelEntry::constants[index]
    kArena,     // byte offset `index` in the arena
  };
  Kind kind = Kind::kInput;
  int64_t index = 0;
};

// One float32 constant, embedded read-only and 64-byte aligned.
struct EntryConstant {
  std::string name;  // for the symbol's comment only
  const float* data = nullptr;
  int64_t elements = 0;  // at least 1
};

// One kernel call: kernels[kernel] of the library (model_library.h).
struct EntryCall {
  int kernel = 0;
  std::vector<EntryBuffer> args;
};

// After the calls: output `output` gets `elements` floats from `from`.
struct EntryCopy {
  int output = 0;
  EntryBuffer from;
  int64_t elements = 0;
};

// Whether an entry whose constants' image (each constant from a multiple of
// 64 bytes) holds `image_bytes` reads them from a copy on huge pages made by
// its first call (lathe_model_constants, lathe_runtime.h) rather than where
// they are embedded: from 1 MiB (below, a huge page would be mostly empty)
// to 512 MiB. The copy's space doubles the library's static data, and the
// x86-64 small code model, in which the kernels address it, reaches 2 GiB
// in all; a larger image stays where it is, as before the copy existed.
inline constexpr int64_t kMinCopiedConstantBytes =
    static_cast<int64_t>(runtime::kMinHugeBytes);
inline constexpr int64_t kMaxCopiedConstantBytes = int64_t{512} << 20;
inline bool ConstantsReadFromCopy(int64_t image_bytes) {
  return image_bytes >= kMinCopiedConstantBytes &&
         image_bytes <= kMaxCopiedConstantBytes;
}

struct ModelEntry {
  std::string function_name;
  int num_inputs = 0;
  int num_outputs = 0;
  std::vector<EntryConstant> constants;
  int64_t arena_bytes = 0;
  std::vector<EntryCall> calls;
  std::vector<EntryCopy> copies;
};

// Where each of `entry`'s constants starts in the one image that holds
// them all (model_entry_emitter.h embeds it), in floats, each from a
// multiple of 64 bytes; the last element is the image's length in floats.
inline std::vector<int64_t> ConstantImageOffsets(const ModelEntry& entry) {
  std::vector<int64_t> offsets = {0};
  for (const EntryConstant& c : entry.constants)
    offsets.push_back(offsets.back() + (c.elements + 15) / 16 * 16);
  return offsets;
}

// The bytes of that image.
inline int64_t ConstantImageBytes(const ModelEntry& entry) {
  return ConstantImageOffsets(entry).back() * 4;
}

}  // namespace lathe
