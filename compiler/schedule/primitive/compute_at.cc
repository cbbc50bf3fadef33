// compute_at and ComputeLocations (reverse_compute_at is in
// reverse_compute_at.cc).
//
// The preconditions of compute_at are checked in numbered steps, each its own
// function over the program and a StmtIndex of it, so that ComputeAt runs
// them once in order and ComputeLocations runs the steps that do not depend
// on the loop once and the others per candidate loop, without a copy of the
// program per candidate.
#include "compiler/schedule/primitive/compute_at.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/arith/simplify.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/schedule/analysis/block_motion.h"
#include "compiler/schedule/analysis/data_parallel.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/analysis/region.h"
#include "compiler/schedule/analysis/stmt_index.h"
#include "compiler/schedule/instruction_kind.h"

namespace lathe::primitive {
namespace {

// Builds the FailedPrecondition of a step from its reason.
using Fail = std::function<absl::Status(const std::string&)>;

// What compute_at needs to know of the block, whatever the loop (step 2).
struct Producer {
  BlockNode* block = nullptr;
  BufferPtr buffer;           // the one buffer it writes
  std::vector<Expr> pattern;  // InjectiveWriteIndices
  std::set<const Buffer*> reads;
  std::vector<int> spatial;  // indices of its spatial iteration variables
  std::vector<Expr> spatial_vars;
};

// Where the block goes under the loop (step 5): the range of each iteration
// variable, and the ranges of the loops at and above the loop.
struct Placement {
  std::vector<RegionDim> iter_ranges;
  VarRanges fixed;
};

// 1. Where the block and the loop are.
absl::Status CheckWhere(const StmtIndex& index, const BlockNode* block,
                        const ForNode* loop, const Fail& fail) {
  if (index.Contains(block, loop)) return fail("the loop is inside the block");
  if (index.EnclosingBlock(block) != index.EnclosingBlock(loop)) {
    return fail("they are not in the same block");
  }
  return absl::OkStatus();
}

// 2. What the block writes: one buffer, at indices that tell which instance
// wrote an element (its spatial variables, or a packed layout of them).
absl::StatusOr<Producer> CheckProducer(const Program& program,
                                       const StmtIndex& index, BlockNode* block,
                                       const Fail& fail) {
  Producer p;
  p.block = block;
  const BlockAccesses& accesses = index.AccessesOf(block);
  if (accesses.writes.empty()) return fail("it writes nothing");
  p.buffer = accesses.writes[0].buffer;
  absl::StatusOr<std::vector<Expr>> pattern =
      InjectiveWriteIndices(*block, *p.buffer);
  if (!pattern.ok()) return fail(std::string(pattern.status().message()));
  p.pattern = *std::move(pattern);
  if (program.IsOutput(p.buffer.get())) {
    return fail(absl::StrCat("it writes ", p.buffer->name,
                             ", an output of the program"));
  }
  if (!BodyUsesOnlyIterVars(*block)) {
    return fail("its body uses variables other than its iteration variables");
  }
  if (!PredicateOnlyClipsDomain(program, *block)) {
    return fail(absl::StrCat("its predicate ", block->predicate.ToString(),
                             " does more than clip its domain"));
  }
  for (BlockNode* writer : index.WritersOf(p.buffer.get())) {
    if (writer != block) {
      return fail(absl::StrCat("block \"", writer->name, "\" also writes ",
                               p.buffer->name));
    }
  }
  for (const BufferAccess& r : accesses.reads) p.reads.insert(r.buffer.get());
  for (size_t j = 0; j < block->iter_vars.size(); ++j) {
    if (block->iter_vars[j].type != IterType::kSpatial) continue;
    p.spatial.push_back(static_cast<int>(j));
    p.spatial_vars.push_back(block->iter_vars[j].var);
  }
  return p;
}

// 3. Every consumer is under the loop and after the block.
absl::StatusOr<std::vector<BlockNode*>> CheckConsumers(const StmtIndex& index,
                                                       const Producer& p,
                                                       const ForNode* loop,
                                                       const Fail& fail) {
  std::vector<BlockNode*> consumers;
  for (BlockNode* reader : index.ReadersOf(p.buffer.get())) {
    if (reader == p.block) continue;
    std::vector<ForNode*> loops = index.LoopsAbove(reader);
    if (std::find(loops.begin(), loops.end(), loop) == loops.end()) {
      return fail(
          absl::StrCat("consumer \"", reader->name, "\" is not under it"));
    }
    if (!index.ComesBefore(p.block, reader)) {
      return fail(
          absl::StrCat("consumer \"", reader->name, "\" runs before it"));
    }
    consumers.push_back(reader);
  }
  if (consumers.empty())
    return fail(absl::StrCat("nothing reads ", p.buffer->name));
  return consumers;
}

// 4. Dependences: nothing that may now run between the block's old and new
// instances writes what the block reads.
absl::Status CheckInterleaved(const StmtIndex& index, const Producer& p,
                              const ForNode* loop, const Fail& fail) {
  for (BlockNode* other : index.BlocksInterleaved(p.block, loop)) {
    for (const BufferAccess& w : index.AccessesOf(other).writes) {
      if (p.reads.count(w.buffer.get()) && other != p.block) {
        return fail(absl::StrCat("block \"", other->name, "\" writes ",
                                 w.buffer->name,
                                 ", which the block reads, in between"));
      }
    }
  }
  return absl::OkStatus();
}

// 5. The instances the consumers need in one iteration of the loop: each
// read, matched against the block's writes, names the instance that wrote
// the element; the region of those instances' spatial variables. Spatial
// variables cover the region, reduction variables their whole extent.
absl::StatusOr<Placement> PlanPlacement(
    const StmtIndex& index, const Producer& p, const ForNode* loop,
    const std::vector<BlockNode*>& consumers, const Fail& fail) {
  Placement plan;
  plan.fixed = index.LoopRangesAbove(loop);
  plan.fixed[loop->var.get()] = Interval::Extent(loop->extent);
  std::optional<Region> needed;
  for (BlockNode* consumer : consumers) {
    for (const BufferAccess& read : index.AccessesOf(consumer).reads) {
      if (read.buffer.get() != p.buffer.get()) continue;
      absl::StatusOr<VarMap> instance =
          MatchWriteIndices(p.pattern, *p.block, read.indices);
      if (!instance.ok()) {
        return fail(absl::StrCat("consumer \"", consumer->name, "\" reads ",
                                 p.buffer->name, " at ",
                                 instance.status().message()));
      }
      std::vector<Expr> values;
      for (const Expr& v : p.spatial_vars) values.push_back(instance->at(v));
      absl::StatusOr<Region> region =
          IndicesRegionUnderLoop(*consumer, loop, index.LoopsAbove(consumer),
                                 index.LoopRangesAbove(consumer), values);
      if (!region.ok()) return fail(std::string(region.status().message()));
      if (!needed.has_value()) {
        needed = *std::move(region);
        continue;
      }
      absl::StatusOr<Region> joined =
          UnionRegions(*needed, *region, plan.fixed);
      if (!joined.ok()) return fail(std::string(joined.status().message()));
      needed = *std::move(joined);
    }
  }
  for (const IterVar& iv : p.block->iter_vars)
    plan.iter_ranges.push_back({IntImm(0), iv.extent});
  for (size_t k = 0; k < p.spatial.size(); ++k)
    plan.iter_ranges[p.spatial[k]] = needed->dims[k];
  return plan;
}

// Whether RemoveStmt(program, stmt) succeeds: it removes stmt and the
// ancestors it leaves empty, and fails at the root or the branch of an If.
bool Removable(const StmtIndex& index, const StmtNode* stmt) {
  for (const StmtNode* s = stmt;;) {
    const StmtNode* parent = index.ParentOf(s);
    if (parent == nullptr) return false;
    switch (parent->kind) {
      case StmtKind::kFor:
        s = parent;  // left empty
        continue;
      case StmtKind::kSeq:
        if (parent->as<SeqNode>()->stmts.size() > 1) return true;
        s = parent;  // left empty
        continue;
      case StmtKind::kBlock:
        return true;
      default:
        return false;
    }
  }
}

// Whether a loop whose iterations run at once (parallel, vectorized,
// thread-bound) is or encloses `loop`: only then can step 7 refuse.
bool UnderConcurrentLoop(const StmtIndex& index, const ForNode* loop) {
  for (const StmtNode* p = loop; p != nullptr; p = index.ParentOf(p)) {
    const auto* f = p->as<ForNode>();
    if (f != nullptr && (f->for_kind == ForKind::kParallel ||
                         f->for_kind == ForKind::kVectorized ||
                         f->for_kind == ForKind::kThreadBinding)) {
      return true;
    }
  }
  return false;
}

// Every name `program` uses (FreshName's set): parameters, loops, blocks,
// iteration variables, allocated buffers.
std::set<std::string> UsedNames(const Program& program) {
  std::set<std::string> used;
  for (const BufferPtr& b : program.Params()) used.insert(b->name);
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               if (const auto* f = s->as<ForNode>()) used.insert(f->var->name);
               if (const auto* b = s->as<BlockNode>()) {
                 used.insert(b->name);
                 for (const IterVar& iv : b->iter_vars)
                   used.insert(iv.var->name);
                 for (const BufferPtr& buf : b->alloc_buffers)
                   used.insert(buf->name);
               }
               return true;
             });
  return used;
}

// A program that uses exactly the names in `used` that begin with `prefix`
// (as iteration variables of its root): its FreshName answers as that of a
// program using all of `used` for names that begin with `prefix`, without a
// walk of a whole program per call.
Program NamesWithPrefix(const std::set<std::string>& used,
                        const std::string& prefix) {
  Program names;
  names.root = std::make_unique<BlockNode>();  // its name "" is never asked for
  for (auto it = used.lower_bound(prefix);
       it != used.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
    names.root->iter_vars.push_back(IterVar{Var(*it), 1, IterType::kSpatial});
  }
  return names;
}

// The names of the loops of a nest, outermost first.
std::vector<std::string> NestLoopNames(const StmtNode* nest) {
  std::vector<std::string> names;
  for (const auto* f = nest->as<ForNode>(); f != nullptr;
       f = f->body->as<ForNode>()) {
    names.push_back(f->var->name);
  }
  return names;
}

// The block moved under candidate loops of one working copy of the program,
// for step 7. The copy is made once: the block is removed from it (its
// removal does not depend on the loop), every other block left as ComputeAt
// leaves it. Each trial then inserts the block's new nest under the loop,
// runs the check and takes the nest out again, so the copy is back as it
// was; what the check sees is exactly the program ComputeAt would produce.
class TrialProgram {
 public:
  TrialProgram(const Program& program, const std::string& block)
      : work_(program) {
    BlockNode* b = work_.FindBlock(block);
    moved_ = CloneBlock(*b);
    absl::Status removed = RemoveStmt(&work_, b);
    LATHE_CHECK(removed.ok(), "compute_at: block \"", block,
                "\" was found removable but: ", removed.message());
    // ComputeAt simplifies the inserted nest alone (Check below does the
    // same); the other blocks stay as they are.
    ranges_ = AllLoopRanges(work_);
    index_.emplace(work_);
    used_ = UsedNames(work_);
    ax_names_ = NamesWithPrefix(used_, "ax");
  }

  // BuildBlockNest(work_, the block, plan). It names the new loops by
  // asking FreshName, which collects every name of the copy per call,
  // whether ax0, ax0_1, ..., ax1, ... are used; a program that holds only
  // the copy's names beginning with "ax" gives the same answers, as long as
  // those are the names asked. They are: a name accepted (answered "not
  // used") is checked against all the copy's names, and a name refused is
  // used in the copy too. Should the check fail (BuildBlockNest naming loops
  // otherwise), the copy itself is asked. With every loop kept, the names
  // asked do not depend on the plan, so one check serves every trial.
  StmtPtr Nest(const Placement& plan) {
    auto build = [&](const Program& names) {
      return BuildBlockNest(names, CloneBlock(*moved_), plan.iter_ranges,
                            plan.fixed, /*preserve_unit_loops=*/true);
    };
    if (!names_checked_) {
      names_checked_ = true;
      StmtPtr nest = build(ax_names_);
      use_ax_names_ = true;
      for (const std::string& name : NestLoopNames(nest.get())) {
        if (used_.count(name)) use_ax_names_ = false;
      }
      if (use_ax_names_) return nest;
    }
    return build(use_ax_names_ ? ax_names_ : work_);
  }

  // Steps 6 and 7 of ComputeAt (preserve_unit_loops, as ComputeLocations
  // tries), on the working copy.
  absl::Status Check(const std::string& loop_name, const Placement& plan) {
    ForNode* loop = work_.FindLoop(loop_name);
    LATHE_CHECK(loop != nullptr, "compute_at: loop \"", loop_name,
                "\" is not in the working copy");
    StmtPtr nest = Nest(plan);
    // SimplifyBindings on the moved block: the ranges of every loop of the
    // program, the nest's included.
    VarRanges ranges = ranges_;
    StmtNode* s = nest.get();
    while (auto* f = s->as<ForNode>()) {
      ranges[f->var.get()] = Interval::Extent(f->extent);
      s = f->body.get();
    }
    auto* block = s->as<BlockNode>();
    LATHE_CHECK(block != nullptr, "compute_at: a nest without its block");
    for (Expr& v : block->iter_values) v = Simplify(v, ranges);
    block->predicate = Simplify(block->predicate, ranges);
    const bool was_seq = loop->body != nullptr && loop->body->as<SeqNode>();
    PrependToLoop(loop, std::move(nest));
    // CheckConcurrentLoopsAround(work_, loop->body): the loop and those
    // around it, whose places the insertion did not change (the index
    // knows them).
    absl::Status concurrent = absl::OkStatus();
    for (const StmtNode* p = loop; p != nullptr && concurrent.ok();
         p = index_->ParentOf(p)) {
      const auto* f = p->as<ForNode>();
      if (f == nullptr) continue;
      const char* what = f->for_kind == ForKind::kParallel        ? "parallel"
                         : f->for_kind == ForKind::kVectorized    ? "vectorize"
                         : f->for_kind == ForKind::kThreadBinding ? "bind"
                                                                  : nullptr;
      if (what != nullptr) concurrent = CheckDataParallel(work_, *f, what);
    }
    // Undo PrependToLoop.
    auto* seq = loop->body->as<SeqNode>();
    if (was_seq) {
      seq->stmts.erase(seq->stmts.begin());
    } else {
      StmtPtr old = std::move(seq->stmts[1]);
      loop->body = std::move(old);
    }
    return concurrent;
  }

 private:
  Program work_;
  std::unique_ptr<BlockNode> moved_;
  VarRanges ranges_;
  std::set<std::string> used_;  // UsedNames(work_)
  Program ax_names_;            // NamesWithPrefix(used_, "ax")
  bool names_checked_ = false;
  bool use_ax_names_ = false;
  std::optional<StmtIndex> index_;  // of work_ without a nest
};

}  // namespace

absl::Status ComputeAt(Program* program, const std::string& block_name,
                       const std::string& loop_name, bool preserve_unit_loops) {
  BlockNode* block = program->FindBlock(block_name);
  if (block == nullptr || block == program->root.get()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compute_at: no block named \"", block_name, "\""));
  }
  ForNode* loop = program->FindLoop(loop_name);
  if (loop == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("compute_at: no loop named \"", loop_name, "\""));
  }
  Fail fail = [&](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compute_at: block \"", block_name, "\" cannot be computed at loop \"",
        loop_name, "\": ", why));
  };
  Placement plan;
  {
    // The index is only valid until step 6 edits the tree.
    const StmtIndex index(*program);
    LATHE_RETURN_IF_ERROR(CheckWhere(index, block, loop, fail));
    LATHE_ASSIGN_OR_RETURN(Producer producer,
                           CheckProducer(*program, index, block, fail));
    LATHE_ASSIGN_OR_RETURN(std::vector<BlockNode*> consumers,
                           CheckConsumers(index, producer, loop, fail));
    LATHE_RETURN_IF_ERROR(CheckInterleaved(index, producer, loop, fail));
    LATHE_ASSIGN_OR_RETURN(
        plan, PlanPlacement(index, producer, loop, consumers, fail));
  }
  // 6. The block moves into new loops at the front of the loop's body.
  std::unique_ptr<BlockNode> moved = CloneBlock(*block);
  LATHE_RETURN_IF_ERROR(RemoveStmt(program, block));
  StmtPtr nest = BuildBlockNest(*program, std::move(moved), plan.iter_ranges,
                                plan.fixed, preserve_unit_loops);
  StmtNode* const moved_nest = nest.get();
  PrependToLoop(loop, std::move(nest));
  SimplifyBindings(program, moved_nest);
  // 7. Loops that run iterations at once must still be data-parallel.
  absl::Status concurrent =
      CheckConcurrentLoopsAround(*program, loop->body.get());
  if (!concurrent.ok()) return fail(std::string(concurrent.message()));
  return absl::OkStatus();
}

std::vector<std::string> ComputeLocations(const Program& program,
                                          const std::string& block_name,
                                          size_t max_count) {
  BlockNode* block = program.FindBlock(block_name);
  if (block == nullptr || block == program.root.get() || max_count == 0) {
    return {};
  }
  const StmtIndex index(program);
  // Candidates: the loops above the block's consumers, in program order.
  std::set<ForNode*> candidates;
  for (const BufferPtr& written : BuffersWritten(*block)) {
    for (BlockNode* reader : index.ReadersOf(written.get())) {
      if (reader == block) continue;
      for (ForNode* l : index.LoopsAbove(reader)) candidates.insert(l);
    }
  }
  std::vector<ForNode*> ordered(candidates.begin(), candidates.end());
  std::sort(ordered.begin(), ordered.end(),
            [&](const ForNode* a, const ForNode* b) {
              return index.ComesBefore(a, b);
            });
  // Each candidate goes through the steps of ComputeAt with
  // preserve_unit_loops; the reasons are not kept.
  Fail fail = [](const std::string&) {
    return absl::FailedPreconditionError("");
  };
  // 2 and the RemoveStmt of 6 do not depend on the loop.
  absl::StatusOr<Producer> producer =
      CheckProducer(program, index, block, fail);
  if (!producer.ok() || !Removable(index, block)) return {};
  std::optional<TrialProgram> trial;
  std::vector<std::string> locations;
  for (ForNode* loop : ordered) {
    if (!CheckWhere(index, block, loop, fail).ok()) continue;
    absl::StatusOr<std::vector<BlockNode*>> consumers =
        CheckConsumers(index, *producer, loop, fail);
    if (!consumers.ok()) continue;
    if (!CheckInterleaved(index, *producer, loop, fail).ok()) continue;
    absl::StatusOr<Placement> plan =
        PlanPlacement(index, *producer, loop, *consumers, fail);
    if (!plan.ok()) continue;
    // Step 6 cannot fail now, and step 7 only checks the concurrent loops
    // at and around the loop: without one, the location is valid.
    if (UnderConcurrentLoop(index, loop)) {
      if (!trial.has_value()) trial.emplace(program, block_name);
      if (!trial->Check(loop->var->name, *plan).ok()) continue;
    }
    locations.push_back(loop->var->name);
    if (locations.size() >= max_count) break;
  }
  return locations;
}

}  // namespace lathe::primitive

namespace lathe {

const InstructionKind& ComputeAtInstruction() {
  // Inputs: the block and the loop. Attribute: preserve_unit_loops (0 or 1).
  static const auto* const kind =
      new InstructionKind{"compute_at",
                          {"preserve_unit_loops"},
                          /*samples=*/false,
                          [](const ReplayContext& c) -> absl::Status {
                            LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
                            LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(1));
                            LATHE_ASSIGN_OR_RETURN(int64_t keep, c.IntAttr(0));
                            return c.sch->ComputeAt(block, loop, keep != 0);
                          }};
  return *kind;
}

absl::Status ConcreteSchedule::ComputeAt(BlockRV block, LoopRV loop,
                                         bool preserve_unit_loops) {
  // The "stay" location moves nothing, and is recorded all the same.
  if (!IsStayLocation(loop)) {
    LATHE_ASSIGN_OR_RETURN(std::string b, BlockName(block));
    LATHE_ASSIGN_OR_RETURN(std::string l, LoopName(loop));
    LATHE_RETURN_IF_ERROR(Apply([&](Program* p) {
      return primitive::ComputeAt(p, b, l, preserve_unit_loops);
    }));
  }
  Record(ComputeAtInstruction(), {InputOf(block), InputOf(loop)},
         {int64_t{preserve_unit_loops}}, {});
  return absl::OkStatus();
}

}  // namespace lathe
