#include "tuner/features/store_context.h"

#include <algorithm>

#include "compiler/ir/expr_equal.h"
#include "compiler/ir/expr_functor.h"
#include "tuner/features/access_geometry.h"

namespace lathe::tuner {
namespace {

void AddAccess(StoreContext* ctx, const BufferPtr& buffer,
               const std::vector<Expr>& indices, bool is_write) {
  BufferUse* use = nullptr;
  for (BufferUse& u : ctx->buffers) {
    if (u.buffer.get() == buffer.get()) use = &u;
  }
  if (use == nullptr) {
    ctx->buffers.emplace_back();
    use = &ctx->buffers.back();
    use->buffer = buffer;
  }
  (is_write ? use->write : use->read) = true;
  ++use->num_accesses;
  // The read and the write of `C[i, j] = C[i, j] + ...` are one pattern.
  for (const std::vector<Expr>& t : use->index_tuples) {
    if (ExprsEqual(t, indices, FloatImmEquality::kByBits)) return;
  }
  use->index_tuples.push_back(indices);
}

double ExtentProduct(const std::vector<LoopFrame>& loops) {
  double p = 1;
  for (const LoopFrame& l : loops) p *= static_cast<double>(l.extent);
  return p;
}

class Walker {
 public:
  explicit Walker(ProgramWalk* out) : out_(out) {}

  void Walk(const StmtNode* stmt) {
    if (stmt == nullptr) return;
    switch (stmt->kind) {
      case StmtKind::kFor:
        WalkFor(*stmt->as<ForNode>());
        break;
      case StmtKind::kSeq:
        for (const StmtPtr& s : stmt->as<SeqNode>()->stmts) Walk(s.get());
        break;
      case StmtKind::kIf: {
        const IfNode& node = *stmt->as<IfNode>();
        WalkGuarded(node.cond, node.then_case.get());
        if (node.else_case != nullptr)
          WalkGuarded(Not(node.cond), node.else_case.get());
        break;
      }
      case StmtKind::kBlock:
        WalkBlock(*stmt->as<BlockNode>());
        break;
      case StmtKind::kStore:
        AddStore(*stmt->as<StoreNode>());
        break;
    }
  }

 private:
  void WalkFor(const ForNode& node) {
    ++out_->num_loops;
    if (loops_.empty()) ++out_->num_loop_nests;
    if (node.for_kind == ForKind::kParallel) {
      out_->parallel_launches += ExtentProduct(loops_) * GuardProduct();
    }
    loops_.push_back({&node, std::max<int64_t>(1, node.extent), node.for_kind});
    ranges_[node.var.get()] = Interval::Extent(loops_.back().extent);
    Walk(node.body.get());
    ranges_.erase(node.var.get());
    loops_.pop_back();
  }

  void WalkGuarded(const Expr& cond, const StmtNode* body) {
    guards_.push_back(cond);
    guard_shares_.push_back(EstimateGuardFraction(cond, ranges_));
    Walk(body);
    guard_shares_.pop_back();
    guards_.pop_back();
  }

  void WalkBlock(const BlockNode& block) {
    for (const BufferPtr& b : block.alloc_buffers) {
      AllocationSite site;
      site.buffer = b;
      site.loops = loops_;
      site.executions = ExtentProduct(loops_) * GuardProduct();
      out_->allocations.push_back(std::move(site));
    }
    // Not lowered: the predicate guards the instance, and the init runs
    // before the body (how often is unknown here; counted like the body).
    const bool guarded =
        !(block.predicate.is_int_imm() && block.predicate.int_value() != 0);
    if (guarded) {
      guards_.push_back(block.predicate);
      guard_shares_.push_back(EstimateGuardFraction(block.predicate, ranges_));
    }
    Walk(block.init.get());
    Walk(block.body.get());
    if (guarded) {
      guard_shares_.pop_back();
      guards_.pop_back();
    }
  }

  void AddStore(const StoreNode& store) {
    StoreContext ctx;
    ctx.store = &store;
    ctx.loops = loops_;
    ctx.guards = guards_;
    ctx.guard_fraction = GuardProduct();
    ctx.executions = ExtentProduct(loops_) * ctx.guard_fraction;
    AddAccess(&ctx, store.buffer, store.indices, /*is_write=*/true);
    auto add_load = [&ctx](const Expr& e) {
      if (e.is(ExprKind::kLoad))
        AddAccess(&ctx, e->buffer, e->operands, /*is_write=*/false);
    };
    for (const Expr& index : store.indices) VisitExpr(index, add_load);
    VisitExpr(store.value, add_load);
    for (BufferUse& use : ctx.buffers) {
      for (const AllocationSite& site : out_->allocations) {
        if (site.buffer.get() == use.buffer.get()) use.allocated = true;
      }
    }
    ComputeAccessGeometry(&ctx);
    out_->stores.push_back(std::move(ctx));
  }

  double GuardProduct() const {
    double p = 1;
    for (double s : guard_shares_) p *= s;
    return p;
  }

  ProgramWalk* out_;
  std::vector<LoopFrame> loops_;
  std::vector<Expr> guards_;
  std::vector<double> guard_shares_;
  VarRanges ranges_;
};

// The share of the integer interval [lo, hi] on which `diff OP 0` holds.
double ComparisonShare(ExprKind kind, double lo, double hi) {
  const double n = hi - lo + 1;
  auto count = [&](double from, double to) {
    return std::max(0.0, to - from + 1);
  };
  double holds = 0;
  switch (kind) {
    case ExprKind::kEq:
      holds = (lo <= 0 && 0 <= hi) ? 1 : 0;
      break;
    case ExprKind::kNe:
      holds = n - ((lo <= 0 && 0 <= hi) ? 1 : 0);
      break;
    case ExprKind::kLt:
      holds = count(lo, std::min(hi, -1.0));
      break;
    case ExprKind::kLe:
      holds = count(lo, std::min(hi, 0.0));
      break;
    case ExprKind::kGt:
      holds = count(std::max(lo, 1.0), hi);
      break;
    case ExprKind::kGe:
      holds = count(std::max(lo, 0.0), hi);
      break;
    default:
      return 1;
  }
  return std::clamp(holds / n, 0.0, 1.0);
}

}  // namespace

double EstimateGuardFraction(const Expr& cond, const VarRanges& ranges) {
  if (!cond.defined()) return 1;
  switch (cond.kind()) {
    case ExprKind::kIntImm:
      return cond.int_value() != 0 ? 1 : 0;
    case ExprKind::kAnd:
      return EstimateGuardFraction(cond.operand(0), ranges) *
             EstimateGuardFraction(cond.operand(1), ranges);
    case ExprKind::kOr: {
      double a = EstimateGuardFraction(cond.operand(0), ranges);
      double b = EstimateGuardFraction(cond.operand(1), ranges);
      return std::clamp(a + b - a * b, 0.0, 1.0);
    }
    case ExprKind::kNot:
      return 1 - EstimateGuardFraction(cond.operand(0), ranges);
    default:
      break;
  }
  if (!IsComparison(cond.kind()) || !cond.operand(0).dtype().is_int() ||
      !cond.operand(1).dtype().is_int()) {
    return 1;
  }
  Interval diff = BoundOf(cond.operand(0) - cond.operand(1), ranges);
  if (!diff.is_bounded()) return 1;
  return ComparisonShare(cond.kind(), static_cast<double>(diff.min),
                         static_cast<double>(diff.max));
}

ProgramWalk WalkProgram(const Program& lowered) {
  ProgramWalk walk;
  Walker(&walk).Walk(lowered.root.get());
  return walk;
}

}  // namespace lathe::tuner
