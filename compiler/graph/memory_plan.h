// The memory plan of a partitioned graph: where each intermediate float32
// tensor lives in one arena, so that tensors whose lifetimes do not overlap
// share bytes.
//
// Contract:
// - Planned: the float32 values that a step materializes (a kernel's output,
//   a host step's outputs, an alias step's output) and that are neither graph
//   inputs, constants nor graph outputs. Values inside a fused kernel never
//   exist in memory; values of other dtypes are held by the host (they are
//   small shape and index tensors) and are not planned.
// - An alias step's output shares its input's storage: the two are one
//   "storage", alive from the step that produces the first to the last step
//   that reads any of them. A storage that reaches a graph output, or starts
//   at a graph input or constant, is not in the arena (the caller keeps it).
// - Lifetimes are inclusive step intervals, so a step's output never shares
//   bytes with that step's inputs.
// - Offsets and sizes are multiples of kArenaAlignment; peak_bytes is the
//   arena size needed. Placement is greedy by size (largest first), each
//   tensor at the lowest offset that overlaps no placed tensor alive at the
//   same time.
// Tests: tests/compiler/graph/memory_plan_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"

namespace lathe::graph {

inline constexpr int64_t kArenaAlignment = 64;
inline constexpr int64_t kNotPlanned = -1;

// `bytes` rounded up to a multiple of kArenaAlignment.
inline int64_t AlignToArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

struct MemoryPlan {
  // Per value id: the byte offset in the arena, or kNotPlanned.
  std::vector<int64_t> offsets;
  // Per value id: the value whose storage it uses (itself, or for an alias
  // step's output the root of its input's storage).
  std::vector<int> storage_of;
  int64_t peak_bytes = 0;
  // What the intermediates would take without reuse (the sum of their sizes).
  int64_t unshared_bytes = 0;
};

// Errors (Internal): a step that reads a value no earlier step, input or
// constant provides; a planned size that overflows.
absl::StatusOr<MemoryPlan> PlanMemory(const Graph& graph,
                                      const KernelPartition& partition);

}  // namespace lathe::graph
