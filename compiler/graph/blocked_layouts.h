// The activations a partitioned model stores channel-blocked, and the
// kernels rewritten to write and read them so.
//
// A value [N, C, ...] blocked by b is stored [N, C/b, ..., b]: b channels
// side by side at each position (NCHW16c for b = 16). b is 16 where C
// divides by 16, else 8 (NCHW8c: MobileNetV2's 24-channel values). Its
// producer and every kernel that reads it agree on the form, so no
// transform runs between kernels; the buffer has the same size, so the
// memory plan is unchanged. Each such kernel's workload is rewritten by
// compiler/workload/block_dims.h (its intermediates, and its constant
// weights and biases, following the split), and a constant it then reads
// blocked becomes a new constant of the graph holding the reordered data,
// so every loader of the model (api/model.h, the model library) passes it
// as any other constant.
//
// Which values: those a grouped (depthwise) convolution reads or writes,
// and then the outputs of kernels that read a blocked value (so a 1x1
// projection after a depthwise layer writes blocks too), each only when its
// producer and readers are all kernels, it is no graph input or output, its
// channels divide by 8, and every kernel touching it can be rewritten.
// Measured (bench/README.md, "Models"): a depthwise layer and the 1x1
// convolutions beside it tune faster blocked by 16; a 1x1 projection to 24
// channels faster writing 8-channel blocks than NCHW, where it could only
// vectorize across pixels that its blocked input holds 16 floats apart; a
// dense 3x3 convolution does not, so the rest of a model keeps ONNX's
// layout.
// Tests: tests/compiler/graph/blocked_layouts_test.cc.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"

namespace lathe::graph {

inline constexpr int64_t kChannelBlock = 16;
inline constexpr int64_t kNarrowChannelBlock = 8;

// The block of a value with `channels` channels: kChannelBlock or
// kNarrowChannelBlock, whichever divides them first; 0 for neither.
int64_t ChannelBlockOf(int64_t channels);

// Rewrites the kernel steps of `partition` (a partition of `graph`) as
// above, adding the blocked constants to `graph`. Errors: Internal when a
// step's workload does not parse (it came from the partition).
absl::Status BlockActivations(Graph& graph, KernelPartition& partition);

}  // namespace lathe::graph
