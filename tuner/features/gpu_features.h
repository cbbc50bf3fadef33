// GPU features of a program for a cuda target: how its kernels use the
// device, which loop and access features alone do not show. Whole-program,
// one entry each, of the kernel that does the most work (the largest sum
// of its stores' executions); a kernel is a top-level loop nest of the
// lowered program (as the CUDA code generator launches them):
//   gpu.kernels          log2(1 + kernels)
//   gpu.threads          log2(1 + threads per block): the product over the
//                        threadIdx axes of the largest extent bound to each
//   gpu.blocks           log2(1 + blocks), likewise over blockIdx
//   gpu.warp_use         threads / (ceil(threads / warp) * warp)
//   gpu.shared_bytes     log2(1 + bytes of shared buffers allocated in it;
//                        buffers of the program's shared scope, the tiles'
//                        caches: a cross-thread reduction's partials, which
//                        the code generator puts in shared memory, are not
//                        counted)
//   gpu.local_elements   log2(1 + a thread's elements of local buffers:
//                        its arrays, registers when unrolled; a local
//                        buffer allocated outside the thread loops counted
//                        as shared out among the block's threads)
//   gpu.occupancy        resident threads per multiprocessor over its
//                        maximum, estimated: blocks per multiprocessor
//                        bounded by threads (2 x max threads per block per
//                        multiprocessor, as sm_80 and sm_90 have), shared
//                        memory (4 x the per-block limit) and registers
//                        (the per-block file, 32 + local elements a thread)
//   gpu.unrolled_stores  log2(1 + a thread's stores once its unrolled loops
//                        are unrolled)
// All zero for other targets (the group is only part of a cuda target's
// vector: program_features.h).
// Tests: tests/tuner/features/gpu_features_test.cc.
#pragma once

#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

const std::vector<std::string>& GpuFeatureNames();

// Writes GpuFeatureNames().size() scaled values.
void ExtractGpuFeatures(const ProgramWalk& walk, const Target& target,
                        float* out);

}  // namespace lathe::tuner
