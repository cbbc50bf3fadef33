#include "compiler/schedule/replay.h"

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace lathe {

namespace {

// What an instruction's handler sees: its inputs already mapped to handles of
// the schedule being built, and the decision to use (if any).
class ReplayContext {
 public:
  ReplayContext(TracedSchedule* sch, const Instruction& inst,
                std::map<int64_t, int64_t>* rv_map,
                const std::vector<int64_t>* decision)
      : sch(sch), inst(inst), decision(decision), rv_map_(rv_map) {}

  TracedSchedule* sch;
  const Instruction& inst;

  absl::StatusOr<int64_t> Rv(size_t i) const {
    if (i >= inst.inputs.size() ||
        inst.inputs[i].kind != TraceInput::Kind::kRV) {
      return absl::InvalidArgumentError(
          absl::StrCat(inst.kind, ": input ", i, " must be a random variable"));
    }
    auto it = rv_map_->find(inst.inputs[i].value);
    if (it == rv_map_->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          inst.kind, ": r", inst.inputs[i].value, " is not defined"));
    }
    return it->second;
  }
  absl::StatusOr<BlockRV> Block(size_t i) const {
    LATHE_ASSIGN_OR_RETURN(int64_t id, Rv(i));
    return BlockRV{id};
  }
  absl::StatusOr<LoopRV> Loop(size_t i) const {
    LATHE_ASSIGN_OR_RETURN(int64_t id, Rv(i));
    return LoopRV{id};
  }
  absl::StatusOr<std::vector<LoopRV>> AllLoops() const {
    std::vector<LoopRV> loops;
    for (size_t i = 0; i < inst.inputs.size(); ++i) {
      LATHE_ASSIGN_OR_RETURN(LoopRV l, Loop(i));
      loops.push_back(l);
    }
    return loops;
  }
  absl::StatusOr<Factor> FactorAt(size_t i) const {
    const TraceInput& in = inst.inputs[i];
    if (in.kind == TraceInput::Kind::kInt) return Factor(in.value);
    if (in.kind == TraceInput::Kind::kNone) return Factor(std::monostate{});
    LATHE_ASSIGN_OR_RETURN(int64_t id, Rv(i));
    return Factor(ExprRV{id});
  }
  // Maps the instruction's recorded outputs to the new handles.
  absl::Status Outputs(const std::vector<int64_t>& ids) const {
    if (ids.size() != inst.outputs.size()) {
      return absl::FailedPreconditionError(
          absl::StrCat(inst.kind, ": produced ", ids.size(),
                       " results where the trace has ", inst.outputs.size()));
    }
    for (size_t i = 0; i < ids.size(); ++i)
      (*rv_map_)[inst.outputs[i]] = ids[i];
    return absl::OkStatus();
  }

  const std::vector<int64_t>* decision;

 private:
  std::map<int64_t, int64_t>* rv_map_;
};

template <typename RV>
std::vector<int64_t> Ids(const std::vector<RV>& rvs) {
  std::vector<int64_t> ids;
  for (const RV& rv : rvs) ids.push_back(rv.id);
  return ids;
}

absl::StatusOr<AnnotationValue> AnnotationAttr(const Instruction& inst) {
  LATHE_ASSIGN_OR_RETURN(AttrValue v, inst.Attr("value"));
  if (const auto* i = std::get_if<int64_t>(&v)) return AnnotationValue(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return AnnotationValue(*s);
  return absl::InvalidArgumentError(
      absl::StrCat(inst.kind, ": value must be an integer or a string"));
}

Layout LayoutAttr(const Instruction& inst) {
  Layout layout;
  if (auto s = inst.IntsAttr("layout_splits"); s.ok()) layout.splits = *s;
  if (auto p = inst.IntsAttr("layout_permutation"); p.ok())
    layout.permutation = *p;
  return layout;
}

using Handler = std::function<absl::Status(const ReplayContext&)>;

const std::map<std::string, Handler>& Handlers() {
  static const auto* handlers = new std::map<std::string, Handler>{
      {"get_block",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(std::string name, c.inst.StringAttr("name"));
         LATHE_ASSIGN_OR_RETURN(BlockRV b, c.sch->GetBlock(name));
         return c.Outputs({b.id});
       }},
      {"get_loops",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV b, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, c.sch->GetLoops(b));
         return c.Outputs(Ids(loops));
       }},
      {"get_producers",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV b, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> blocks,
                                c.sch->GetProducers(b));
         return c.Outputs(Ids(blocks));
       }},
      {"get_consumers",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV b, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(std::vector<BlockRV> blocks,
                                c.sch->GetConsumers(b));
         return c.Outputs(Ids(blocks));
       }},
      {"split",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         std::vector<Factor> factors;
         for (size_t i = 1; i < c.inst.inputs.size(); ++i) {
           LATHE_ASSIGN_OR_RETURN(Factor f, c.FactorAt(i));
           factors.push_back(f);
         }
         LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops,
                                c.sch->Split(loop, factors));
         return c.Outputs(Ids(loops));
       }},
      {"fuse",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, c.AllLoops());
         LATHE_ASSIGN_OR_RETURN(LoopRV fused, c.sch->Fuse(loops));
         return c.Outputs({fused.id});
       }},
      {"reorder",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, c.AllLoops());
         return c.sch->Reorder(loops);
       }},
      {"parallel",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         return c.sch->Parallel(loop);
       }},
      {"vectorize",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         return c.sch->Vectorize(loop);
       }},
      {"unroll",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         return c.sch->Unroll(loop);
       }},
      {"bind",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         LATHE_ASSIGN_OR_RETURN(std::string axis,
                                c.inst.StringAttr("thread_axis"));
         return c.sch->Bind(loop, axis);
       }},
      {"annotate_loop",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         LATHE_ASSIGN_OR_RETURN(std::string key, c.inst.StringAttr("key"));
         LATHE_ASSIGN_OR_RETURN(AnnotationValue value, AnnotationAttr(c.inst));
         return c.sch->AnnotateLoop(loop, key, value);
       }},
      {"annotate_block",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(std::string key, c.inst.StringAttr("key"));
         LATHE_ASSIGN_OR_RETURN(AnnotationValue value, AnnotationAttr(c.inst));
         return c.sch->AnnotateBlock(block, key, value);
       }},
      {"cache_read",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(int64_t index, c.inst.IntAttr("read_index"));
         LATHE_ASSIGN_OR_RETURN(std::string scope, c.inst.StringAttr("scope"));
         LATHE_ASSIGN_OR_RETURN(
             BlockRV created,
             c.sch->CacheRead(block, index, scope, LayoutAttr(c.inst)));
         return c.Outputs({created.id});
       }},
      {"cache_write",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(int64_t index, c.inst.IntAttr("write_index"));
         LATHE_ASSIGN_OR_RETURN(std::string scope, c.inst.StringAttr("scope"));
         LATHE_ASSIGN_OR_RETURN(
             BlockRV created,
             c.sch->CacheWrite(block, index, scope, LayoutAttr(c.inst)));
         return c.Outputs({created.id});
       }},
      {"compute_at",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(1));
         LATHE_ASSIGN_OR_RETURN(int64_t keep,
                                c.inst.IntAttr("preserve_unit_loops"));
         return c.sch->ComputeAt(block, loop, keep != 0);
       }},
      {"reverse_compute_at",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(1));
         LATHE_ASSIGN_OR_RETURN(int64_t keep,
                                c.inst.IntAttr("preserve_unit_loops"));
         return c.sch->ReverseComputeAt(block, loop, keep != 0);
       }},
      {"compute_inline",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         return c.sch->ComputeInline(block);
       }},
      {"reverse_compute_inline",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         return c.sch->ReverseComputeInline(block);
       }},
      {"decompose_reduction",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(1));
         LATHE_ASSIGN_OR_RETURN(BlockRV init,
                                c.sch->DecomposeReduction(block, loop));
         return c.Outputs({init.id});
       }},
      {"rfactor",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         LATHE_ASSIGN_OR_RETURN(int64_t axis, c.inst.IntAttr("factor_axis"));
         LATHE_ASSIGN_OR_RETURN(BlockRV rf, c.sch->RFactor(loop, axis));
         return c.Outputs({rf.id});
       }},
      {"sample_perfect_tile",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
         LATHE_ASSIGN_OR_RETURN(int64_t n, c.inst.IntAttr("n"));
         LATHE_ASSIGN_OR_RETURN(int64_t max_innermost,
                                c.inst.IntAttr("max_innermost"));
         std::optional<std::vector<int64_t>> decision;
         if (c.decision) decision = *c.decision;
         LATHE_ASSIGN_OR_RETURN(
             std::vector<ExprRV> factors,
             c.sch->SamplePerfectTile(loop, n, max_innermost, decision));
         return c.Outputs(Ids(factors));
       }},
      {"sample_categorical",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> candidates,
                                c.inst.IntsAttr("candidates"));
         LATHE_ASSIGN_OR_RETURN(std::vector<double> probs,
                                c.inst.FloatsAttr("probs"));
         std::optional<int64_t> decision;
         if (c.decision) {
           if (c.decision->size() != 1) {
             return absl::InvalidArgumentError(
                 "sample_categorical: a decision is one index");
           }
           decision = (*c.decision)[0];
         }
         LATHE_ASSIGN_OR_RETURN(
             ExprRV v, c.sch->SampleCategorical(candidates, probs, decision));
         return c.Outputs({v.id});
       }},
      {"sample_compute_location",
       [](const ReplayContext& c) -> absl::Status {
         LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
         std::optional<int64_t> decision;
         if (c.decision) {
           if (c.decision->size() != 1) {
             return absl::InvalidArgumentError(
                 "sample_compute_location: a decision is one index");
           }
           decision = (*c.decision)[0];
         }
         LATHE_ASSIGN_OR_RETURN(LoopRV loop,
                                c.sch->SampleComputeLocation(block, decision));
         return c.Outputs({loop.id});
       }},
  };
  return *handlers;
}

}  // namespace

std::vector<std::string> InstructionKinds() {
  std::vector<std::string> kinds;
  for (const auto& [kind, handler] : Handlers()) kinds.push_back(kind);
  return kinds;
}

absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program, const Decisions& decisions,
    uint64_t seed) {
  auto sch = std::make_unique<TracedSchedule>(program, seed);
  sch->mutable_trace().workload = trace.workload;
  std::map<int64_t, int64_t> rv_map;
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    const Instruction& inst = trace.instructions[i];
    auto handler = Handlers().find(inst.kind);
    if (handler == Handlers().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replay: instruction ", i, " has unknown kind \"", inst.kind, "\""));
    }
    auto d = decisions.find(static_cast<int64_t>(i));
    ReplayContext context(sch.get(), inst, &rv_map,
                          d == decisions.end() ? nullptr : &d->second);
    absl::Status status = handler->second(context);
    if (!status.ok()) {
      Trace one;
      one.instructions.push_back(inst);
      std::string text = one.ToText();
      if (!text.empty() && text.back() == '\n') text.pop_back();
      return absl::Status(status.code(),
                          absl::StrCat("replay: instruction ", i, " `", text,
                                       "`: ", status.message()));
    }
  }
  return sch;
}

absl::StatusOr<std::unique_ptr<TracedSchedule>> ReplayTrace(
    const Trace& trace, const Program& program) {
  return ReplayTrace(trace, program, trace.decisions, /*seed=*/0);
}

}  // namespace lathe
