#include "compiler/schedule/analysis/region.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/arith/int_math.h"
#include "compiler/arith/linear_terms.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/util/check.h"

namespace lathe {
namespace {

// The values of one index expression as the varying variables range:
// contained in [min, min + width]; `exact` when they are all of it.
struct Span {
  Expr min;
  int64_t width = 0;
  bool exact = true;
  std::set<const ExprNode*> varying_vars;  // the varying variables used
};

class SpanBuilder {
 public:
  SpanBuilder(const VarRanges& varying, const VarRanges& fixed)
      : varying_(varying), fixed_(fixed) {
    all_ = fixed;
    for (const auto& [var, range] : varying) all_[var] = range;
  }

  absl::StatusOr<Span> Of(const Expr& index) {
    LinearTerms terms;
    CollectLinearTerms(index, 1, &terms);
    Span span;
    Expr fixed_sum = IntImm(terms.constant);
    // Step sets of the varying terms: a term contributes {0, s, .., s(n-1)}
    // (shifted); their sum is contiguous when, in order of step, each step is
    // at most one more than the reach of the smaller ones.
    std::vector<std::pair<int64_t, int64_t>> steps;
    bool exact = true;
    for (const auto& [atom, coef] : terms.terms) {
      if (coef == 0) continue;
      std::set<const ExprNode*> vars = VaryingVarsOf(atom);
      if (vars.empty()) {
        fixed_sum = fixed_sum + atom * IntImm(coef);
        continue;
      }
      // The sum of the terms' value sets is their sumset only when the terms
      // vary independently (no variable in two of them).
      for (const ExprNode* var : vars) {
        if (!span.varying_vars.insert(var).second) exact = false;
      }
      int64_t abs_coef = coef < 0 ? -coef : coef;
      if (atom.is_var()) {
        int64_t n =
            varying_.at(atom.get()).max - varying_.at(atom.get()).min + 1;
        int64_t lo = varying_.at(atom.get()).min;
        // coef * x for x in [lo, lo + n - 1].
        int64_t min = coef > 0 ? coef * lo : coef * (lo + n - 1);
        fixed_sum = fixed_sum + IntImm(min);
        span.width += abs_coef * (n - 1);
        if (n > 1) steps.emplace_back(abs_coef, n);
        continue;
      }
      // floordiv / floormod by a positive constant: from the argument's span.
      if ((atom.is(ExprKind::kFloorDiv) || atom.is(ExprKind::kFloorMod)) &&
          atom.operand(1).is_int_imm() && atom.operand(1).int_value() > 0) {
        int64_t c = atom.operand(1).int_value();
        LATHE_ASSIGN_OR_RETURN(Span inner, Of(atom.operand(0)));
        Expr rem = Simplify(FloorMod(inner.min, IntImm(c)), fixed_);
        Expr lo;        // the least value of the atom
        int64_t count;  // how many values it takes (at most)
        bool atom_exact;
        if (atom.is(ExprKind::kFloorDiv)) {
          lo = Simplify(FloorDiv(inner.min, IntImm(c)), fixed_);
          if (rem.is_int_imm()) {
            count = FloorDivInt(rem.int_value() + inner.width, c) + 1;
            atom_exact = inner.exact;
          } else {
            count = FloorDivInt(inner.width + c - 1, c) + 1;
            atom_exact = false;
          }
        } else if (rem.is_int_imm() && rem.int_value() + inner.width < c) {
          // No wrap-around: a shifted copy of the argument.
          lo = rem;
          count = inner.width + 1;
          atom_exact = inner.exact;
        } else {
          lo = IntImm(0);
          count = c;
          atom_exact = inner.exact && inner.width + 1 >= c;
        }
        Expr least = coef > 0 ? lo * IntImm(coef)
                              : (lo + IntImm(count - 1)) * IntImm(coef);
        fixed_sum = fixed_sum + least;
        span.width += abs_coef * (count - 1);
        if (!atom_exact || abs_coef != 1) {
          exact = false;
        } else if (count > 1) {
          steps.emplace_back(1, count);
        }
        continue;
      }
      if (!UsesFixedVar(atom)) {
        Interval b = BoundOf(atom, varying_);
        if (!b.is_bounded()) return Fail(index);
        fixed_sum = fixed_sum + IntImm(coef > 0 ? coef * b.min : coef * b.max);
        span.width += abs_coef * (b.max - b.min);
        exact = false;  // BoundOf may be wider than the values
        continue;
      }
      return Fail(index);
    }
    std::sort(steps.begin(), steps.end());
    int64_t reach = 0;
    for (const auto& [step, n] : steps) {
      if (step > reach + 1) exact = false;
      reach += step * (n - 1);
    }
    span.min = Simplify(fixed_sum, fixed_);
    span.exact = exact;
    return span;
  }

  absl::Status CheckVars(const Expr& index) {
    absl::Status status;
    VisitExpr(index, [&](const Expr& e) {
      if (!status.ok()) return;
      if (e.is(ExprKind::kLoad)) {
        status = absl::FailedPreconditionError(
            absl::StrCat("cannot infer the region of index ", index.ToString(),
                         ": it loads from ", e->buffer->name));
      } else if (e.is_var() && !all_.count(e.get())) {
        status = absl::FailedPreconditionError(
            absl::StrCat("cannot infer the region of index ", index.ToString(),
                         ": variable ", e->name, " has no known range"));
      }
    });
    return status;
  }

  const VarRanges& all() const { return all_; }

 private:
  std::set<const ExprNode*> VaryingVarsOf(const Expr& e) const {
    std::set<const ExprNode*> vars;
    VisitExpr(e, [&](const Expr& x) {
      if (x.is_var() && varying_.count(x.get())) vars.insert(x.get());
    });
    return vars;
  }
  bool UsesFixedVar(const Expr& e) const {
    return UsesAnyVar(e,
                      [&](const Expr& v) { return !varying_.count(v.get()); });
  }
  static absl::Status Fail(const Expr& index) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot infer the region of index ", index.ToString()));
  }

  const VarRanges& varying_;
  const VarRanges& fixed_;
  VarRanges all_;
};

}  // namespace

absl::StatusOr<Region> IndexRegion(const std::vector<Expr>& indices,
                                   const VarRanges& varying,
                                   const VarRanges& fixed) {
  SpanBuilder builder(varying, fixed);
  Region region;
  std::set<const ExprNode*> used;
  for (const Expr& raw : indices) {
    LATHE_RETURN_IF_ERROR(builder.CheckVars(raw));
    Expr index = Simplify(raw, builder.all());
    LATHE_ASSIGN_OR_RETURN(Span span, builder.Of(index));
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
    Expr diff = Simplify(y.min - x.min, fixed);
    Interval delta = diff.is_int_imm() ? Interval::Point(diff.int_value())
                                       : BoundOf(diff, fixed);
    if (!delta.is_bounded()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot join the regions [", x.min.ToString(), ", +", x.extent,
          ") and [", y.min.ToString(), ", +", y.extent, ") of dimension ", d));
    }
    // Relative to x.min: x covers [0, x.extent - 1], y lies within
    // [delta.min, delta.max + y.extent - 1].
    int64_t lo = std::min<int64_t>(0, delta.min);
    int64_t hi = std::max<int64_t>(x.extent - 1, delta.max + y.extent - 1);
    if (!delta.is_point() || delta.min != 0 || x.extent != y.extent)
      out.exact = false;
    if (delta.is_point() && delta.min < 0) {
      out.dims.push_back({y.min, hi - lo + 1});
    } else {
      out.dims.push_back(
          {lo == 0 ? x.min : Simplify(x.min + IntImm(lo), fixed), hi - lo + 1});
    }
  }
  return out;
}

}  // namespace lathe
