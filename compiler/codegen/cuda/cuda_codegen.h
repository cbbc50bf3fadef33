// CUDA C from a lowered program: the kernels, their launch dimensions and the
// device buffers they take, ready for NVRTC (nvrtc_compiler.h).
//
// The mapping (docs/architecture.md, "The CUDA back end"):
// - Each top-level statement of the root block is one kernel, launched in
//   program order (a launch boundary is the only grid-wide barrier). The
//   root's buffers become device buffers beside the parameters.
// - A loop bound to blockIdx.x|y|z or threadIdx.x|y|z becomes that index,
//   guarded when its extent is below the launch dimension (the largest
//   extent of the loops bound to the axis in the kernel). vthread loops run
//   serially in each thread. A kernel without bound loops runs on one thread.
// - blockIdx loops may only sit under other blockIdx loops and ifs: a serial
//   loop or a sequence above one would need a barrier across the grid.
// - A buffer allocated inside a kernel is an array of the thread when its
//   scope is under a threadIdx loop, when all its accesses are under one
//   threadIdx loop (each thread then touches its own elements: bind checks
//   that), or when none is under any (each thread computes all of it, the
//   same values); when several threadIdx loops touch it but each thread only
//   its own elements (in every access, each index is c * D(t) + r, with t
//   the outermost threadIdx loop around the access, the same c and digit D
//   of t in every access, digits that determine t, and r in [0, c)), each
//   thread holds its share, an array of the c's shape indexed by the r's
//   (a tile's accumulators, from the init to the write-back); otherwise the
//   threads of a block share it: `__shared__`, 16-byte aligned (so that
//   NVRTC may read four neighbouring floats at once).
// - Outside every threadIdx loop of a kernel that has them, all threads run
//   the same statements; a store to device memory there is made by thread
//   0 alone, and a barrier precedes the next statement that reads it (or,
//   in a serial loop, the end of an iteration whose body reads it).
// - __syncthreads() is placed, outside every threadIdx loop, between two
//   statements of a sequence when the second touches memory the threads
//   share that the earlier ones wrote since the last barrier, or writes
//   such memory they read; and at the end of a serial loop body that writes
//   and reads it (the next iteration overwrites what this one read). The
//   memory the threads share: shared memory, and the device buffers that
//   threads write and do not partition among themselves as above (a
//   one-output reduction's partial sums: its block loop of one iteration
//   gone, they are the root's buffer, not a block's).
// - Unrolled and vectorized loops are serial loops under `#pragma unroll`,
//   unrolled by kPartialUnroll only when longer than kMaxFullUnroll (the
//   copies of a large tile by few threads: hundreds of steps whose indices
//   divide and take remainders made NVRTC compile for a minute; a thread's
//   accumulators are indexed by shorter loops, which stay whole), and by
//   the largest divisor of the extent that keeps the unrolled region within
//   kMaxUnrolledRegion stores when the whole would pass it and the loop
//   indexes no array of the thread (a convolution's K chunk of 8 around
//   288 products: NVRTC takes 9.6 s unrolled whole, 0.9 s unrolled by 4).
//   kMaxUnrolledStores bounds the stores of the code so emitted, each loop
//   counted as the copies it unrolls to.
// - Kernel parameters are declared 16-byte aligned (device allocations are),
//   so that NVRTC merges neighbouring accesses into vector loads and stores.
// - Integer index arithmetic is in `int` when every buffer has fewer than
//   2^31 elements, else in `long long`; floor division and modulo become C's
//   `/` and `%` where the dividend is provably non-negative and the divisor a
//   positive constant.
// Errors: FailedPrecondition naming the limit for a schedule the device
// cannot run (threads per block, a block or grid dimension, shared memory
// per block, a thread's array over kMaxThreadArrayElements, a register
// tile over kMaxRegistersPerThread or, over the block's threads, the
// target's registers per block, unrolled code over kMaxUnrolledStores), and
// naming the loop for a parallel loop or a blockIdx loop under a serial loop
// or a sequence; InvalidArgument for a target that is not CUDA or a dtype CUDA
// C is not generated for here (float16). Tests:
// tests/compiler/codegen/cuda/cuda_codegen_test.cc, tests/lit/cuda/*.test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/target/target.h"

namespace lathe::cuda {

// The elements of a thread's own array (one allocated under its threadIdx
// loop). A register tile (a thread's share of a block's buffer, see above)
// is bounded by kMaxRegistersPerThread (compiler/target/target.h) and, over
// the block's threads, by the target's registers per block: past them it
// would live in local memory.
inline constexpr int64_t kMaxThreadArrayElements = 4096;
// The stores a kernel's thread may have once its unrolled and vectorized
// loops are unrolled as emitted: past it NVRTC takes tens of seconds to
// minutes, for code no faster than a smaller tile's.
inline constexpr int64_t kMaxUnrolledStores = 4096;
// Unrolled loops longer than this are unrolled kPartialUnroll times.
inline constexpr int64_t kMaxFullUnroll = 32;
inline constexpr int64_t kPartialUnroll = 4;
// The stores one unrolled loop's region may have before it is unrolled
// partially (when it indexes no array of the thread).
inline constexpr int64_t kMaxUnrolledRegion = 1536;

struct Dim3 {
  int64_t x = 1, y = 1, z = 1;
  int64_t Count() const { return x * y * z; }
};

// One buffer on the device: a parameter (inputs, then outputs, as in the C
// ABI) or a root intermediate the host allocates.
struct DeviceBufferSpec {
  std::string name;
  int64_t bytes = 0;
  int param_index = -1;  // position in Program::Params(); -1: scratch
};

struct CudaKernel {
  std::string name;  // extern "C" __global__ function
  Dim3 grid;
  Dim3 block;
  int64_t shared_bytes = 0;  // static shared memory
  // Its parameters, as indices into CudaModule::buffers.
  std::vector<int> buffer_args;
};

struct CudaModule {
  std::string source;
  std::vector<DeviceBufferSpec> buffers;  // parameters first, then scratch
  std::vector<CudaKernel> kernels;        // launched in this order
};

// `lowered` must be in lowered form (compiler/lower/lowered_form.h).
absl::StatusOr<CudaModule> GenerateCuda(const Program& lowered,
                                        const Target& target);

}  // namespace lathe::cuda
