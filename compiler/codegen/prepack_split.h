// The split of a scheduled program whose layout-free inputs are packed at
// the root (tuner/space/pack_operand.h): each such pre-pack becomes a
// program of its own, run once when the constant is known, and the kernel
// takes the packed buffer instead of the original.
//
// A pre-pack is a top-level statement of the root block that holds exactly
// one block, marked kLayoutFreePackAnnotation (program.h), which reads one
// layout-free input W (Program::layout_free_inputs) and writes one buffer
// P that the root allocates (W's copy in the packed layout, cache_read's
// W_global). It is split off when nothing else in the program writes P or
// reads W; otherwise it stays in the kernel, as it is for every other copy.
//
// C ABIs (docs/architecture.md: one float pointer per parameter, inputs then
// outputs, row-major, returns 0 on success):
//  - prepack: `int F(const float* W, float* P)`, W of the original shape,
//    P of the packed shape (PackedInput::packed->shape). Elements of P that
//    are the padding of a split layout (no element of W maps there) are
//    left as they are, and never read by the main kernel.
//  - main: the workload's parameters in their order, with P in the place of
//    W for every packed input (PackedInput::input says which), then the
//    outputs. It computes what the unsplit program computes when P holds
//    what its prepack wrote from W.
// A program without such a pre-pack splits into its own lowering and no
// packed inputs: the kernel is exactly the unsplit one.
// Tests: tests/compiler/codegen/prepack_split_test.cc.
#pragma once

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe {

// One layout-free input that the main kernel takes packed.
struct PackedInput {
  size_t input = 0;    // its position among the program's inputs (C ABI)
  BufferPtr original;  // the layout-free input, as the workload declares it
  BufferPtr packed;    // what the main kernel takes in its place
  Program prepack;     // lowered: (original) -> (packed), the copy only
};

struct PrepackSplit {
  Program main;                     // lowered; the parameters described above
  std::vector<PackedInput> packed;  // in input order; empty: no split
};

// Splits and lowers `scheduled` (a program after its trace, before
// lowering). Errors: those of lowering.
absl::StatusOr<PrepackSplit> SplitPrepack(const Program& scheduled);

}  // namespace lathe
