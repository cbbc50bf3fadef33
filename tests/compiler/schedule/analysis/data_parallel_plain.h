// The data-parallel analysis as it was before it was made fast
// (compiler/schedule/analysis/data_parallel.cc): the plain fixpoint, which
// renames and simplifies every equation again for every variable and every
// round. DataParallel.MatchesThePlainFixpoint checks that the fast analysis
// gives the same answers (a faster analysis must not change a verdict).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/analysis/loop_ranges.h"

namespace lathe::testing::plain {

// (v // a) % b; b == 0 means no modulus.
struct Digit {
  int64_t a = 1;
  int64_t b = 0;
  bool operator==(const Digit& o) const { return a == o.a && b == o.b; }
};

inline bool SameExpr(const Expr& x, const Expr& y) {
  if (x.same_as(y)) return true;
  const ExprNode& p = *x.get();
  const ExprNode& q = *y.get();
  if (p.kind != q.kind || p.dtype != q.dtype || p.int_value != q.int_value ||
      p.float_value != q.float_value || p.name != q.name ||
      p.buffer != q.buffer || p.operands.size() != q.operands.size() ||
      p.kind == ExprKind::kVar) {
    return false;
  }
  for (size_t i = 0; i < p.operands.size(); ++i) {
    if (!SameExpr(p.operands[i], q.operands[i])) return false;
  }
  return true;
}

struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
  bool ok = true;  // false on overflow
};

inline void Linearize(const Expr& e, int64_t scale, Linear* out) {
  int64_t scaled;
  switch (e.kind()) {
    case ExprKind::kIntImm:
      if (__builtin_mul_overflow(scale, e.int_value(), &scaled) ||
          __builtin_add_overflow(out->constant, scaled, &out->constant)) {
        out->ok = false;
      }
      return;
    case ExprKind::kAdd:
      Linearize(e.operand(0), scale, out);
      Linearize(e.operand(1), scale, out);
      return;
    case ExprKind::kSub:
      Linearize(e.operand(0), scale, out);
      Linearize(e.operand(1), -scale, out);
      return;
    case ExprKind::kMul:
      for (int k = 0; k < 2; ++k) {
        if (e.operand(k).is_int_imm()) {
          if (__builtin_mul_overflow(scale, e.operand(k).int_value(),
                                     &scaled)) {
            out->ok = false;
            return;
          }
          Linearize(e.operand(1 - k), scaled, out);
          return;
        }
      }
      break;
    default:
      break;
  }
  for (auto& [atom, coef] : out->terms) {
    if (SameExpr(atom, e)) {
      coef += scale;
      return;
    }
  }
  out->terms.emplace_back(e, scale);
}

// A digit of some expression `base` that mentions the variable: base itself
// (a variable), base // a, base % b, (base // a) % b or (base % m) // a with a
// dividing m. `base` is the variable, or a sum of several (a fused loop split
// again: (f_0 * 8 + f_1) // 10).
inline bool MatchDigit(const Expr& atom, Expr* base, Digit* digit) {
  auto positive_imm = [](const Expr& e) {
    return e.is_int_imm() && e.int_value() > 0;
  };
  if (atom.is_var()) {
    *base = atom;
    *digit = {1, 0};
    return true;
  }
  if (atom.is(ExprKind::kFloorDiv) && positive_imm(atom.operand(1))) {
    const Expr& x = atom.operand(0);
    int64_t a = atom.operand(1).int_value();
    if (x.is(ExprKind::kFloorMod) && positive_imm(x.operand(1)) &&
        x.operand(1).int_value() % a == 0) {
      *base = x.operand(0);
      *digit = {a, x.operand(1).int_value() / a};
      return true;
    }
    *base = x;
    *digit = {a, 0};
    return true;
  }
  if (atom.is(ExprKind::kFloorMod) && positive_imm(atom.operand(1))) {
    const Expr& x = atom.operand(0);
    int64_t b = atom.operand(1).int_value();
    if (x.is(ExprKind::kFloorDiv) && positive_imm(x.operand(1))) {
      *base = x.operand(0);
      *digit = {x.operand(1).int_value(), b};
      return true;
    }
    *base = x;
    *digit = {1, b};
    return true;
  }
  return false;
}

enum class Form { kAbsent, kDigit, kUnknown };

struct Decomposed {
  Form form = Form::kUnknown;
  int64_t coef = 0;
  Expr base;  // the expression the digit is taken of; mentions var
  Digit digit;
  Expr rest;  // the index without the digit term; free of var
};

// Writes e as coef * digit(base) + rest, where var occurs only in base.
inline Decomposed Decompose(const Expr& e, const Expr& var) {
  Decomposed d;
  if (!UsesVar(e, var)) {
    d.form = Form::kAbsent;
    return d;
  }
  Linear lin;
  Linearize(e, 1, &lin);
  if (!lin.ok) return d;
  int found = -1;
  for (size_t i = 0; i < lin.terms.size(); ++i) {
    if (lin.terms[i].second == 0 || !UsesVar(lin.terms[i].first, var)) continue;
    if (found >= 0) return d;  // var in two terms
    found = static_cast<int>(i);
  }
  if (found < 0) {
    d.form = Form::kAbsent;  // its terms cancelled
    return d;
  }
  if (!MatchDigit(lin.terms[found].first, &d.base, &d.digit) ||
      !UsesVar(d.base, var)) {
    return d;
  }
  d.coef = lin.terms[found].second;
  d.form = Form::kDigit;
  Expr rest = IntImm(lin.constant);
  for (size_t i = 0; i < lin.terms.size(); ++i) {
    if (static_cast<int>(i) == found || lin.terms[i].second == 0) continue;
    rest = rest + lin.terms[i].first * IntImm(lin.terms[i].second);
  }
  d.rest = rest;
  return d;
}

// Whether knowing (x // a) % b == (x' // a) % b for every fact determines x,
// for x and x' in an interval of `span` values.
inline bool DigitsDetermine(const std::vector<Digit>& facts, int64_t span) {
  // Invariant: x == x' (mod known). A fact (a, b) with a dividing known adds
  // x == x' (mod a * b) (floor division makes this hold for negative values
  // too); b == 0 settles x. known >= span settles it as well.
  int64_t known = 1;
  bool changed = true;
  while (known < span && changed) {
    changed = false;
    for (const Digit& f : facts) {
      if (known % f.a != 0) continue;
      if (f.b == 0) return true;
      int64_t ab;
      if (__builtin_mul_overflow(f.a, f.b, &ab) || ab >= span) return true;
      int64_t next = std::lcm(known, ab);
      if (next > known) {
        known = next;
        changed = true;
      }
    }
  }
  return known >= span;
}

// Whether the equations (pairs of index expressions of instance a and of
// instance b, the latter over the renamed variables) force var == rename(var).
// Equations of expressions that are themselves determined (the base of
// digits, e.g. a fused loop split again) are added as new equations.
inline bool EquationsDetermine(std::vector<std::pair<Expr, Expr>> work,
                               const Expr& var, const VarMap& rename,
                               const VarRanges& ranges) {
  const Expr& var_copy = rename.at(var);
  struct Entry {
    Expr base_a, base_b;
    std::vector<Digit> facts;
    bool settled = false;
  };
  std::vector<Entry> entries;
  for (size_t next = 0; next < work.size(); ++next) {
    if (work[next].first.dtype() != DType::Index() ||
        work[next].second.dtype() != DType::Index()) {
      continue;
    }
    Expr ea = Simplify(work[next].first, ranges);
    Expr eb = Simplify(work[next].second, ranges);
    Decomposed da = Decompose(ea, var);
    Decomposed db = Decompose(eb, var_copy);
    if (da.form != Form::kDigit || db.form != Form::kDigit ||
        !(da.digit == db.digit) || da.coef != db.coef ||
        !SameExpr(db.base, Substitute(da.base, rename))) {
      continue;
    }
    // coef * (digit - digit') == rest' - rest: |rest' - rest| < |coef| forces
    // equal digits.
    Interval diff = BoundOf(Simplify(db.rest - da.rest, ranges), ranges);
    int64_t c = da.coef < 0 ? -da.coef : da.coef;
    if (!diff.is_bounded() || diff.min <= -c || diff.max >= c) continue;
    Entry* entry = nullptr;
    for (Entry& e : entries) {
      if (SameExpr(e.base_a, da.base)) entry = &e;
    }
    if (entry == nullptr) {
      entries.push_back({da.base, db.base, {}, false});
      entry = &entries.back();
    }
    if (entry->settled) continue;
    entry->facts.push_back(da.digit);
    Interval range = BoundOf(da.base, ranges);
    if (!range.is_bounded()) continue;
    int64_t span;
    if (__builtin_sub_overflow(range.max, range.min, &span) ||
        span == std::numeric_limits<int64_t>::max())
      continue;
    if (!DigitsDetermine(entry->facts, span + 1)) continue;
    entry->settled = true;
    if (entry->base_a.same_as(var)) return true;
    work.emplace_back(entry->base_a, entry->base_b);
  }
  return false;
}

// The variables of `varying` that any two executions of a and b touching
// the same element must give equal values (the others may differ). Starts
// with all free; each proven variable is then held equal, which may prove
// more (j_0 * 2 + j_1: j_0 first, then j_1).
inline std::set<const ExprNode*> DeterminedVars(
    const LoopAccess& a, const LoopAccess& b, const std::vector<Expr>& varying,
    const VarRanges& ranges) {
  std::set<const ExprNode*> known;
  if (a.buffer != b.buffer) {
    for (const Expr& v : varying) known.insert(v.get());
    return known;
  }
  if (a.indices.size() != b.indices.size()) return known;
  for (bool changed = true; changed;) {
    changed = false;
    // b's instance: fresh copies of the variables not yet known equal.
    VarRanges all = ranges;
    VarMap rename;
    for (const Expr& v : varying) {
      if (known.count(v.get())) continue;
      Expr copy = Var(v->name + "'", v.dtype());
      rename[v] = copy;
      auto r = ranges.find(v.get());
      if (r != ranges.end()) all[copy.get()] = r->second;
    }
    std::vector<std::pair<Expr, Expr>> equations;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      equations.emplace_back(a.indices[d], Substitute(b.indices[d], rename));
    }
    for (const Expr& v : varying) {
      if (known.count(v.get())) continue;
      auto r = ranges.find(v.get());
      bool single = r != ranges.end() && r->second.is_point();
      if (single || EquationsDetermine(equations, v, rename, all)) {
        known.insert(v.get());
        changed = true;
        break;  // rename again with v held equal
      }
    }
  }
  return known;
}

inline std::string AccessText(const LoopAccess& a) {
  std::vector<std::string> parts;
  for (const Expr& i : a.indices) parts.push_back(i.ToString());
  return absl::StrCat(a.buffer->name, "[", absl::StrJoin(parts, ", "), "]");
}

inline std::string BlockText(const LoopAccess& a) {
  return a.block == nullptr ? std::string("the loop body")
                            : absl::StrCat("block \"", a.block->name, "\"");
}

// CheckReorderKeepsDependences over DeterminedVars.
inline absl::Status CheckReorderKeepsDependences(
    const Program& program, const std::vector<const ForNode*>& span,
    const std::vector<const ForNode*>& new_order) {
  if (span.empty()) return absl::OkStatus();
  std::map<const ForNode*, size_t> old_pos, new_pos;
  for (size_t i = 0; i < span.size(); ++i) old_pos[span[i]] = i;
  for (size_t i = 0; i < new_order.size(); ++i) new_pos[new_order[i]] = i;
  std::vector<LoopAccess> accesses =
      CollectLoopAccesses(program, *span.front());
  std::vector<Expr> varying;
  VisitStmts(static_cast<const StmtNode*>(span.front()),
             [&](const StmtNode* s) {
               if (const auto* f = s->as<ForNode>()) varying.push_back(f->var);
               return true;
             });
  VarRanges ranges = AllLoopRanges(program);
  for (size_t i = 0; i < accesses.size(); ++i) {
    for (size_t j = i; j < accesses.size(); ++j) {
      const LoopAccess& first = accesses[i];
      const LoopAccess& second = accesses[j];
      if (first.buffer != second.buffer ||
          (!first.is_write && !second.is_write)) {
        continue;
      }
      const LoopAccess& x = second.is_write ? first : second;
      const LoopAccess& w = second.is_write ? second : first;
      std::set<const ExprNode*> determined =
          DeterminedVars(x, w, varying, ranges);
      std::vector<const ForNode*> free;
      for (const ForNode* l : span) {
        if (!determined.count(l->var.get())) free.push_back(l);
      }
      for (size_t p = 0; p < free.size(); ++p) {
        for (size_t q = p + 1; q < free.size(); ++q) {
          bool before = old_pos[free[p]] < old_pos[free[q]];
          bool after = new_pos[free[p]] < new_pos[free[q]];
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
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::testing::plain
