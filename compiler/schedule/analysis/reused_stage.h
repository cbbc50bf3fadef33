// Reused stages: when inlining a stage would recompute its value many times.
// (IsWindowReusedStage: a few times, through overlapping windows.)
//
// A stage is a block whose body is one store. Inlined into a reader, its
// value is computed wherever the reader reads it: once per value of every
// iteration variable of the reader that its reads of the stage's buffer do
// not use (conv2d's output channels over the padded input). When that value
// is costly to recompute (a guarded load, a math call), a copy made once is
// cheaper than recomputing it, so the default schedule and the tuner's
// InlineElementwise rule keep such a stage. Each passes what it finds costly,
// and whether a reader's variable of extent 1 (which repeats nothing) counts.
// Tests: tests/compiler/schedule/analysis/reused_stage_test.cc.
#pragma once

#include <functional>

#include "compiler/ir/program.h"

namespace lathe {

// Whether `value` has a select that loads in one of its branches: the value
// of a padding stage, select(in bounds, X[..], 0), whose load needs a branch
// or a masked load.
bool HasGuardedLoad(const Expr& value);

// Whether `value` calls a math function (exp, sqrt, ...): recomputed, it
// costs more than its loads.
bool HasMathCall(const Expr& value);

enum class UnitIterVars { kCount, kIgnore };

// Whether `stage`'s body is one store whose value `costly` accepts, and some
// other block reads the stored buffer and has an iteration variable that
// none of those reads use (with kIgnore: one of extent 2 or more).
bool IsReusedStage(const Program& program, const BlockNode& stage,
                   const std::function<bool(const Expr& value)>& costly,
                   UnitIterVars unit_vars);

// Whether `stage`'s body is one store whose value `costly` accepts, and some
// other block reads the stored buffer at an index that sums two or more of
// its iteration variables of extent 2 or more (a sliding window: h + r):
// overlapping windows read each element several times, although every
// variable of the reader indexes the read (a depthwise convolution or a
// pooling over the padded input).
bool IsWindowReusedStage(const Program& program, const BlockNode& stage,
                         const std::function<bool(const Expr& value)>& costly);

// Whether `stage`'s body is one store whose value `costly` accepts, and two
// or more other blocks read the stored buffer: inlined, the value would be
// computed once per reader (softmax's exp(x - max), read by the row sum and
// by the division).
bool IsSharedStage(const Program& program, const BlockNode& stage,
                   const std::function<bool(const Expr& value)>& costly);

}  // namespace lathe
