// The check that comes before any time counts: run a kernel on random inputs
// and compare its outputs with the workload's reference (reference.h).
// The kernel is any callable over float pointers in C ABI order, so the JIT,
// a loaded library or a test double can be checked the same way.
// Tests: tests/compiler/measure/reference_check_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/workload/workload.h"

namespace lathe {

using KernelCall = std::function<absl::Status(const std::vector<float*>& args)>;

// The relative tolerance of every check (the absolute one grows with the
// work per output: ReferenceCache::Entry::atol).
inline constexpr double kCheckRtol = 1e-4;

// Fills the inputs from `seed` (random_fill.h), poisons the outputs with NaN
// (a kernel that skips an element cannot pass), runs the kernel and the
// reference, and compares every output with a tolerance that grows with the
// float work per output element (reassociated sums differ in rounding).
// Errors: FailedPrecondition naming the output, the first mismatching index
// with both values (CheckAllClose); the kernel's own error; InvalidArgument
// for a workload that is not all float32.
class ReferenceCache;
absl::Status CheckAgainstReference(const Workload& workload,
                                   const KernelCall& kernel, uint64_t seed = 1,
                                   ReferenceCache* cache = nullptr);

// What the checks of the last few (workload, seed) pairs compare against:
// the inputs (as float32, in C ABI order) and the reference's outputs. A
// runner checks hundreds of candidates of one workload with one seed; the
// reference of a 1024^3 matmul takes seconds, longer than building and
// timing a candidate, so it is computed once, and so are the inputs (drawing
// and rounding millions of values is a noticeable part of a check). It also
// keeps the kernel's argument buffers from check to check, so that a check
// does not fault in fresh pages each time. Not thread-safe.
class ReferenceCache {
 public:
  // What computes a workload's outputs from its inputs: the workload's
  // reference (reference.h: RunReference) unless given, e.g. a GPU
  // runner's trusted kernel for workloads too large for the CPU reference.
  using ReferenceFn = std::function<absl::StatusOr<std::vector<TensorData>>(
      const Workload&, const std::vector<TensorData>& inputs)>;

  explicit ReferenceCache(size_t capacity = 4, ReferenceFn reference = {})
      : capacity_(capacity), reference_(std::move(reference)) {}

  struct Entry {
    std::vector<std::vector<float>> inputs;  // from the seed (random_fill.h)
    std::vector<TensorData> outputs;         // the reference's
    double atol = 0;  // CheckAgainstReference's, from the work per output
    uint64_t last_used = 0;
  };
  // The entry of (workload, seed), computed when not cached. Errors:
  // InvalidArgument naming the tensor for a workload that is not all
  // float32; the reference's.
  absl::StatusOr<const Entry*> Get(const Workload& workload, uint64_t seed);

  // Buffers for the kernel's arguments of `entry` (inputs, then outputs),
  // reused from call to call; their contents are the caller's to set.
  std::vector<float*> Arguments(const Entry& entry);

 private:
  size_t capacity_;
  ReferenceFn reference_;
  uint64_t clock_ = 0;
  std::map<std::pair<std::string, uint64_t>, Entry> entries_;
  std::vector<std::vector<float>> arguments_;
};

}  // namespace lathe
