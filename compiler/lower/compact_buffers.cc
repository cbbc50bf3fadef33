#include "compiler/lower/compact_buffers.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/arith/index_span.h"
#include "compiler/arith/int_bounds.h"
#include "compiler/arith/linear_terms.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lowered_form.h"

namespace lathe {
namespace {

// One load or store of a buffer, with the loops around it, outermost first.
struct Access {
  std::vector<Expr> indices;
  std::vector<const ForNode*> loops;
  bool is_store = false;
  // For a store whose value also reads the buffer (a reduction update).
  bool is_update = false;
  bool reads_other_element = false;  // the value reads another index too
};

struct BufferUse {
  std::vector<Access> accesses;
};

// 1. Collect the accesses of the candidates, in one walk.
class AccessCollector {
 public:
  explicit AccessCollector(std::map<const Buffer*, BufferUse>* uses)
      : uses_(uses) {}

  void Walk(const StmtNode* s) {
    if (s == nullptr) return;
    switch (s->kind) {
      case StmtKind::kFor: {
        const auto* f = s->as<ForNode>();
        loops_.push_back(f);
        Walk(f->body.get());
        loops_.pop_back();
        return;
      }
      case StmtKind::kStore: {
        const auto* st = s->as<StoreNode>();
        VisitOwnExprs(*s, [&](const Expr& e) { CollectLoads(e); });
        auto it = uses_->find(st->buffer.get());
        if (it == uses_->end()) return;
        Access a{st->indices, loops_, /*is_store=*/true};
        std::string written = IndicesText(st->indices);
        VisitExpr(st->value, [&](const Expr& e) {
          if (e.is(ExprKind::kLoad) && e->buffer.get() == st->buffer.get()) {
            a.is_update = true;
            if (IndicesText(e->operands) != written)
              a.reads_other_element = true;
          }
        });
        it->second.accesses.push_back(std::move(a));
        return;
      }
      default:
        VisitOwnExprs(*s, [&](const Expr& e) { CollectLoads(e); });
        for (StmtNode* c : ChildStmts(const_cast<StmtNode*>(s))) Walk(c);
        return;
    }
  }

 private:
  static std::string IndicesText(const std::vector<Expr>& indices) {
    std::string text;
    for (const Expr& i : indices) absl::StrAppend(&text, PrintExpr(i), ",");
    return text;
  }
  void CollectLoads(const Expr& e) {
    VisitExpr(e, [&](const Expr& x) {
      if (!x.is(ExprKind::kLoad)) return;
      auto it = uses_->find(x->buffer.get());
      if (it != uses_->end())
        it->second.accesses.push_back({x->operands, loops_});
    });
  }

  std::map<const Buffer*, BufferUse>* uses_;
  std::vector<const ForNode*> loops_;
};

bool UsesVarIn(const Expr& e, const VarRanges& ranges) {
  return UsesAnyVar(e,
                    [&](const Expr& v) { return ranges.count(v.get()) > 0; });
}

// Whether two iterations of `loop` can write the same element through an
// update store: true unless some index dimension moves by more, per step of
// the loop, than all the loops below it can span.
bool UpdateCarriedBy(const Access& update, size_t depth) {
  if (update.reads_other_element) return true;  // not a plain accumulation
  const ForNode* loop = update.loops[depth];
  // bind proved that no two iterations of a loop bound to blockIdx/threadIdx
  // touch the same element of a buffer one of them writes (its indices may
  // reach that loop's variable only through // and %, which the step test
  // below cannot follow).
  if (loop->for_kind == ForKind::kThreadBinding &&
      loop->thread_tag != "vthread") {
    return false;
  }
  VarRanges inner, all;
  for (size_t i = 0; i < update.loops.size(); ++i) {
    const ForNode* l = update.loops[i];
    all[l->var.get()] = Interval::Extent(l->extent);
    if (i > depth) inner[l->var.get()] = Interval::Extent(l->extent);
  }
  if (loop->extent <= 1) return false;
  for (const Expr& raw : update.indices) {
    LinearTerms terms;
    CollectLinearTerms(Simplify(raw, all), 1, &terms);
    int64_t step = 0;
    int64_t inner_width = 0;
    bool ok = true;
    for (const auto& [atom, coef] : terms.terms) {
      if (atom.same_as(loop->var)) {
        step += coef;
        continue;
      }
      if (UsesVar(atom, loop->var)) {
        ok = false;
        break;
      }
      if (!UsesVarIn(atom, inner)) continue;  // outer loops: the same shift
      if (UsesAnyVar(atom,
                     [&](const Expr& v) { return !inner.count(v.get()); })) {
        ok = false;
        break;
      }
      Interval b = BoundOf(atom, inner);
      if (!b.is_bounded()) {
        ok = false;
        break;
      }
      inner_width += (coef < 0 ? -coef : coef) * (b.max - b.min);
    }
    if (ok && step != 0 && (step < 0 ? -step : step) > inner_width)
      return false;
  }
  return true;
}

class Compactor {
 public:
  Compactor(Program* program, CompactStats* stats)
      : program_(program), stats_(stats) {}

  void Run() {
    std::map<const Buffer*, BufferUse> uses;
    for (const BufferPtr& b : program_->root->alloc_buffers) uses[b.get()];
    AccessCollector collector(&uses);
    collector.Walk(program_->root->body.get());

    std::vector<BufferPtr> kept;
    for (const BufferPtr& buffer : program_->root->alloc_buffers) {
      if (Compact(buffer, uses[buffer.get()])) continue;
      kept.push_back(buffer);
      stats_->kept.push_back(buffer->name);
      if (buffer->scope == BufferScope::kLocal &&
          buffer->NumElements() > kLargeLocalElements) {
        stats_->large_local.push_back(buffer->name);
      }
    }
    program_->root->alloc_buffers = std::move(kept);
  }

 private:
  bool Compact(const BufferPtr& buffer, const BufferUse& use) {
    if (use.accesses.empty()) return false;
    // 1. The innermost loop around every access.
    size_t depth = use.accesses[0].loops.size();
    for (const Access& a : use.accesses) {
      size_t d = 0;
      while (d < depth && d < a.loops.size() &&
             a.loops[d] == use.accesses[0].loops[d])
        ++d;
      depth = d;
    }
    // 2. Above every loop that carries an accumulation.
    for (const Access& a : use.accesses) {
      if (!a.is_update) continue;
      for (size_t d = 0; d < depth; ++d) {
        if (UpdateCarriedBy(a, d)) {
          depth = d;
          break;
        }
      }
    }
    if (depth == 0) return false;
    const std::vector<const ForNode*>& common = use.accesses[0].loops;
    ForNode* loop = const_cast<ForNode*>(common[depth - 1]);
    VarRanges fixed;
    for (size_t d = 0; d < depth; ++d) {
      fixed[common[d]->var.get()] = Interval::Extent(common[d]->extent);
    }
    // 3. The box of every access in one iteration of the loop.
    size_t rank = buffer->shape.size();
    std::vector<std::optional<IndexSpan>> box(rank);
    for (const Access& a : use.accesses) {
      if (a.indices.size() != rank) return MoveWhole(loop, buffer);
      VarRanges varying, all = fixed;
      for (size_t d = depth; d < a.loops.size(); ++d) {
        varying[a.loops[d]->var.get()] = Interval::Extent(a.loops[d]->extent);
        all[a.loops[d]->var.get()] = Interval::Extent(a.loops[d]->extent);
      }
      for (size_t k = 0; k < rank; ++k) {
        Expr index = a.indices[k];
        // A variable that is not a loop around the access has no range.
        if (UsesAnyVar(index,
                       [&](const Expr& v) { return !all.count(v.get()); })) {
          return MoveWhole(loop, buffer);
        }
        absl::StatusOr<IndexSpan> span =
            SpanOfIndex(Simplify(index, all), varying, fixed,
                        FloorDivMin::kSimplifiedInTheSum);
        if (!span.ok()) return MoveWhole(loop, buffer);
        if (!box[k].has_value()) {
          box[k] = *std::move(span);
          continue;
        }
        std::optional<IndexSpan> joined =
            JoinSpans(*box[k], *span, fixed, JoinedMin::kFirstMovedDown);
        if (!joined.has_value()) return MoveWhole(loop, buffer);
        box[k] = *std::move(joined);
      }
    }
    // 4. Dimensions no smaller than the buffer keep their whole range.
    std::vector<int64_t> shape;
    std::vector<Expr> mins;
    bool shrinks = false;
    for (size_t k = 0; k < rank; ++k) {
      int64_t extent = box[k]->width + 1;
      if (extent >= buffer->shape[k]) {
        shape.push_back(buffer->shape[k]);
        mins.push_back(IntImm(0));
      } else {
        shape.push_back(extent);
        mins.push_back(box[k]->min);
        shrinks = true;
      }
    }
    if (!shrinks) return MoveWhole(loop, buffer);
    BufferPtr compact =
        MakeBuffer(buffer->name, buffer->dtype, shape, buffer->scope);
    Rewrite(buffer.get(), compact, mins);
    PlaceIn(loop, compact);
    stats_->compacted.push_back(buffer->name);
    if (compact->scope == BufferScope::kLocal &&
        compact->NumElements() > kLargeLocalElements) {
      stats_->large_local.push_back(buffer->name);
    }
    return true;
  }

  // A buffer whose box is unknown or not smaller than it: a local or shared
  // one still moves, whole, into the loop (each iteration its own copy, which
  // the data-parallel analysis relies on); a global one stays at the root.
  bool MoveWhole(ForNode* loop, const BufferPtr& buffer) {
    if (buffer->scope == BufferScope::kGlobal) return false;
    PlaceIn(loop, buffer);
    stats_->compacted.push_back(buffer->name);
    if (buffer->scope == BufferScope::kLocal &&
        buffer->NumElements() > kLargeLocalElements) {
      stats_->large_local.push_back(buffer->name);
    }
    return true;
  }

  // index - min in every load and store of `old`, which becomes `compact`.
  void Rewrite(const Buffer* old, const BufferPtr& compact,
               const std::vector<Expr>& mins) {
    auto shift = [&](std::vector<Expr> indices) {
      for (size_t k = 0; k < indices.size(); ++k) {
        if (!(mins[k].is_int_imm() && mins[k].int_value() == 0)) {
          // Simplified right away (no ranges needed: the outer terms cancel)
          // so that the pass's own output reads as an offset into the tile.
          indices[k] = Simplify(indices[k] - mins[k]);
        }
      }
      return indices;
    };
    auto rewrite_loads = [&](const Expr& e) {
      return MutateExpr(e, [&](const Expr& x) {
        if (!x.is(ExprKind::kLoad) || x->buffer.get() != old) return x;
        return Load(compact, shift(x->operands));
      });
    };
    VisitStmts(program_->root->body.get(), [&](StmtNode* s) {
      MutateOwnExprs(s, rewrite_loads);
      if (StoreNode* st = s->as<StoreNode>();
          st != nullptr && st->buffer.get() == old) {
        st->buffer = compact;
        st->indices = shift(st->indices);
      }
      return true;
    });
  }

  // An allocation scope directly inside the loop's body (shared by every
  // buffer compacted to that loop).
  void PlaceIn(ForNode* loop, const BufferPtr& buffer) {
    BlockNode* scope = loop->body ? loop->body->as<BlockNode>() : nullptr;
    if (scope == nullptr || !IsAllocScope(*scope)) {
      auto block = std::make_unique<BlockNode>();
      block->name =
          program_->FreshName(absl::StrCat(loop->var->name, "_alloc"));
      block->body = std::move(loop->body);
      scope = block.get();
      loop->body = std::move(block);
    }
    scope->alloc_buffers.push_back(buffer);
  }

  Program* program_;
  CompactStats* stats_;
};

}  // namespace

absl::Status CompactBuffers(Program* program, CompactStats* stats) {
  LATHE_RETURN_IF_ERROR(VerifyLowered(*program));
  CompactStats ignored;
  Compactor(program, stats != nullptr ? stats : &ignored).Run();
  return absl::OkStatus();
}

}  // namespace lathe
