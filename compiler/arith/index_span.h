// The values an integer index takes as some of its variables run over their
// ranges while the others are held fixed: within [min, min + width], min an
// expression of the fixed variables, width an integer.
//
// The index is split into a sum of terms (linear_terms.h, equal atoms kept
// apart). Terms without a varying variable go to the min as they are;
// c * x for a varying variable x adds |c| * (extent - 1) to the width;
// floordiv and floormod by a positive constant are bounded from the span of
// their argument; any other term of varying variables only is bounded by
// BoundOf. Anything else (a term that mixes fixed and varying variables in
// another way: a product, a min, a select) cannot be bounded. Region
// inference (compiler/schedule/analysis/region.h) and buffer compaction
// (compiler/lower/compact_buffers.h) both size what a loop nest touches with
// it.
//
// `exact` tells whether every value of [min, min + width] is taken (the
// terms vary independently and their steps leave no gap); false when the
// span may be larger than the values. JoinSpans joins the spans of several
// accesses.
// Tests: tests/compiler/arith/index_span_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <set>

#include "absl/status/statusor.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/ir/expr.h"

namespace lathe {

struct IndexSpan {
  Expr min;  // over the fixed variables only, simplified under `fixed`
  int64_t width = 0;
  bool exact = true;
  std::set<const ExprNode*> varying_vars;  // the varying variables used
};

// How the least value of a floordiv term, (min of its argument) // c, enters
// the min: simplified on its own and then again within the whole min (region
// inference), or only within the whole min (buffer compaction). Simplify is
// not idempotent, so the two can print differently (`x // 7 - 1` against
// `-1 + x // 7`): each caller keeps the form its programs have.
enum class FloorDivMin { kSimplifiedAlone, kSimplifiedInTheSum };

// `varying` holds the ranges of the varying variables; `fixed` those of the
// others (to simplify the min). Errors: FailedPrecondition "cannot infer the
// region of index ..." naming the (sub)expression that cannot be bounded.
absl::StatusOr<IndexSpan> SpanOfIndex(
    const Expr& index, const VarRanges& varying, const VarRanges& fixed,
    FloorDivMin floordiv_min = FloorDivMin::kSimplifiedAlone);

// Where a join starts when b's min lies a constant below a's: at b's min
// (region inference) or at a's min moved down, simplified (buffer
// compaction); the two can print differently. Otherwise it starts at a's min,
// moved down by what b may reach below it.
enum class JoinedMin { kSecondWhenConstantlyBelow, kFirstMovedDown };

// The smallest span with a constant width that contains a and b, when their
// mins differ by an amount bounded under `fixed`; nullopt otherwise. Exact
// when both are exact with the same min and width.
std::optional<IndexSpan> JoinSpans(const IndexSpan& a, const IndexSpan& b,
                                   const VarRanges& fixed,
                                   JoinedMin joined_min);

}  // namespace lathe
