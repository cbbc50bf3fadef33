// The property of code generation: a compiled kernel computes what the
// reference computes. Random valid traces (tests/compiler/property/
// random_schedule.h) of several operators are lowered (compiler/lower),
// JIT-compiled for this machine at 1 and 2 threads, and run on random inputs
// against the operator's reference. Traces that bind loops to GPU threads are
// skipped (CPU targets refuse them). A failure prints the spec, the seed,
// the trace and the lowered program.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/codegen/target.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/property/random_schedule.h"

namespace lathe {
namespace {

constexpr int kTracesPerShape = 12;
constexpr int kAttemptsPerTrace = 24;

const char* const kSpecs[] = {
    "matmul:M=8,N=8,K=8",
    "matmul:M=13,N=11,K=17",
    "dense:M=5,N=7,K=9,bias=1,relu=1",
    "conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1",
    "conv2d_nchw:N=1,C=3,H=7,W=7,K=5,R=3,S=3,stride=2,pad=1",
    "softmax:M=3,N=7",
    "softmax:M=1,N=13",
    "max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "avg_pool2d:N=2,C=1,H=5,W=11,R=3,S=3,pad=1",
};

class CodegenProperty : public ::testing::TestWithParam<const char*> {};

TEST_P(CodegenProperty, CompiledRandomSchedulesMatchTheReference) {
  const std::string spec = GetParam();
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  ASSERT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok()) << initial.status();
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload->inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*workload->inputs()[i].buffer()));
    FillRandom(&inputs.back(), 2000 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected = RunReference(*workload, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  testing::RandomScheduleStats stats;
  int compiled = 0, skipped = 0;
  for (int t = 0; t < kTracesPerShape; ++t) {
    uint64_t seed = StableHash64(spec) + 104729 * static_cast<uint64_t>(t);
    TracedSchedule sch(*initial, seed);
    Rng rng(seed ^ 0x9e3779b9);
    testing::ApplyRandomSchedule(&sch, &rng, kAttemptsPerTrace, &stats);
    absl::StatusOr<Program> lowered = LowerProgram(sch.program());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    auto describe = [&] {
      return absl::StrCat("workload ", spec, ", seed ", seed, "\ntrace:\n", sch.trace().ToText(),
                          "lowered:\n", PrintProgram(*lowered));
    };
    for (int threads : {1, 2}) {
      absl::StatusOr<CompiledKernel> kernel = Compile(*lowered, HostTarget(threads));
      if (!kernel.ok() && absl::StrContains(kernel.status().message(), "thread binding")) {
        ++skipped;
        break;
      }
      ASSERT_TRUE(kernel.ok()) << kernel.status() << "\n" << describe();
      ++compiled;
      std::vector<std::vector<float>> arrays;
      for (const TensorData& in : inputs) arrays.emplace_back(in.values.begin(), in.values.end());
      for (const TensorData& out : *expected) arrays.emplace_back(out.values.size(), 0.0f);
      std::vector<float*> args;
      for (auto& a : arrays) args.push_back(a.data());
      ASSERT_EQ(kernel->Call(args), 0) << describe();
      for (size_t o = 0; o < expected->size(); ++o) {
        TensorData actual = (*expected)[o];
        const std::vector<float>& got = arrays[inputs.size() + o];
        for (int64_t e = 0; e < actual.size(); ++e) actual.values[e] = got[e];
        absl::Status close = CheckAllClose(actual, (*expected)[o], 1e-4, 1e-5,
                                           workload->outputs()[o].name());
        ASSERT_TRUE(close.ok()) << close << " (" << threads << " threads)\n" << describe();
      }
    }
  }
  std::cout << spec << ": " << compiled << " kernels checked, " << skipped
            << " traces skipped (GPU thread binding)\n";
  EXPECT_GT(compiled, kTracesPerShape);
}

INSTANTIATE_TEST_SUITE_P(Operators, CodegenProperty, ::testing::ValuesIn(kSpecs),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c) {
                             name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace lathe
