#include "cli/demo_command.h"

#include <cmath>
#include <cstdio>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/workload_args.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/reference.h"

namespace lathe::cli {
namespace {

struct DemoOptions {
  WorkloadArgs workload;
  uint64_t seed = 1;
  std::string save_trace;
};

// Runs one schedule step; a step that does not apply is reported, not fatal.
void Step(const char* what, const absl::Status& status) {
  if (status.ok()) {
    std::printf("  %-34s ok\n", what);
  } else {
    std::printf("  %-34s skipped: %s\n", what,
                std::string(status.message()).c_str());
  }
}

// The block that writes the first output: the heart of the workload.
absl::StatusOr<BlockRV> MainBlock(TracedSchedule* sch) {
  const BufferPtr& out = sch->program().outputs[0];
  BlockNode* main = nullptr;
  for (BlockNode* b : sch->program().Blocks()) {
    // Prefer the reduction that feeds the output; else the output's writer.
    if (b->IsReduction()) main = b;
  }
  if (main == nullptr) {
    for (BlockNode* b : sch->program().Blocks()) {
      for (const BufferPtr& w : BuffersWritten(*b)) {
        if (w == out) main = b;
      }
    }
  }
  if (main == nullptr)
    return absl::InternalError("demo: no block writes the output");
  return sch->GetBlock(main->name);
}

void ApplyDemoSchedule(TracedSchedule* sch) {
  // 1. Fold elementwise stages into their neighbours.
  for (BlockNode* b : sch->program().Blocks()) {
    std::string name = b->name;
    if (b->IsReduction()) continue;
    BlockRV rv = sch->GetBlock(name).value();
    if (sch->ComputeInline(rv).ok()) {
      std::printf("  %-34s ok\n",
                  absl::StrCat("compute_inline(", name, ")").c_str());
    }
  }
  absl::StatusOr<BlockRV> main = MainBlock(sch);
  if (!main.ok()) return Step("find the main block", main.status());
  // Read what is needed of the block now: every primitive replaces the
  // program, so pointers into it do not survive the next step.
  std::vector<IterType> iter_types;
  const std::string main_name = sch->BlockName(*main).value();
  for (const IterVar& iv : sch->program().FindBlock(main_name)->iter_vars) {
    iter_types.push_back(iv.type);
  }
  std::vector<LoopRV> loops = sch->GetLoops(*main).value();
  if (loops.size() != iter_types.size()) {
    return Step("tile", absl::FailedPreconditionError(
                            "the main block's loops are not its own"));
  }
  // 2. Two-level tiling: spatial loops split in (outer, inner), reductions
  //    in between: S S R S S.
  std::vector<LoopRV> outer, inner, reduce;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (iter_types[i] == IterType::kReduce) {
      reduce.push_back(loops[i]);
      continue;
    }
    auto tiles = sch->SamplePerfectTile(loops[i], 2, 8);
    if (!tiles.ok()) return Step("sample_perfect_tile", tiles.status());
    auto split = sch->Split(loops[i], {(*tiles)[0], (*tiles)[1]});
    if (!split.ok()) return Step("split", split.status());
    outer.push_back((*split)[0]);
    inner.push_back((*split)[1]);
  }
  Step("sample_perfect_tile + split", absl::OkStatus());
  std::vector<LoopRV> order = outer;
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.insert(order.end(), inner.begin(), inner.end());
  if (order.size() >= 2) Step("reorder (S.. R.. S..)", sch->Reorder(order));
  // 3. Accumulate the tile in registers, written back under the tile.
  if (!outer.empty()) {
    auto cache = sch->CacheWrite(*main, 0, "local");
    Step("cache_write(local)", cache.status());
    if (cache.ok()) {
      Step("reverse_compute_at(tile)",
           sch->ReverseComputeAt(*cache, outer.back()));
    }
  }
  // 4. Parallel outside, vectors inside, unrolled middle.
  if (!outer.empty()) Step("parallel(outer)", sch->Parallel(outer.front()));
  if (!inner.empty()) Step("vectorize(inner)", sch->Vectorize(inner.back()));
  if (inner.size() >= 2) Step("unroll", sch->Unroll(inner[inner.size() - 2]));
}

absl::Status RunDemo(const DemoOptions& options) {
  DemoOptions resolved = options;
  if (resolved.workload.spec.empty() && resolved.workload.expr.empty()) {
    resolved.workload.spec = "dense:M=64,N=48,K=32,bias=1,relu=1";
  }
  absl::StatusOr<Workload> workload = resolved.workload.Resolve();
  if (!workload.ok()) return workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  if (!initial.ok()) return initial.status();

  std::printf("== workload %s (key %s)\n\n", workload->CanonicalForm().c_str(),
              workload->Key().c_str());
  std::printf("== program before scheduling\n%s\n",
              PrintProgram(*initial).c_str());
  TracedSchedule sch(*initial, resolved.seed);
  sch.mutable_trace().workload = workload->CanonicalForm();
  std::printf("== schedule\n");
  ApplyDemoSchedule(&sch);
  std::printf("\n== trace\n%s\n", sch.trace().ToText().c_str());
  std::printf("== program after scheduling\n%s\n",
              PrintProgram(sch.program()).c_str());
  if (!resolved.save_trace.empty()) {
    absl::Status saved = sch.trace().Save(resolved.save_trace);
    if (!saved.ok()) return saved;
    std::printf("trace saved to %s (replay: lathe lower %s --trace %s)\n\n",
                resolved.save_trace.c_str(), workload->CanonicalForm().c_str(),
                resolved.save_trace.c_str());
  }

  // Check: the scheduled program in the interpreter against the reference.
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload->inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*workload->inputs()[i].buffer()));
    FillRandom(&inputs.back(), 7 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      RunReference(*workload, inputs);
  if (!expected.ok()) return expected.status();
  absl::StatusOr<Interpreter> interpreter = Interpreter::Compile(sch.program());
  if (!interpreter.ok()) return interpreter.status();
  std::vector<TensorData> outputs;
  std::vector<TensorData*> args;
  for (const te::Tensor& t : workload->outputs())
    outputs.push_back(TensorData::Like(*t.buffer()));
  for (TensorData& t : inputs) args.push_back(&t);
  for (TensorData& t : outputs) args.push_back(&t);
  absl::Status ran = interpreter->Run(args);
  if (!ran.ok()) return ran;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::string name = workload->outputs()[o].name();
    absl::Status close =
        CheckAllClose(outputs[o], (*expected)[o], 1e-4, 1e-5, name);
    if (!close.ok()) return close;
    double max_error = 0;
    for (size_t i = 0; i < outputs[o].values.size(); ++i) {
      max_error = std::max(
          max_error, std::abs(outputs[o].values[i] - (*expected)[o].values[i]));
    }
    std::printf(
        "== check: %s matches the reference on random inputs "
        "(%zu elements, max abs error %.3g)\n",
        name.c_str(), outputs[o].values.size(), max_error);
  }
  return absl::OkStatus();
}

}  // namespace

void AddDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command =
      app.add_subcommand("demo",
                         "show a program before and after a schedule, checked "
                         "against the reference");
  options->workload.AddTo(command, /*spec_required=*/false);
  command->add_option("--seed", options->seed,
                      "seed of the sampled tile sizes");
  command->add_option("--save-trace", options->save_trace,
                      "write the schedule's trace (JSON)");
  SetAction(command, [options] { return RunDemo(*options); });
}

}  // namespace lathe::cli
