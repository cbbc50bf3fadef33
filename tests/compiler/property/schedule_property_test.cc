// The property that makes every other test of schedules trustworthy: no
// sequence of primitives changes what a program computes.
//
// For every registered operator at three shapes (odd and prime extents among
// them), kRandomTracesPerShape random valid traces are drawn. Each must
//  1. survive a JSON round trip and replay onto a fresh program to a
//     structurally equal program,
//  2. compute, in the interpreter, what the operator's reference computes on
//     random inputs, and
//  3. once lowered and JIT-compiled for this machine, compute the same at 1
//     and at 2 threads (parallel loops go through the runtime's pool).
// A failure prints the workload, the seed and the trace, so it can be replayed
// with `lathe lower SPEC --trace FILE`.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/property/random_schedule.h"

namespace lathe {
namespace {

constexpr int kRandomTracesPerShape = 100;
constexpr int kAttemptsPerTrace = 24;

const char* const kSpecs[] = {
    "matmul:M=8,N=8,K=8",
    "matmul:M=7,N=5,K=3",
    "matmul:M=13,N=11,K=17",
    "batch_matmul:B=2,M=4,N=4,K=4",
    "batch_matmul:B=3,M=5,N=7,K=3",
    "batch_matmul:B=1,M=11,N=2,K=13",
    "dense:M=8,N=8,K=8,bias=1,relu=1",
    "dense:M=5,N=7,K=9,bias=1",
    "dense:M=3,N=13,K=11,relu=1",
    "conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1",
    "conv2d_nchw:N=1,C=3,H=7,W=7,K=5,R=3,S=3,stride=2",
    "conv2d_nchw:N=2,C=4,H=5,W=5,K=4,R=3,S=3,pad=1,groups=4",
    "conv2d_nhwc:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1",
    "conv2d_nhwc:N=1,C=3,H=7,W=7,K=5,R=3,S=3,stride=2",
    "conv2d_nhwc:N=1,C=6,H=5,W=5,K=4,R=1,S=3,pad=1,groups=2,dilation=2",
    "max_pool2d:N=1,C=3,H=8,W=8,R=2,S=2,stride=2",
    "max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "max_pool2d:N=2,C=1,H=5,W=11,R=3,S=3",
    "avg_pool2d:N=1,C=3,H=8,W=8,R=2,S=2,stride=2",
    "avg_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "avg_pool2d:N=2,C=1,H=5,W=11,R=3,S=3,pad=1",
    "softmax:M=4,N=8",
    "softmax:M=3,N=7",
    "softmax:M=1,N=13",
    "add:M=8,N=8",
    "add:M=5,N=7",
    "add:M=13,N=1",
    "relu:M=8,N=8",
    "relu:M=5,N=7",
    "relu:M=1,N=17",
};

class ScheduleProperty : public ::testing::TestWithParam<const char*> {};

std::string Describe(const std::string& spec, uint64_t seed,
                     const TracedSchedule& sch) {
  return absl::StrCat("workload ", spec, ", seed ", seed, "\ntrace:\n",
                      sch.trace().ToText(), "program:\n",
                      PrintProgram(sch.program()), "trace JSON:\n",
                      sch.trace().ToJson());
}

TEST_P(ScheduleProperty, RandomTracesReplayAndMatchTheReference) {
  const std::string spec = GetParam();
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  ASSERT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok()) << initial.status();

  // Random inputs and the reference outputs, once per workload.
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload->inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*workload->inputs()[i].buffer()));
    FillRandom(&inputs.back(), 1000 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      RunReference(*workload, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  testing::RandomScheduleStats stats;
  int changed_programs = 0;
  int compiled_kernels = 0;
  for (int t = 0; t < kRandomTracesPerShape; ++t) {
    uint64_t seed = StableHash64(spec) + static_cast<uint64_t>(t);
    TracedSchedule sch(*initial, seed);
    Rng rng(seed ^ 0x5bd1e995);
    testing::ApplyRandomSchedule(&sch, &rng, kAttemptsPerTrace, &stats);
    if (!StructuralEqual(sch.program(), *initial)) ++changed_programs;

    // 1. Round trip and replay.
    absl::StatusOr<Trace> parsed = Trace::FromJson(sch.trace().ToJson());
    ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n"
                             << Describe(spec, seed, sch);
    auto replayed = ReplayTrace(*parsed, *initial);
    ASSERT_TRUE(replayed.ok()) << replayed.status() << "\n"
                               << Describe(spec, seed, sch);
    ASSERT_TRUE(StructuralEqual((*replayed)->program(), sch.program()))
        << "replay differs\n"
        << Describe(spec, seed, sch) << "replayed program:\n"
        << PrintProgram((*replayed)->program());

    // 2. Same result as the reference.
    absl::StatusOr<Interpreter> interpreter =
        Interpreter::Compile(sch.program());
    ASSERT_TRUE(interpreter.ok()) << interpreter.status() << "\n"
                                  << Describe(spec, seed, sch);
    std::vector<TensorData> outputs;
    for (const te::Tensor& out : workload->outputs()) {
      outputs.push_back(TensorData::Like(*out.buffer()));
    }
    std::vector<TensorData*> args;
    for (TensorData& in : inputs) args.push_back(&in);
    for (TensorData& out : outputs) args.push_back(&out);
    absl::Status ran = interpreter->Run(args);
    ASSERT_TRUE(ran.ok()) << ran << "\n" << Describe(spec, seed, sch);
    for (size_t o = 0; o < outputs.size(); ++o) {
      absl::Status close = CheckAllClose(outputs[o], (*expected)[o], 1e-4, 1e-5,
                                         workload->outputs()[o].name());
      ASSERT_TRUE(close.ok()) << close << "\n" << Describe(spec, seed, sch);
    }

    // 3. The compiled kernel, at 1 thread for even traces and 2 for odd
    // ones (compilation is most of this test's time; both thread counts
    // are covered by half the traces each).
    absl::StatusOr<Program> lowered = LowerProgram(sch.program());
    ASSERT_TRUE(lowered.ok()) << lowered.status() << "\n"
                              << Describe(spec, seed, sch);
    for (int threads : {1 + t % 2}) {
      absl::StatusOr<CompiledKernel> kernel =
          Compile(*lowered, HostTarget(threads));
      ASSERT_TRUE(kernel.ok()) << kernel.status() << "\n"
                               << Describe(spec, seed, sch) << "lowered:\n"
                               << PrintProgram(*lowered);
      std::vector<std::vector<float>> arrays;
      for (const TensorData& in : inputs)
        arrays.emplace_back(in.values.begin(), in.values.end());
      for (const TensorData& out : outputs)
        arrays.emplace_back(out.values.size(), 0.0f);
      std::vector<float*> kernel_args;
      for (auto& a : arrays) kernel_args.push_back(a.data());
      ASSERT_EQ(kernel->Call(kernel_args), 0) << Describe(spec, seed, sch);
      for (size_t o = 0; o < outputs.size(); ++o) {
        TensorData compiled = (*expected)[o];
        const std::vector<float>& got = arrays[inputs.size() + o];
        for (int64_t e = 0; e < compiled.size(); ++e)
          compiled.values[e] = got[e];
        absl::Status close = CheckAllClose(compiled, (*expected)[o], 1e-4, 1e-5,
                                           workload->outputs()[o].name());
        ASSERT_TRUE(close.ok())
            << close << " (compiled, " << threads << " threads)\n"
            << Describe(spec, seed, sch) << "lowered:\n"
            << PrintProgram(*lowered);
      }
      ++compiled_kernels;
    }
  }
  // The test is only as good as the schedules it draws: most must change the
  // program, and the primitives must actually get applied.
  EXPECT_GE(changed_programs, kRandomTracesPerShape * 3 / 4);
  std::string summary;
  for (const auto& [kind, n] : stats.applied)
    absl::StrAppend(&summary, kind, "=", n, " ");
  RecordProperty("applied", summary);
  std::cout << spec << ": " << compiled_kernels
            << " kernels compiled and checked; applied " << summary << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllOperators, ScheduleProperty,
                         ::testing::ValuesIn(kSpecs),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c) {
                             name +=
                                 std::isalnum(static_cast<unsigned char>(*c))
                                     ? *c
                                     : '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lathe
