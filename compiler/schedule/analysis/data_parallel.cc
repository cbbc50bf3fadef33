#include "compiler/schedule/analysis/data_parallel.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/loop_ranges.h"

namespace lathe {
namespace {

// ---------------------------------------------------------------------------
// Collecting accesses.

struct ExpandedBlock {
  const BlockNode* block;
  std::vector<Expr>
      bindings;  // one per iteration variable, over loop variables
};

class AccessCollector {
 public:
  explicit AccessCollector(const BlockNode* outer_block)
      : outer_block_(outer_block) {}

  void Run(const ForNode& scope) {
    // Buffers allocated below the scope are fresh per instance of their block.
    VisitStmts(static_cast<const StmtNode*>(&scope), [&](const StmtNode* s) {
      if (const auto* b = s->as<BlockNode>()) {
        for (const BufferPtr& buf : b->alloc_buffers)
          private_.insert(buf.get());
      }
      return true;
    });
    Walk(scope, VarMap{}, outer_block_);
  }

  std::vector<LoopAccess> accesses;
  std::vector<ExpandedBlock> blocks;

 private:
  void AddReads(const Expr& expr, const VarMap& subst, const BlockNode* block) {
    if (!expr.defined()) return;
    VisitExpr(Substitute(expr, subst), [&](const Expr& e) {
      if (e.is(ExprKind::kLoad) && !private_.count(e->buffer.get())) {
        accesses.push_back({block, e->buffer, e->operands, /*is_write=*/false});
      }
    });
  }

  void Walk(const StmtNode& s, const VarMap& subst, const BlockNode* block) {
    switch (s.kind) {
      case StmtKind::kFor:
        Walk(*s.as<ForNode>()->body, subst, block);
        return;
      case StmtKind::kSeq:
        for (const StmtPtr& c : s.as<SeqNode>()->stmts) Walk(*c, subst, block);
        return;
      case StmtKind::kIf: {
        const auto& n = *s.as<IfNode>();
        AddReads(n.cond, subst, block);
        Walk(*n.then_case, subst, block);
        if (n.else_case) Walk(*n.else_case, subst, block);
        return;
      }
      case StmtKind::kStore: {
        const auto& n = *s.as<StoreNode>();
        for (const Expr& i : n.indices) AddReads(i, subst, block);
        AddReads(n.value, subst, block);
        if (!private_.count(n.buffer.get())) {
          std::vector<Expr> indices;
          for (const Expr& i : n.indices)
            indices.push_back(Substitute(i, subst));
          accesses.push_back(
              {block, n.buffer, std::move(indices), /*is_write=*/true});
        }
        return;
      }
      case StmtKind::kBlock: {
        const auto& b = *s.as<BlockNode>();
        VarMap inner = subst;
        ExpandedBlock expanded{&b, {}};
        for (size_t i = 0; i < b.iter_vars.size() && i < b.iter_values.size();
             ++i) {
          AddReads(b.iter_values[i], subst, block);
          expanded.bindings.push_back(Substitute(b.iter_values[i], subst));
          inner[b.iter_vars[i].var] = expanded.bindings.back();
        }
        blocks.push_back(std::move(expanded));
        AddReads(b.predicate, inner, &b);
        if (b.init) Walk(*b.init, inner, &b);
        if (b.body) Walk(*b.body, inner, &b);
        return;
      }
    }
  }

  const BlockNode* outer_block_;
  std::set<const Buffer*> private_;
};

// The statements enclosing `target` below `node`, outermost first; false
// when `target` is not below `node`. One walk of the tree, where
// Program::ParentOf walks it once per level.
bool PathTo(const StmtNode* node, const StmtNode* target,
            std::vector<const StmtNode*>* path) {
  if (node == target) return true;
  path->push_back(node);
  for (const StmtNode* child : ChildStmts(const_cast<StmtNode*>(node))) {
    if (PathTo(child, target, path)) return true;
  }
  path->pop_back();
  return false;
}

std::vector<const StmtNode*> AncestorsOf(const Program& program,
                                         const StmtNode* stmt) {
  std::vector<const StmtNode*> path;
  if (!PathTo(program.root.get(), stmt, &path)) path.clear();
  return path;
}

// Program::EnclosingBlock in one walk.
const BlockNode* EnclosingBlockOf(const Program& program,
                                  const StmtNode* stmt) {
  std::vector<const StmtNode*> path = AncestorsOf(program, stmt);
  for (auto p = path.rbegin(); p != path.rend(); ++p) {
    if (const auto* b = (*p)->as<BlockNode>()) return b;
  }
  return nullptr;
}

std::vector<Expr> LoopVarsIn(const ForNode& scope) {
  std::vector<Expr> vars;
  VisitStmts(static_cast<const StmtNode*>(&scope), [&](const StmtNode* s) {
    if (const auto* f = s->as<ForNode>()) vars.push_back(f->var);
    return true;
  });
  return vars;
}

// ---------------------------------------------------------------------------
// Digits of a variable in an index expression.

// (v // a) % b; b == 0 means no modulus.
struct Digit {
  int64_t a = 1;
  int64_t b = 0;
  bool operator==(const Digit& o) const { return a == o.a && b == o.b; }
};

bool SameExpr(const Expr& x, const Expr& y) {
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

void Linearize(const Expr& e, int64_t scale, Linear* out) {
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
bool MatchDigit(const Expr& atom, Expr* base, Digit* digit) {
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
Decomposed Decompose(const Expr& e, const Expr& var) {
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
bool DigitsDetermine(const std::vector<Digit>& facts, int64_t span) {
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

bool SameIndices(const LoopAccess& x, const LoopAccess& y) {
  if (x.buffer != y.buffer || x.indices.size() != y.indices.size()) {
    return false;
  }
  for (size_t d = 0; d < x.indices.size(); ++d) {
    if (!SameExpr(x.indices[d], y.indices[d])) return false;
  }
  return true;
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
    struct Entry {
      Expr base_a, base_b;  // base_b before renaming
      std::vector<Digit> facts;
      bool settled = false;
    };
    std::vector<Entry> entries;
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
        if (da.form != Form::kDigit) continue;
        db = DecomposedOf(sb, next, var);
        // The renaming is one-to-one onto fresh variables, so the renamed
        // bases are the same exactly when the bases are.
        if (db.form != Form::kDigit || !(da.digit == db.digit) ||
            da.coef != db.coef || !SameExpr(db.base, da.base)) {
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
        if (da.form != Form::kDigit) continue;
        Decomposed renamed = Decompose(eb, rename.at(var));
        if (renamed.form != Form::kDigit || !(da.digit == renamed.digit) ||
            da.coef != renamed.coef ||
            !SameExpr(renamed.base, Substitute(da.base, rename))) {
          continue;
        }
        diff = BoundOf(Simplify(renamed.rest - da.rest, ranges), ranges);
        // Renamed already: renaming it again when it is pushed changes
        // nothing (it holds no variable the renaming maps).
        db = renamed;
      }
      // coef * (digit - digit') == rest' - rest: |rest' - rest| < |coef|
      // forces equal digits.
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
      work.emplace_back(entry->base_a, Substitute(entry->base_b, rename));
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

std::string AccessText(const LoopAccess& a) {
  std::vector<std::string> parts;
  for (const Expr& i : a.indices) parts.push_back(i.ToString());
  return absl::StrCat(a.buffer->name, "[", absl::StrJoin(parts, ", "), "]");
}

std::string BlockText(const LoopAccess& a) {
  return a.block == nullptr ? std::string("the loop body")
                            : absl::StrCat("block \"", a.block->name, "\"");
}

// Pairs of accesses to one buffer, at least one a write; a store is paired
// with itself (two iterations executing it). Calls fn(first, second) with the
// write second when only one writes.
template <typename Fn>
absl::Status ForEachConflictCandidate(const std::vector<LoopAccess>& accesses,
                                      Fn fn) {
  for (size_t i = 0; i < accesses.size(); ++i) {
    for (size_t j = i; j < accesses.size(); ++j) {
      const LoopAccess& x = accesses[i];
      const LoopAccess& y = accesses[j];
      if (x.buffer != y.buffer || (!x.is_write && !y.is_write)) continue;
      absl::Status s = y.is_write ? fn(x, y) : fn(y, x);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<LoopAccess> CollectLoopAccesses(const Program& program,
                                            const ForNode& scope) {
  AccessCollector collector(EnclosingBlockOf(program, &scope));
  collector.Run(scope);
  return std::move(collector.accesses);
}

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
  AccessCollector collector(EnclosingBlockOf(program, &loop));
  collector.Run(loop);
  // 1. The loop feeds spatial iteration variables only.
  for (const ExpandedBlock& b : collector.blocks) {
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
      collector.accesses,
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

absl::Status CheckReorderKeepsDependences(
    const Program& program, const std::vector<const ForNode*>& span,
    const std::vector<const ForNode*>& new_order) {
  if (span.empty()) return absl::OkStatus();
  std::map<const ForNode*, size_t> old_pos, new_pos;
  for (size_t i = 0; i < span.size(); ++i) old_pos[span[i]] = i;
  for (size_t i = 0; i < new_order.size(); ++i) new_pos[new_order[i]] = i;
  std::vector<LoopAccess> accesses =
      CollectLoopAccesses(program, *span.front());
  std::vector<Expr> varying = LoopVarsIn(*span.front());
  VarRanges ranges = AllLoopRanges(program);
  std::vector<const ExprNode*> span_vars;
  for (const ForNode* l : span) span_vars.push_back(l->var.get());
  DeterminedVarsSolver solver(varying, ranges, span_vars);
  return ForEachConflictCandidate(
      accesses, [&](const LoopAccess& x, const LoopAccess& w) -> absl::Status {
        // Span loops whose values may differ between the two accesses.
        const std::set<const ExprNode*>& determined = solver.Solve(x, w);
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
        return absl::OkStatus();
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
