// Tests of the default schedule (compiler/schedule/default_schedule.h): for
// every registered operator at two shapes (odd and prime extents included)
// and vector widths 16, 8 and 4, the default trace replays to a program that
// matches the reference in the interpreter, before and after lowering; it
// round-trips through JSON and is deterministic; parallel and vectorized
// loops are asserted for the dense operators and reported for the others.
#include "compiler/schedule/default_schedule.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/registry.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

// Two shapes per operator: one with odd or prime extents (split tails, vector
// loops that are not a multiple of the width), one with round ones.
const std::map<std::string, std::vector<std::string>>& Shapes() {
  static const auto* shapes =
      new std::map<std::string, std::vector<std::string>>{
          {"add", {"add:M=37,N=29", "add:M=16,N=64"}},
          {"avg_pool2d",
           {"avg_pool2d:N=1,C=3,H=11,W=13,R=3,S=3,pad=1,stride=2",
            "avg_pool2d:N=2,C=4,H=16,W=16,R=2,S=2,stride=2"}},
          {"batch_matmul",
           {"batch_matmul:B=3,M=17,N=41,K=7",
            "batch_matmul:B=2,M=16,N=32,K=8"}},
          {"conv2d_nchw",
           {"conv2d_nchw:N=1,C=3,H=11,W=13,K=5,R=3,S=3,pad=1",
            "conv2d_nchw:N=1,C=4,H=8,W=16,K=8,R=3,S=3,pad=1,groups=2"}},
          {"conv2d_nhwc",
           {"conv2d_nhwc:N=1,C=3,H=11,W=13,K=19,R=3,S=3,pad=1,stride=2",
            "conv2d_nhwc:N=2,C=8,H=8,W=8,K=16,R=3,S=3,pad=1"}},
          {"dense",
           {"dense:M=33,N=53,K=9,bias=1,relu=1",
            "dense:M=16,N=32,K=16,bias=1"}},
          {"matmul", {"matmul:M=37,N=29,K=13", "matmul:M=32,N=48,K=16"}},
          {"max_pool2d",
           {"max_pool2d:N=1,C=3,H=11,W=13,R=3,S=3,pad=1",
            "max_pool2d:N=1,C=4,H=16,W=16,R=2,S=2,stride=2"}},
          {"relu", {"relu:M=3,N=5", "relu:M=31,N=67"}},
          {"softmax", {"softmax:M=37,N=29", "softmax:M=8,N=64"}},
      };
  return *shapes;
}

// Operators whose default must have a parallel and a vectorized loop, and to
// which every step applies; for the others it is reported.
bool MustParallelizeAndVectorize(const std::string& op) {
  static const std::set<std::string> ops = {
      "matmul",       "dense", "conv2d_nchw", "conv2d_nhwc",
      "batch_matmul", "add",   "relu"};
  return ops.count(op) > 0;
}

struct LoopKinds {
  int parallel = 0;
  int vectorized = 0;
  int unrolled = 0;
};

LoopKinds CountLoopKinds(const Program& program) {
  LoopKinds kinds;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               if (const ForNode* f = s->as<ForNode>()) {
                 kinds.parallel += f->for_kind == ForKind::kParallel;
                 kinds.vectorized += f->for_kind == ForKind::kVectorized;
                 kinds.unrolled += f->for_kind == ForKind::kUnrolled;
               }
               return true;
             });
  return kinds;
}

// Runs `program` on random inputs and compares every output with the
// workload's reference.
absl::Status MatchesReference(const Workload& workload,
                              const Program& program) {
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload.inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*workload.inputs()[i].buffer()));
    FillRandom(&inputs.back(), 11 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      RunReference(workload, inputs);
  if (!expected.ok()) return expected.status();
  std::vector<TensorData> outputs;
  for (const te::Tensor& t : workload.outputs()) {
    outputs.push_back(TensorData::Like(*t.buffer()));
  }
  std::vector<TensorData*> args;
  for (TensorData& t : inputs) args.push_back(&t);
  for (TensorData& t : outputs) args.push_back(&t);
  absl::Status ran = Interpret(program, args);
  if (!ran.ok()) return ran;
  for (size_t o = 0; o < outputs.size(); ++o) {
    absl::Status close = CheckAllClose(outputs[o], (*expected)[o], 1e-4, 1e-5,
                                       workload.outputs()[o].name());
    if (!close.ok()) return close;
  }
  return absl::OkStatus();
}

TEST(DefaultSchedule, EveryOperatorHasShapes) {
  for (const OperatorDef& op : Operators()) {
    EXPECT_EQ(Shapes().count(op.name), 1u)
        << "operator " << op.name << " has no shapes in this test: add two";
  }
}

// The main property: for every operator, shape and width.
TEST(DefaultSchedule, EveryOperatorReplaysLowersAndMatchesTheReference) {
  for (const OperatorDef& op : Operators()) {
    auto shapes = Shapes().find(op.name);
    if (shapes == Shapes().end()) continue;  // reported by the test above
    for (const std::string& spec : shapes->second) {
      absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
      ASSERT_TRUE(workload.ok()) << spec << ": " << workload.status();
      absl::StatusOr<Program> initial = workload->InitialProgram();
      ASSERT_TRUE(initial.ok()) << initial.status();
      for (int64_t width : {16, 8, 4}) {
        SCOPED_TRACE(absl::StrCat(spec, " width ", width));
        DefaultScheduleOptions options;
        options.vector_width = width;
        options.num_threads = 2;
        std::vector<std::string> skipped;
        absl::StatusOr<Trace> trace =
            DefaultSchedule(*initial, options, &skipped);
        ASSERT_TRUE(trace.ok()) << trace.status();

        // Deterministic: the same input gives the same trace text.
        absl::StatusOr<Trace> again = DefaultSchedule(*initial, options);
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(trace->ToText(), again->ToText());

        // Round trip through JSON, then replay.
        absl::StatusOr<Trace> parsed = Trace::FromJson(trace->ToJson());
        ASSERT_TRUE(parsed.ok()) << parsed.status();
        EXPECT_TRUE(*parsed == *trace) << trace->ToText();
        auto replayed = ReplayTrace(*parsed, *initial);
        ASSERT_TRUE(replayed.ok()) << replayed.status() << "\n"
                                   << trace->ToText();
        auto replayed_again = ReplayTrace(*trace, *initial);
        ASSERT_TRUE(replayed_again.ok());
        EXPECT_TRUE(StructuralEqual((*replayed)->program(),
                                    (*replayed_again)->program()));
        EXPECT_EQ((*replayed)->trace().ToText(), trace->ToText());
        const Program& scheduled = (*replayed)->program();

        // (1) Parallel outside, vectors inside.
        LoopKinds kinds = CountLoopKinds(scheduled);
        if (MustParallelizeAndVectorize(op.name)) {
          EXPECT_GE(kinds.parallel, 1) << PrintProgram(scheduled);
          EXPECT_GE(kinds.vectorized, 1) << PrintProgram(scheduled);
          EXPECT_TRUE(skipped.empty()) << absl::StrJoin(skipped, "\n");
        } else if (kinds.parallel == 0 || kinds.vectorized == 0 ||
                   !skipped.empty()) {
          std::printf(
              "[ report   ] %s width %lld: %d parallel, %d vectorized "
              "loops%s%s\n",
              spec.c_str(), static_cast<long long>(width), kinds.parallel,
              kinds.vectorized, skipped.empty() ? "" : "; skipped: ",
              absl::StrJoin(skipped, "; ").c_str());
        }

        // (2) The scheduled program matches the reference.
        absl::Status matches = MatchesReference(*workload, scheduled);
        EXPECT_TRUE(matches.ok()) << matches << "\n" << PrintProgram(scheduled);

        // (3) So does the lowered program.
        absl::StatusOr<Program> lowered = LowerProgram(scheduled);
        ASSERT_TRUE(lowered.ok()) << lowered.status() << "\n"
                                  << PrintProgram(scheduled);
        matches = MatchesReference(*workload, *lowered);
        EXPECT_TRUE(matches.ok()) << matches << "\n" << PrintProgram(*lowered);
      }
    }
  }
}

// The buffers allocated anywhere in a program.
std::vector<BufferPtr> AllocatedBuffers(const Program& program) {
  std::vector<BufferPtr> buffers;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               if (const BlockNode* b = s->as<BlockNode>()) {
                 buffers.insert(buffers.end(), b->alloc_buffers.begin(),
                                b->alloc_buffers.end());
               }
               return true;
             });
  return buffers;
}

// The loops above the (only) store into `buffer` whose value reads it: the
// update of the reduction, outermost first.
std::vector<const ForNode*> LoopsAboveUpdate(const Program& program,
                                             const std::string& buffer) {
  std::vector<const ForNode*> path, found;
  std::function<void(const StmtNode*)> walk = [&](const StmtNode* s) {
    if (const ForNode* f = s->as<ForNode>()) {
      path.push_back(f);
      walk(f->body.get());
      path.pop_back();
      return;
    }
    if (const StoreNode* store = s->as<StoreNode>()) {
      if (store->buffer->name == buffer &&
          store->value.ToString().find(buffer + "[") != std::string::npos) {
        found = path;
      }
      return;
    }
    if (const BlockNode* b = s->as<BlockNode>()) {
      if (b->init) walk(b->init.get());
      walk(b->body.get());
      return;
    }
    if (const IfNode* i = s->as<IfNode>()) {
      walk(i->then_case.get());
      if (i->else_case) walk(i->else_case.get());
      return;
    }
    if (const SeqNode* seq = s->as<SeqNode>()) {
      for (const StmtPtr& c : seq->stmts) walk(c.get());
    }
  };
  walk(program.root.get());
  return found;
}

// The GEMM micro-kernel shape of docs/kernels.md: an 8 x 16 accumulator tile in
// local scope, a parallel outer loop, the K loop around an unrolled row loop
// and a vectorized column loop of the vector width.
TEST(DefaultSchedule, Matmul64HasLocalTileParallelOuterAndVectorInner) {
  absl::StatusOr<Workload> workload =
      ParseWorkloadSpec("matmul:M=64,N=64,K=64");
  ASSERT_TRUE(workload.ok());
  Program initial = workload->InitialProgram().value();
  DefaultScheduleOptions options;
  options.vector_width = 16;
  absl::StatusOr<Trace> trace = DefaultSchedule(initial, options);
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto replayed = ReplayTrace(*trace, initial);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  absl::StatusOr<Program> lowered = LowerProgram((*replayed)->program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = PrintProgram(*lowered);

  // The accumulator: one 8 x 16 tile in local scope (registers).
  std::vector<BufferPtr> local;
  for (const BufferPtr& b : AllocatedBuffers(*lowered)) {
    if (b->scope == BufferScope::kLocal) local.push_back(b);
  }
  ASSERT_EQ(local.size(), 1u) << text;
  EXPECT_EQ(local[0]->shape, (std::vector<int64_t>{8, 16})) << text;

  // The outermost loop is parallel.
  const StmtNode* top = lowered->root->body.get();
  while (const SeqNode* seq = top->as<SeqNode>())
    top = seq->stmts.front().get();
  ASSERT_NE(top->as<ForNode>(), nullptr) << text;
  EXPECT_EQ(top->as<ForNode>()->for_kind, ForKind::kParallel) << text;

  // The update: k, then the unrolled rows, then 16 vector lanes innermost.
  std::vector<const ForNode*> loops =
      LoopsAboveUpdate(*lowered, local[0]->name);
  ASSERT_GE(loops.size(), 3u) << text;
  const ForNode* lanes = loops[loops.size() - 1];
  const ForNode* rows = loops[loops.size() - 2];
  const ForNode* k = loops[loops.size() - 3];
  EXPECT_EQ(lanes->for_kind, ForKind::kVectorized) << text;
  EXPECT_EQ(lanes->extent, 16) << text;
  EXPECT_EQ(rows->for_kind, ForKind::kUnrolled) << text;
  EXPECT_EQ(rows->extent, 8) << text;
  EXPECT_EQ(k->extent, 64) << text;
  EXPECT_EQ(k->for_kind, ForKind::kSerial) << text;
  // The init left the K loop: the only store under k is the update.
  EXPECT_EQ(text.find("if k == 0"), std::string::npos) << text;
}

TEST(DefaultSchedule, VectorLoopFollowsTheWidth) {
  Program initial = ParseWorkloadSpec("matmul:M=64,N=64,K=64")
                        .value()
                        .InitialProgram()
                        .value();
  for (int64_t width : {16, 8, 4}) {
    DefaultScheduleOptions options;
    options.vector_width = width;
    auto replayed =
        ReplayTrace(DefaultSchedule(initial, options).value(), initial);
    ASSERT_TRUE(replayed.ok());
    std::vector<const ForNode*> loops =
        LoopsAboveUpdate((*replayed)->program(), "C_local");
    ASSERT_FALSE(loops.empty()) << PrintProgram((*replayed)->program());
    EXPECT_EQ(loops.back()->for_kind, ForKind::kVectorized);
    EXPECT_EQ(loops.back()->extent, width);
  }
}

TEST(DefaultSchedule, OneThreadMakesNothingParallel) {
  Program initial = ParseWorkloadSpec("dense:M=33,N=53,K=9,bias=1,relu=1")
                        .value()
                        .InitialProgram()
                        .value();
  DefaultScheduleOptions options;
  options.num_threads = 1;
  auto replayed =
      ReplayTrace(DefaultSchedule(initial, options).value(), initial);
  ASSERT_TRUE(replayed.ok());
  LoopKinds kinds = CountLoopKinds((*replayed)->program());
  EXPECT_EQ(kinds.parallel, 0);
  EXPECT_GE(kinds.vectorized, 1);
}

// A padded copy that conv2d reads once per output channel stays a stage of
// its own (inlined, its select would run K times per element); pooling, which
// reuses no padded element across an unindexed loop, inlines it.
TEST(DefaultSchedule, InlinesPaddingOnlyWhereItIsNotReused) {
  for (const auto& [spec, kept] : std::vector<std::pair<std::string, bool>>{
           {"conv2d_nchw:N=1,C=3,H=11,W=13,K=5,R=3,S=3,pad=1", true},
           {"conv2d_nhwc:N=1,C=3,H=11,W=13,K=5,R=3,S=3,pad=1", true},
           {"max_pool2d:N=1,C=3,H=11,W=13,R=3,S=3,pad=1", false},
           {"avg_pool2d:N=1,C=3,H=11,W=13,R=3,S=3,pad=1", false}}) {
    Program initial = ParseWorkloadSpec(spec).value().InitialProgram().value();
    auto replayed = ReplayTrace(DefaultSchedule(initial, {}).value(), initial);
    ASSERT_TRUE(replayed.ok()) << spec;
    EXPECT_EQ((*replayed)->program().FindBlock("pad") != nullptr, kept)
        << spec << "\n"
        << PrintProgram((*replayed)->program());
  }
}

TEST(DefaultSchedule, RejectsBadOptions) {
  Program initial =
      ParseWorkloadSpec("matmul:M=8,N=8,K=8").value().InitialProgram().value();
  DefaultScheduleOptions options;
  options.vector_width = 0;
  EXPECT_EQ(DefaultSchedule(initial, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = {};
  options.num_threads = -1;
  EXPECT_EQ(DefaultSchedule(initial, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = {};
  options.register_block = 0;
  EXPECT_EQ(DefaultSchedule(initial, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A program that is already scheduled (loops that are not its blocks' own)
// is left alone rather than failing: the result is still a valid trace.
TEST(DefaultSchedule, LeavesForeignNestsAlone) {
  Program initial = ParseWorkloadSpec("matmul:M=16,N=16,K=16")
                        .value()
                        .InitialProgram()
                        .value();
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  ASSERT_TRUE(sch.Fuse({loops[0], loops[1]}).ok());
  std::vector<std::string> skipped;
  absl::StatusOr<Trace> trace = DefaultSchedule(sch.program(), {}, &skipped);
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->instructions.empty()) << trace->ToText();
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("not its own"), std::string::npos) << skipped[0];
}

}  // namespace
}  // namespace lathe
