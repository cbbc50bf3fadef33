#include "compiler/schedule/analysis/region.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/arith/index_span.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/loop_ranges.h"

namespace lathe {
namespace {

// An index that loads, or uses a variable of no known range, has no region.
absl::Status CheckVars(const Expr& index, const VarRanges& all) {
  absl::Status status;
  VisitExpr(index, [&](const Expr& e) {
    if (!status.ok()) return;
    if (e.is(ExprKind::kLoad)) {
      status = absl::FailedPreconditionError(
          absl::StrCat("cannot infer the region of index ", index.ToString(),
                       ": it loads from ", e->buffer->name));
    } else if (e.is_var() && !all.count(e.get())) {
      status = absl::FailedPreconditionError(
          absl::StrCat("cannot infer the region of index ", index.ToString(),
                       ": variable ", e->name, " has no known range"));
    }
  });
  return status;
}

}  // namespace

absl::StatusOr<Region> IndexRegion(const std::vector<Expr>& indices,
                                   const VarRanges& varying,
                                   const VarRanges& fixed) {
  VarRanges all = fixed;
  for (const auto& [var, range] : varying) all[var] = range;
  Region region;
  std::set<const ExprNode*> used;
  for (const Expr& raw : indices) {
    LATHE_RETURN_IF_ERROR(CheckVars(raw, all));
    Expr index = Simplify(raw, all);
    LATHE_ASSIGN_OR_RETURN(IndexSpan span, SpanOfIndex(index, varying, fixed));
    // The box is the product of the dimensions' ranges only when no varying
    // variable moves two dimensions together.
    for (const ExprNode* v : span.varying_vars) {
      if (!used.insert(v).second) region.exact = false;
    }
    if (!span.exact) region.exact = false;
    region.dims.push_back({span.min, span.width + 1});
  }
  return region;
}

absl::StatusOr<Region> IndicesRegionUnderLoop(
    const Program& program, const BlockNode& block, const ForNode* loop,
    const std::vector<Expr>& indices) {
  return IndicesRegionUnderLoop(block, loop, program.LoopsAbove(&block),
                                LoopRangesAbove(program, &block), indices);
}

absl::StatusOr<Region> IndicesRegionUnderLoop(
    const BlockNode& block, const ForNode* loop,
    const std::vector<ForNode*>& loops_above, VarRanges ranges_above,
    const std::vector<Expr>& indices) {
  // 1. Split the loops around the block into fixed and varying ones.
  VarRanges& fixed = ranges_above;
  VarRanges varying;
  bool below = loop == nullptr;
  for (ForNode* l : loops_above) {
    if (below) {
      varying[l->var.get()] = Interval::Extent(l->extent);
      fixed.erase(l->var.get());
    }
    if (l == loop) below = true;
  }
  if (!below) {
    return absl::InvalidArgumentError(
        absl::StrCat("region: loop \"", loop->var->name,
                     "\" is not above block \"", block.name, "\""));
  }
  // 2. The indices over the loops, with the bindings substituted.
  VarMap bindings;
  for (size_t i = 0; i < block.iter_vars.size() && i < block.iter_values.size();
       ++i) {
    bindings[block.iter_vars[i].var] = block.iter_values[i];
  }
  std::vector<Expr> over_loops;
  for (const Expr& i : indices) over_loops.push_back(Substitute(i, bindings));
  absl::StatusOr<Region> region = IndexRegion(over_loops, varying, fixed);
  if (!region.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "block \"", block.name, "\": ", region.status().message()));
  }
  return region;
}

absl::StatusOr<Region> BlockRegionUnderLoop(const Program& program,
                                            const BlockNode& block,
                                            const ForNode* loop,
                                            const Buffer* buffer,
                                            AccessKind kind) {
  BlockAccesses accesses = AccessesOf(block);
  const std::vector<BufferAccess>& list =
      kind == AccessKind::kRead ? accesses.reads : accesses.writes;
  VarRanges fixed = LoopRangesAbove(program, &block);
  std::optional<Region> result;
  for (const BufferAccess& access : list) {
    if (access.buffer.get() != buffer) continue;
    LATHE_ASSIGN_OR_RETURN(
        Region region,
        IndicesRegionUnderLoop(program, block, loop, access.indices));
    if (!result.has_value()) {
      result = std::move(region);
      continue;
    }
    // Mins over the fixed loops only; ranges of all loops are a superset.
    absl::StatusOr<Region> joined = UnionRegions(*result, region, fixed);
    if (!joined.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "block \"", block.name, "\": ", joined.status().message()));
    }
    result = *std::move(joined);
  }
  if (!result.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "region: block \"", block.name, "\" does not ",
        kind == AccessKind::kRead ? "read " : "write ", buffer->name));
  }
  return *std::move(result);
}

absl::StatusOr<Region> UnionRegions(const Region& a, const Region& b,
                                    const VarRanges& fixed) {
  if (a.dims.size() != b.dims.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot join regions of rank ", a.dims.size(), " and ", b.dims.size()));
  }
  Region out;
  out.exact = a.exact && b.exact;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    const RegionDim& x = a.dims[d];
    const RegionDim& y = b.dims[d];
    std::optional<IndexSpan> joined = JoinSpans(
        {x.min, x.extent - 1, true, {}}, {y.min, y.extent - 1, true, {}}, fixed,
        JoinedMin::kSecondWhenConstantlyBelow);
    if (!joined.has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot join the regions [", x.min.ToString(), ", +", x.extent,
          ") and [", y.min.ToString(), ", +", y.extent, ") of dimension ", d));
    }
    if (!joined->exact) out.exact = false;
    out.dims.push_back({joined->min, joined->width + 1});
  }
  return out;
}

}  // namespace lathe
