#include "compiler/schedule/analysis/block_motion.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/analysis/loop_ranges.h"

namespace lathe {
namespace {

bool Touches(const std::vector<BufferAccess>& accesses, const Buffer* buffer) {
  for (const BufferAccess& a : accesses) {
    if (a.buffer.get() == buffer) return true;
  }
  return false;
}

// Pre-order positions of every statement.
std::map<const StmtNode*, int> Positions(const Program& program) {
  std::map<const StmtNode*, int> positions;
  int next = 0;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               positions[s] = next++;
               return true;
             });
  return positions;
}

void SplitConjuncts(const Expr& e, std::vector<Expr>* out) {
  if (e.is(ExprKind::kAnd)) {
    SplitConjuncts(e.operand(0), out);
    SplitConjuncts(e.operand(1), out);
    return;
  }
  out->push_back(e);
}

}  // namespace

std::vector<BlockNode*> WritersOf(const Program& program,
                                  const Buffer* buffer) {
  std::vector<BlockNode*> out;
  for (BlockNode* b : program.Blocks()) {
    if (Touches(AccessesOf(*b).writes, buffer)) out.push_back(b);
  }
  return out;
}

std::vector<BlockNode*> ReadersOf(const Program& program,
                                  const Buffer* buffer) {
  std::vector<BlockNode*> out;
  for (BlockNode* b : program.Blocks()) {
    if (Touches(AccessesOf(*b).reads, buffer)) out.push_back(b);
  }
  return out;
}

bool ComesBefore(const Program& program, const StmtNode* a, const StmtNode* b) {
  std::map<const StmtNode*, int> pos = Positions(program);
  return pos.at(a) < pos.at(b);
}

bool Contains(const StmtNode* ancestor, const StmtNode* stmt) {
  bool found = false;
  VisitStmts(ancestor, [&](const StmtNode* s) {
    if (s == stmt) found = true;
    return !found;
  });
  return found;
}

std::vector<BlockNode*> BlocksInterleaved(const Program& program,
                                          const StmtNode* a,
                                          const StmtNode* b) {
  std::map<const StmtNode*, int> pos = Positions(program);
  // Loops that are or enclose a or b: every block below them may run between
  // two of their iterations.
  std::vector<const StmtNode*> loops;
  for (const StmtNode* s : {a, b}) {
    for (const StmtNode* p = s; p != nullptr; p = program.ParentOf(p)) {
      if (p->kind == StmtKind::kFor) loops.push_back(p);
    }
  }
  std::vector<BlockNode*> out;
  for (BlockNode* y : program.Blocks()) {
    if (y == a || y == b) continue;
    if ((a->kind == StmtKind::kBlock && Contains(a, y)) ||
        (b->kind == StmtKind::kBlock && Contains(b, y))) {
      continue;
    }
    bool between = pos.at(a) < pos.at(y) && pos.at(y) < pos.at(b);
    for (const StmtNode* l : loops) {
      if (between) break;
      between = Contains(l, y);
    }
    if (between) out.push_back(y);
  }
  return out;
}

bool PredicateOnlyClipsDomain(const Program& program, const BlockNode& block) {
  VarRanges ranges = LoopRangesAbove(program, &block);
  VarMap to_binding;
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    to_binding[block.iter_vars[i].var] = block.iter_values[i];
  }
  std::vector<Expr> conjuncts;
  SplitConjuncts(Substitute(block.predicate, to_binding), &conjuncts);
  for (const Expr& c : conjuncts) {
    if (ProvablyTrue(c, ranges)) continue;
    if (!IsComparison(c.kind()) || !c.operand(0).dtype().is_int()) return false;
    // Normalize to e < 0.
    Expr e;
    switch (c.kind()) {
      case ExprKind::kLt:
        e = c.operand(0) - c.operand(1);
        break;
      case ExprKind::kLe:
        e = c.operand(0) - c.operand(1) - IntImm(1);
        break;
      case ExprKind::kGt:
        e = c.operand(1) - c.operand(0);
        break;
      case ExprKind::kGe:
        e = c.operand(1) - c.operand(0) - IntImm(1);
        break;
      default:
        return false;
    }
    bool implied = false;
    for (size_t i = 0; i < block.iter_vars.size() && !implied; ++i) {
      const Expr& v = block.iter_values[i];
      int64_t extent = block.iter_vars[i].extent;
      // e == v + k: v < -k holds when extent - 1 < -k.
      Expr up = Simplify(e - v, ranges);
      if (up.is_int_imm() && extent - 1 + up.int_value() < 0) implied = true;
      // e == k - v: v > k holds when 0 > k.
      Expr down = Simplify(e + v, ranges);
      if (down.is_int_imm() && down.int_value() < 0) implied = true;
    }
    if (!implied) return false;
  }
  return true;
}

Expr DomainClip(const std::vector<Expr>& bindings,
                const std::vector<IterVar>& iter_vars,
                const VarRanges& ranges) {
  Expr clip;
  auto add = [&](Expr c) {
    if (ProvablyTrue(c, ranges)) return;
    clip = clip.defined() ? And(clip, c) : c;
  };
  for (size_t i = 0; i < bindings.size(); ++i) {
    add(bindings[i] >= IntImm(0));
    add(bindings[i] < IntImm(iter_vars[i].extent));
  }
  return clip.defined() ? clip : True();
}

bool BodyUsesOnlyIterVars(const BlockNode& block) {
  std::set<const ExprNode*> defined;
  for (const IterVar& iv : block.iter_vars) defined.insert(iv.var.get());
  std::vector<const StmtNode*> parts;
  if (block.init) parts.push_back(block.init.get());
  if (block.body) parts.push_back(block.body.get());
  for (const StmtNode* part : parts) {
    VisitStmts(part, [&](const StmtNode* s) {
      if (const auto* f = s->as<ForNode>()) defined.insert(f->var.get());
      if (const auto* b = s->as<BlockNode>()) {
        for (const IterVar& iv : b->iter_vars) defined.insert(iv.var.get());
      }
      return true;
    });
  }
  bool ok = true;
  for (const StmtNode* part : parts) {
    VisitStmts(part, [&](const StmtNode* s) {
      VisitOwnExprs(*s, [&](const Expr& e) {
        if (UsesAnyVar(
                e, [&](const Expr& v) { return !defined.count(v.get()); })) {
          ok = false;
        }
      });
      return ok;
    });
  }
  return ok;
}

absl::Status RemoveStmt(Program* program, StmtNode* stmt) {
  StmtNode* parent = program->ParentOf(stmt);
  if (parent == nullptr) {
    return absl::FailedPreconditionError("cannot remove the root block");
  }
  switch (parent->kind) {
    case StmtKind::kFor:
      parent->as<ForNode>()->body.reset();
      return RemoveStmt(program, parent);
    case StmtKind::kSeq: {
      auto& stmts = parent->as<SeqNode>()->stmts;
      for (size_t i = 0; i < stmts.size(); ++i) {
        if (stmts[i].get() == stmt) {
          stmts.erase(stmts.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
      if (stmts.empty()) return RemoveStmt(program, parent);
      if (stmts.size() == 1) {
        StmtNode* grand = program->ParentOf(parent);
        if (grand == nullptr) return absl::OkStatus();
        StmtPtr only = std::move(stmts[0]);
        for (StmtPtr* slot : ChildSlots(grand)) {
          if (slot->get() == parent) {
            *slot = std::move(only);  // destroys the sequence
            break;
          }
        }
      }
      return absl::OkStatus();
    }
    case StmtKind::kBlock: {
      auto* block = parent->as<BlockNode>();
      if (block->init.get() == stmt) {
        block->init.reset();
      } else {
        // A block needs a body: leave an empty sequence.
        block->body = std::make_unique<SeqNode>();
      }
      return absl::OkStatus();
    }
    default:
      return absl::FailedPreconditionError(
          "cannot remove a statement that is the branch of a conditional");
  }
}

void RemoveAllocation(Program* program, const Buffer* buffer) {
  VisitStmts(program->root.get(), [&](StmtNode* s) {
    if (auto* b = s->as<BlockNode>()) {
      auto& allocs = b->alloc_buffers;
      for (size_t i = 0; i < allocs.size(); ++i) {
        if (allocs[i].get() == buffer) {
          allocs.erase(allocs.begin() + static_cast<std::ptrdiff_t>(i));
          return false;
        }
      }
    }
    return true;
  });
}

absl::Status CheckConcurrentLoopsAround(const Program& program,
                                        const StmtNode* stmt) {
  for (const StmtNode* p = program.ParentOf(stmt); p != nullptr;
       p = program.ParentOf(p)) {
    const auto* loop = p->as<ForNode>();
    if (loop == nullptr) continue;
    const char* what = loop->for_kind == ForKind::kParallel        ? "parallel"
                       : loop->for_kind == ForKind::kVectorized    ? "vectorize"
                       : loop->for_kind == ForKind::kThreadBinding ? "bind"
                                                                   : nullptr;
    if (what == nullptr) continue;
    absl::Status s = CheckDataParallel(program, *loop, what);
    if (!s.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "loop \"", loop->var->name, "\" would stop being data-parallel (",
          s.message(), ")"));
    }
  }
  return absl::OkStatus();
}

void PrependToLoop(ForNode* loop, StmtPtr stmt) {
  if (auto* seq = loop->body ? loop->body->as<SeqNode>() : nullptr) {
    seq->stmts.insert(seq->stmts.begin(), std::move(stmt));
    return;
  }
  std::vector<StmtPtr> stmts;
  stmts.push_back(std::move(stmt));
  if (loop->body) stmts.push_back(std::move(loop->body));
  loop->body = MakeSeq(std::move(stmts));
}

void AppendToLoop(ForNode* loop, StmtPtr stmt) {
  if (auto* seq = loop->body ? loop->body->as<SeqNode>() : nullptr) {
    seq->stmts.push_back(std::move(stmt));
    return;
  }
  std::vector<StmtPtr> stmts;
  if (loop->body) stmts.push_back(std::move(loop->body));
  stmts.push_back(std::move(stmt));
  loop->body = MakeSeq(std::move(stmts));
}

}  // namespace lathe

namespace lathe {

namespace {

std::string IndexText(const std::vector<Expr>& indices) {
  std::string s = "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    absl::StrAppend(&s, i ? ", " : "", indices[i].ToString());
  }
  return s + "]";
}

int IterVarIndex(const BlockNode& block, const Expr& e) {
  for (size_t j = 0; j < block.iter_vars.size(); ++j) {
    if (e.same_as(block.iter_vars[j].var)) return static_cast<int>(j);
  }
  return -1;
}

bool IsDivModByConstant(const Expr& e) {
  return (e.is(ExprKind::kFloorDiv) || e.is(ExprKind::kFloorMod)) &&
         e.operand(1).is_int_imm() && e.operand(1).int_value() > 0;
}

}  // namespace

absl::StatusOr<std::vector<Expr>> InjectiveWriteIndices(const BlockNode& block,
                                                        const Buffer& buffer) {
  BlockAccesses accesses = AccessesOf(block);
  std::set<const Buffer*> written;
  for (const BufferAccess& w : accesses.writes) written.insert(w.buffer.get());
  if (written.size() != 1 || !written.count(&buffer)) {
    return absl::FailedPreconditionError(
        absl::StrCat("it writes ", written.size(), " buffers"));
  }
  const std::vector<Expr>& indices = accesses.writes[0].indices;
  for (const BufferAccess& w : accesses.writes) {
    bool same = w.indices.size() == indices.size();
    for (size_t d = 0; same && d < indices.size(); ++d) {
      same = w.indices[d].same_as(indices[d]) ||
             w.indices[d].ToString() == indices[d].ToString();
    }
    if (!same) {
      return absl::FailedPreconditionError(
          absl::StrCat("it writes ", buffer.name, " at different indices"));
    }
  }
  auto fail = [&] {
    return absl::FailedPreconditionError(
        absl::StrCat("its store indices ", IndexText(indices),
                     " do not determine its instance"));
  };
  // How each variable appears: alone, or by divisor as // and %.
  std::map<int, bool> alone;
  std::map<std::pair<int, int64_t>, int> div_mod;  // bit 1: //, bit 2: %
  for (const Expr& index : indices) {
    Expr var = index;
    if (IsDivModByConstant(index)) var = index.operand(0);
    int j = IterVarIndex(block, var);
    if (j < 0 || block.iter_vars[j].type != IterType::kSpatial) return fail();
    if (var.same_as(index)) {
      alone[j] = true;
    } else {
      div_mod[{j, index.operand(1).int_value()}] |=
          index.is(ExprKind::kFloorDiv) ? 1 : 2;
    }
  }
  for (size_t j = 0; j < block.iter_vars.size(); ++j) {
    if (block.iter_vars[j].type != IterType::kSpatial) continue;
    bool recoverable = alone.count(static_cast<int>(j)) > 0;
    for (const auto& [key, bits] : div_mod) {
      if (key.first == static_cast<int>(j) && bits == 3) recoverable = true;
    }
    if (!recoverable) return fail();
  }
  return indices;
}

absl::StatusOr<VarMap> MatchWriteIndices(const std::vector<Expr>& pattern,
                                         const BlockNode& writer,
                                         const std::vector<Expr>& indices) {
  auto fail = [&] {
    return absl::FailedPreconditionError(
        absl::StrCat("indices ", IndexText(indices),
                     " do not match the writes ", IndexText(pattern)));
  };
  if (pattern.size() != indices.size()) return fail();
  VarMap values;
  auto bind = [&](const Expr& var, const Expr& value) {
    auto it = values.find(var);
    if (it == values.end()) {
      values[var] = value;
      return true;
    }
    Expr diff = Simplify(it->second - value);
    return diff.is_int_imm() && diff.int_value() == 0;
  };
  for (size_t d = 0; d < pattern.size(); ++d) {
    const Expr& p = pattern[d];
    const Expr& x = indices[d];
    if (IterVarIndex(writer, p) >= 0) {
      if (!bind(p, x)) return fail();
      continue;
    }
    // v // c or v % c: the access must be the same operation by c.
    if (!IsDivModByConstant(p) || x.kind() != p.kind() ||
        !x.operand(1).is_int_imm() ||
        x.operand(1).int_value() != p.operand(1).int_value() ||
        !bind(p.operand(0), x.operand(0))) {
      return fail();
    }
  }
  return values;
}

StmtPtr BuildBlockNest(const Program& program, std::unique_ptr<BlockNode> block,
                       const std::vector<RegionDim>& ranges,
                       const VarRanges& outer, bool preserve_unit_loops) {
  VarRanges all = outer;
  std::set<std::string> taken;
  std::vector<std::pair<Expr, int64_t>> loops;
  std::vector<Expr> bindings;
  for (const RegionDim& r : ranges) {
    if (r.extent == 1 && !preserve_unit_loops) {
      bindings.push_back(r.min);
      continue;
    }
    // "ax<k>", or the first "ax<k>_<i>" neither the program nor this nest uses.
    std::string hint = absl::StrCat("ax", loops.size());
    std::string name = hint;
    for (int i = 1; taken.count(name) || program.FreshName(name) != name; ++i) {
      name = absl::StrCat(hint, "_", i);
    }
    taken.insert(name);
    Expr var = Var(name);
    all[var.get()] = Interval::Extent(r.extent);
    loops.emplace_back(var, r.extent);
    bindings.push_back(
        r.min.is_int_imm() && r.min.int_value() == 0 ? var : r.min + var);
  }
  block->predicate = DomainClip(bindings, block->iter_vars, all);
  block->iter_values = std::move(bindings);
  StmtPtr nest = std::move(block);
  for (size_t i = loops.size(); i-- > 0;) {
    nest = MakeFor(loops[i].first, loops[i].second, std::move(nest));
  }
  return nest;
}

// Whether the indices are distinct spatial iteration variables of block, each
// of the extent of its dimension of shape.
bool IndexesWholeShape(const BlockNode& block, const std::vector<Expr>& indices,
                       const std::vector<int64_t>& shape) {
  if (indices.size() != shape.size()) return false;
  std::set<const ExprNode*> used;
  for (size_t d = 0; d < indices.size(); ++d) {
    bool found = false;
    for (const IterVar& iv : block.iter_vars) {
      if (iv.var.same_as(indices[d]) && iv.type == IterType::kSpatial &&
          iv.extent == shape[d]) {
        found = true;
      }
    }
    if (!found || !used.insert(indices[d].get()).second) return false;
  }
  return true;
}

}  // namespace lathe
