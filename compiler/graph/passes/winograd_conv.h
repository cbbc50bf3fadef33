// Splits each eligible 3x3 convolution into the kernels of Winograd's
// F(2x2, 3x3): an input transform, 16 products batched in one MatMul
// against the transformed weights, an output transform (ops/winograd.cc).
// Per 2x2 block of outputs the products take 16 multiplies per channel pair
// where the direct convolution takes 36, so a layer whose direct kernel
// already runs at the FMA peak does 2.25x fewer of them, for transforms
// that cost additions and a pass through memory.
//
// Eligible: a Conv over [N, C, H, W] with group 1, a constant [K, C, 3, 3]
// weight (and constant or no bias), stride 1, dilation 1, one pixel of zero
// padding on every side, H and W even, at least kWinogradMinInputChannels
// input channels and kWinogradMinOutputChannels output channels. Each
// transformed input element feeds K products, so the multiplies saved per
// byte the input transform writes grow with K; at 64 output channels the
// split still wins in ResNet-18, below that it is not measured
// (bench/README.md, "ResNet-18 with Winograd convolutions").
//
// The rewrite, with T = N * H/2 * W/2 tiles:
//
//   X -> WinogradInputTransform(X, B)  [4,4,C,N,H/2,W/2]
//     -> Reshape [16, C, T] -> MatMul(U [16, K, C], .) -> [16, K, T]
//     -> Reshape [4,4,K,N,H/2,W/2] -> WinogradOutputTransform(., A, bias)
//     [N, K, H/2, 2, W/2, 2] -> elementwise followers -> Reshape [N,K,H,W]
//
// U = G g G^T is a new constant computed here, so the weights are
// transformed once, at build time. The Reshapes are views: no data moves
// between the kernels. The chain of elementwise operators that read the
// convolution's output alone (bias, residual Add, ReLU after BatchNorm is
// folded) is moved ahead of the last Reshape, working on the same bytes
// under the tiled shape, so that it fuses into the output transform's
// kernel as it fused into the convolution's; an operand of such an
// operator with the convolution's shape is read through a Reshape of its
// own. The graph outputs and every other reader see the values they saw.
// Tests: tests/compiler/graph/passes/winograd_conv_test.cc.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

inline constexpr int64_t kWinogradMinInputChannels = 16;
inline constexpr int64_t kWinogradMinOutputChannels = 64;

// F(2x2, 3x3)'s tables as the Winograd operators take them
// (ops/winograd.cc): the input table B[p,q,i,j] = Bt[p,i] Bt[q,j], [4,4,4,4],
// and the output table A[i,j,p,q] = At[i,p] At[j,q], [2,2,4,4].
TensorData WinogradInputTable();
TensorData WinogradOutputTable();

// Precondition: types are inferred (infer_types.h) and BatchNormalization
// folded (fold_batch_norm.h). Returns how many convolutions were split
// through `split` when it is not null.
absl::Status SplitWinogradConvs(Graph& graph, int* split = nullptr);

}  // namespace lathe::graph
