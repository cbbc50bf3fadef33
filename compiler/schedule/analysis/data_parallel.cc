#include "compiler/schedule/analysis/data_parallel.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/index_digits.h"
#include "compiler/schedule/analysis/loop_ranges.h"

namespace lathe {
namespace {

bool SameIndices(const LoopAccess& x, const LoopAccess& y) {
  return x.buffer == y.buffer && ExprsEqual(x.indices, y.indices);
}

// The variables of `varying` that any two executions of a and b touching
// the same element must give equal values (the others may differ), for the
// pairs of accesses of one check. Starts with all free; each proven variable
// is then held equal, which may prove more (j_0 * 2 + j_1: j_0 first, then
// j_1): every round renames the variables not yet proven in b's indices and
// adds the first variable of `varying`, in order, that has a single
// iteration or that the equations of the indices determine (Determines).
//
// The answer is the one of that plain fixpoint. What makes it fast is what
// one check would otherwise repeat (the tuner replays thousands of
// schedules a minute; every primitive that makes a loop concurrent runs a
// check, and sampling a compute location runs one per candidate location):
// 1. The ranges are fixed for a check, so each access's indices are
//    simplified once, and decomposed once per variable, not once per round
//    and pair. Both commute with renaming variables to fresh ones of the
//    same range (they compare variables by identity and look up only their
//    ranges): b's renamed simplified index is its simplified index renamed,
//    and so is its decomposition over a copy.
// 2. A variable that the simplified indices of a or of b do not mention is
//    never proven by the equations (its digit is looked for in both), so it
//    is not tried. A proven variable that they do not mention changes no
//    equation, so the round goes on instead of starting over (the
//    variables before it would fail again).
// 3. Callers ask about some variables (`wanted`: the parallel loop, or the
//    reordered loops). The rounds stop once each of them is proven or can
//    never be (2), as later rounds only add variables; a wanted variable of
//    a single iteration is proven by the round that reaches it, so it needs
//    no round (a check of a loop of extent 1 simplifies nothing).
// 4. Pairs of accesses with the same buffer and indices (a reduction's read
//    and write of its output, a store paired with itself and with another
//    store of the same element) share one answer.
class DeterminedVarsSolver {
 public:
  DeterminedVarsSolver(const std::vector<Expr>& varying,
                       const VarRanges& ranges,
                       const std::vector<const ExprNode*>& wanted)
      : varying_(varying), ranges_(ranges) {
    for (const Expr& v : varying_) {
      if (std::find(wanted.begin(), wanted.end(), v.get()) == wanted.end()) {
        continue;
      }
      (Single(v) ? wanted_single_ : wanted_open_).insert(v.get());
    }
  }

  // The answer for a and b, of which only the variables of `wanted` are
  // meaningful (the others may be missing).
  const std::set<const ExprNode*>& Solve(const LoopAccess& a,
                                         const LoopAccess& b) {
    if (a.buffer != b.buffer) return all_varying();
    if (a.indices.size() != b.indices.size()) return none_;
    if (wanted_open_.empty()) return wanted_single_;
    Access& sa = Of(a);
    Access& sb = Of(b);
    auto [it, fresh] = answers_.try_emplace({sa.id, sb.id});
    if (fresh) it->second = Compute(sa, sb);
    return it->second;
  }

 private:
  // An access's indices, simplified under the check's ranges.
  struct Access {
    int id = 0;                 // one per buffer and indices
    std::vector<Expr> indices;  // undefined where not of index type
    std::set<const ExprNode*> vars;
    // Decompose(indices[d], v) by variable, then dimension; on demand.
    std::map<const ExprNode*, std::vector<Decomposed>> decomposed;
  };

  bool Single(const Expr& v) const {
    auto r = ranges_.find(v.get());
    return r != ranges_.end() && r->second.is_point();
  }

  const std::set<const ExprNode*>& all_varying() {
    if (all_varying_.empty()) {
      for (const Expr& v : varying_) all_varying_.insert(v.get());
    }
    return all_varying_;
  }

  Access& Of(const LoopAccess& a) {
    auto found = id_of_.find(&a);
    if (found != id_of_.end()) return accesses_[found->second];
    for (const auto& [other, id] : id_of_) {
      if (SameIndices(*other, a)) return accesses_[id_of_[&a] = id];
    }
    Access& s = accesses_.emplace_back();
    s.id = static_cast<int>(accesses_.size()) - 1;
    id_of_[&a] = s.id;
    for (const Expr& index : a.indices) {
      if (index.dtype() != DType::Index()) {
        s.indices.emplace_back();
        continue;
      }
      s.indices.push_back(Simplify(index, ranges_));
      VisitExpr(s.indices.back(), [&](const Expr& e) {
        if (e.is_var()) s.vars.insert(e.get());
      });
    }
    return s;
  }

  const Decomposed& DecomposedOf(Access& s, size_t d, const Expr& var) {
    std::vector<Decomposed>& by_dim = s.decomposed[var.get()];
    if (by_dim.empty()) {
      for (const Expr& index : s.indices) {
        by_dim.push_back(index.defined() ? Decompose(index, var)
                                         : Decomposed{});
      }
    }
    return by_dim[d];
  }

  // The fresh variable standing for v in b's instance; one per variable for
  // the whole check (copies never occur in the accesses, so they are fresh
  // for every pair), with v's range in ranges_and_copies_.
  const Expr& CopyOf(const Expr& v) {
    auto [it, fresh] = copies_.try_emplace(v);
    if (fresh) {
      if (copies_.size() == 1) ranges_and_copies_ = ranges_;
      it->second = Var(v->name + "'", v.dtype());
      auto r = ranges_.find(v.get());
      if (r != ranges_.end()) ranges_and_copies_[it->second.get()] = r->second;
    }
    return it->second;
  }

  // Bounds of rest' - rest, simplified, for one pair: by dimension,
  // variable, and the variables of rest' renamed (the rest of the renaming
  // does not reach it).
  using DiffKey =
      std::tuple<size_t, const ExprNode*, std::vector<const ExprNode*>>;

  // Whether the equations of a's and b's indices (b's over the renamed
  // variables) force var == rename(var). Equations of expressions that are
  // themselves determined (the base of digits, e.g. a fused loop split
  // again) are added as new equations.
  bool Determines(Access& sa, Access& sb, const Expr& var, const VarMap& rename,
                  std::map<DiffKey, Interval>* diffs) {
    const VarRanges& ranges = ranges_and_copies_;
    DigitFacts facts;  // b's bases before renaming
    // Equations of determined bases: a's side and b's (renamed) side.
    std::vector<std::pair<Expr, Expr>> work;
    const size_t dims = sa.indices.size();
    for (size_t next = 0; next < dims + work.size(); ++next) {
      Decomposed da, db;  // db: b's side before renaming
      Interval diff;
      if (next < dims) {
        if (!sa.indices[next].defined() || !sb.indices[next].defined()) {
          continue;
        }
        da = DecomposedOf(sa, next, var);
        if (da.form != DigitForm::kDigit) continue;
        db = DecomposedOf(sb, next, var);
        // The renaming is one-to-one onto fresh variables, so the renamed
        // bases are the same exactly when the bases are.
        if (db.form != DigitForm::kDigit || !(da.digit == db.digit) ||
            da.coef != db.coef || !ExprEqual(db.base, da.base)) {
          continue;
        }
        DiffKey key{next, var.get(), {}};
        VisitExpr(db.rest, [&](const Expr& e) {
          if (e.is_var() && rename.count(e)) {
            std::get<2>(key).push_back(e.get());
          }
        });
        auto [it, fresh] = diffs->try_emplace(std::move(key));
        if (fresh) {
          it->second = BoundOf(
              Simplify(Substitute(db.rest, rename) - da.rest, ranges), ranges);
        }
        diff = it->second;
      } else {
        const auto& [ea0, eb0] = work[next - dims];
        if (ea0.dtype() != DType::Index() || eb0.dtype() != DType::Index()) {
          continue;
        }
        Expr ea = Simplify(ea0, ranges);
        Expr eb = Simplify(eb0, ranges);
        da = Decompose(ea, var);
        if (da.form != DigitForm::kDigit) continue;
        Decomposed renamed = Decompose(eb, rename.at(var));
        if (renamed.form != DigitForm::kDigit || !(da.digit == renamed.digit) ||
            da.coef != renamed.coef ||
            !ExprEqual(renamed.base, Substitute(da.base, rename))) {
          continue;
        }
        diff = BoundOf(Simplify(renamed.rest - da.rest, ranges), ranges);
        // Renamed already: renaming it again when it is pushed changes
        // nothing (it holds no variable the renaming maps).
        db = renamed;
      }
      std::optional<std::pair<Expr, Expr>> settled =
          facts.Add(da, db.base, rename, diff, ranges);
      if (!settled.has_value()) continue;
      if (settled->first.same_as(var)) return true;
      work.emplace_back(settled->first, Substitute(settled->second, rename));
    }
    return false;
  }

  std::set<const ExprNode*> Compute(Access& sa, Access& sb) {
    auto in_both = [&](const ExprNode* v) {
      return sa.vars.count(v) > 0 && sb.vars.count(v) > 0;
    };
    std::set<const ExprNode*> open;
    for (const ExprNode* v : wanted_open_) {
      if (in_both(v)) open.insert(v);
    }
    std::set<const ExprNode*> known;
    std::map<DiffKey, Interval> diffs;
    size_t from = 0;  // where the round starts in varying_
    while (!open.empty() && from < varying_.size()) {
      // b's instance: copies of the variables not yet known equal (of the
      // indices: only those are looked up).
      VarMap rename;
      for (const Expr& u : varying_) {
        if (!known.count(u.get()) &&
            (sa.vars.count(u.get()) || sb.vars.count(u.get()))) {
          rename[u] = CopyOf(u);
        }
      }
      size_t proven_at = varying_.size();
      for (size_t i = from; i < varying_.size() && !open.empty(); ++i) {
        const Expr& v = varying_[i];
        if (known.count(v.get())) continue;
        if (!Single(v) &&
            !(in_both(v.get()) && Determines(sa, sb, v, rename, &diffs))) {
          continue;
        }
        known.insert(v.get());
        open.erase(v.get());
        if (rename.count(v)) {
          proven_at = i;
          break;  // rename again with v held equal, from the first variable
        }
      }
      from = proven_at == varying_.size() ? proven_at : 0;
    }
    known.insert(wanted_single_.begin(), wanted_single_.end());
    return known;
  }

  const std::vector<Expr>& varying_;
  const VarRanges& ranges_;
  std::set<const ExprNode*> wanted_open_;    // wanted, of several iterations
  std::set<const ExprNode*> wanted_single_;  // wanted, of one iteration
  std::set<const ExprNode*> all_varying_;
  const std::set<const ExprNode*> none_;
  std::deque<Access> accesses_;
  std::map<const LoopAccess*, int> id_of_;
  std::map<std::pair<int, int>, std::set<const ExprNode*>> answers_;
  VarMap copies_;
  VarRanges ranges_and_copies_;
};

}  // namespace

bool SameElementImpliesSameValue(const LoopAccess& a, const LoopAccess& b,
                                 const Expr& var,
                                 const std::vector<Expr>& varying,
                                 const VarRanges& ranges) {
  DeterminedVarsSolver solver(varying, ranges, {var.get()});
  return solver.Solve(a, b).count(var.get()) > 0;
}

absl::Status CheckDataParallel(const Program& program, const ForNode& loop,
                               const std::string& primitive) {
  const std::string& name = loop.var->name;
  auto fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        primitive, ": loop \"", name, "\" is not data-parallel: ", why));
  };
  LoopAccessesAndBlocks collected = CollectLoopAccessesAndBlocks(program, loop);
  // 1. The loop feeds spatial iteration variables only.
  for (const ExpandedBlock& b : collected.blocks) {
    for (size_t i = 0; i < b.bindings.size(); ++i) {
      const IterVar& iv = b.block->iter_vars[i];
      if (iv.type == IterType::kReduce && UsesVar(b.bindings[i], loop.var)) {
        return fail(absl::StrCat("block \"", b.block->name,
                                 "\" binds it to reduce iteration variable \"",
                                 iv.var->name, "\""));
      }
    }
  }
  // 2. No element is touched by two iterations, one of them writing.
  std::vector<Expr> varying = LoopVarsIn(loop);
  VarRanges ranges = AllLoopRanges(program);
  DeterminedVarsSolver solver(varying, ranges, {loop.var.get()});
  return ForEachConflictCandidate(
      collected.accesses,
      [&](const LoopAccess& x, const LoopAccess& w) -> absl::Status {
        if (solver.Solve(x, w).count(loop.var.get())) {
          return absl::OkStatus();
        }
        return fail(absl::StrCat(
            BlockText(x), x.is_write ? " writes " : " reads ", AccessText(x),
            " and ", BlockText(w), " writes ", AccessText(w),
            ", which may be the same element in two iterations"));
      });
}

ReorderCheck::ReorderCheck(const Program& program,
                           const std::vector<const ForNode*>& span,
                           const std::vector<const ForNode*>& new_order)
    : span_(span),
      accesses_(CollectLoopAccesses(program, *span.front())),
      varying_(LoopVarsIn(*span.front())),
      ranges_(AllLoopRanges(program)) {
  for (size_t i = 0; i < span.size(); ++i) old_pos_[span[i]] = i;
  for (size_t i = 0; i < new_order.size(); ++i) new_pos_[new_order[i]] = i;
}

size_t ReorderCheck::Position(const std::map<const ForNode*, size_t>& pos,
                              const ForNode* loop) {
  auto it = pos.find(loop);
  return it == pos.end() ? 0 : it->second;
}

absl::Status ReorderCheck::CheckPair(
    const LoopAccess& x, const LoopAccess& w,
    const std::set<const ExprNode*>& determined) const {
  // Span loops whose values may differ between the two accesses.
  std::vector<const ForNode*> free;
  for (const ForNode* l : span_) {
    if (!determined.count(l->var.get())) free.push_back(l);
  }
  for (size_t p = 0; p < free.size(); ++p) {
    for (size_t q = p + 1; q < free.size(); ++q) {
      bool before = Position(old_pos_, free[p]) < Position(old_pos_, free[q]);
      bool after = Position(new_pos_, free[p]) < Position(new_pos_, free[q]);
      if (before == after) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "reorder: loops \"", free[p]->var->name, "\" and \"",
          free[q]->var->name, "\" cannot swap: ", BlockText(x),
          x.is_write ? " writes " : " reads ", AccessText(x), " and ",
          BlockText(w), " writes ", AccessText(w),
          " in iterations that may differ in both, so their order would "
          "change"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckReorderKeepsDependences(
    const Program& program, const std::vector<const ForNode*>& span,
    const std::vector<const ForNode*>& new_order) {
  if (span.empty()) return absl::OkStatus();
  ReorderCheck check(program, span, new_order);
  std::vector<const ExprNode*> span_vars;
  for (const ForNode* l : span) span_vars.push_back(l->var.get());
  DeterminedVarsSolver solver(check.varying(), check.ranges(), span_vars);
  return check.Run(
      [&](const LoopAccess& x,
          const LoopAccess& w) -> const std::set<const ExprNode*>& {
        return solver.Solve(x, w);
      });
}

std::vector<const ForNode*> LoopsNestedWith(const Program& program,
                                            const ForNode& loop) {
  std::vector<const ForNode*> loops;
  std::vector<const StmtNode*> ancestors = AncestorsOf(program, &loop);
  for (auto p = ancestors.rbegin(); p != ancestors.rend(); ++p) {
    if (const auto* f = (*p)->as<ForNode>()) loops.push_back(f);
  }
  VisitStmts(loop.body.get(), [&](const StmtNode* s) {
    if (const auto* f = s->as<ForNode>()) loops.push_back(f);
    return true;
  });
  return loops;
}

}  // namespace lathe
