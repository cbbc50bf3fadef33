// Tests of SplitPrepack (compiler/codegen/prepack_split.h): the pre-pack of
// a layout-free weight moves out of the kernel, and prepack + main compute
// the workload's reference on points sampled from the design space.
#include "compiler/codegen/prepack_split.h"

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/lower/pipeline.h"
#include "compiler/measure/reference_check.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/spec.h"
#include "tuner/space/design_space.h"

namespace lathe {
namespace {

constexpr char kConv[] =
    "custom:input X[1,8,10,10]; input W[64,8,3,3] const; input B[64] const; "
    "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
    "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0)|c=8,k=64,n=1,p=10,q=10,r=3,s=3";
constexpr char kDense[] =
    "custom:input X[8,48]; input W[96,48] const; "
    "Y[i,j] += X[i,k] * W[j,k]|i=8,j=96,k=48";

// The kernels of a split, compiled.
struct SplitKernels {
  PrepackSplit split;
  CompiledKernel main;
  std::vector<CompiledKernel> prepacks;  // one per split.packed
};

absl::StatusOr<SplitKernels> Build(const Program& scheduled,
                                   const Target& target) {
  absl::StatusOr<PrepackSplit> split = SplitPrepack(scheduled);
  if (!split.ok()) return split.status();
  SplitKernels kernels;
  absl::StatusOr<CompiledKernel> main = Compile(split->main, target);
  if (!main.ok()) return main.status();
  kernels.main = *std::move(main);
  for (const PackedInput& p : split->packed) {
    absl::StatusOr<CompiledKernel> prepack = Compile(p.prepack, target);
    if (!prepack.ok()) return prepack.status();
    kernels.prepacks.push_back(*std::move(prepack));
  }
  kernels.split = *std::move(split);
  return kernels;
}

// The call of the workload's C ABI that packs each layout-free input with
// its prepack (unless `skip_packing`: the main kernel is then handed the
// original weights, which it was not built for) and runs the main kernel.
KernelCall SplitCall(const SplitKernels& k, bool skip_packing = false) {
  return [&k, skip_packing](const std::vector<float*>& args) -> absl::Status {
    std::vector<float*> main_args = args;
    std::vector<std::vector<float>> packed(k.split.packed.size());
    for (size_t i = 0; i < k.split.packed.size(); ++i) {
      const PackedInput& p = k.split.packed[i];
      packed[i].assign(static_cast<size_t>(p.packed->NumElements()), 0.0f);
      if (skip_packing) {
        std::copy(args[p.input], args[p.input] + p.original->NumElements(),
                  packed[i].begin());
      } else if (absl::Status st =
                     k.prepacks[i].Run({args[p.input], packed[i].data()});
                 !st.ok()) {
        return st;
      }
      main_args[p.input] = packed[i].data();
    }
    return k.main.Run(main_args);
  };
}

// Points of the design space of `spec` (fixed seeds), each split, built and
// checked against the reference at 1 and 2 threads. Returns how many
// points had a pre-pack split off.
int CheckSampledPoints(const std::string& spec) {
  const Workload workload = ParseWorkloadSpec(spec).value();
  const Program initial = workload.InitialProgram().value();
  int split_points = 0, points = 0;
  for (int threads : {1, 2}) {
    const Target target = HostTarget(threads);
    absl::StatusOr<std::vector<Trace>> spaces =
        tuner::GenerateDesignSpaces(workload, target, tuner::DefaultCpuRules());
    EXPECT_TRUE(spaces.ok()) << spaces.status();
    if (!spaces.ok()) return split_points;
    for (size_t s = 0; s < spaces->size(); ++s) {
      for (uint64_t seed : {11u, 12u}) {
        SCOPED_TRACE(
            absl::StrCat(threads, " threads, space ", s, ", seed ", seed));
        auto sampled = ReplayTrace((*spaces)[s], initial, Decisions{}, seed);
        EXPECT_TRUE(sampled.ok()) << sampled.status();
        if (!sampled.ok()) continue;
        absl::StatusOr<SplitKernels> k = Build((*sampled)->program(), target);
        EXPECT_TRUE(k.ok()) << k.status();
        if (!k.ok()) continue;
        ++points;
        absl::Status checked =
            CheckAgainstReference(workload, SplitCall(*k), seed);
        EXPECT_TRUE(checked.ok()) << checked << "\n"
                                  << PrintProgram((*sampled)->program());
        if (k->split.packed.empty()) continue;
        ++split_points;
        // The main kernel takes the packed buffer in the weight's place;
        // handed the weights as they are, it computes something else.
        for (const PackedInput& p : k->split.packed) {
          EXPECT_TRUE(workload.IsLayoutFreeInput(p.input));
          EXPECT_EQ(k->split.main.inputs[p.input], p.packed);
          EXPECT_EQ(p.prepack.inputs.size(), 1u);
          EXPECT_EQ(p.prepack.outputs.front(), p.packed);
        }
        EXPECT_EQ(CheckAgainstReference(
                      workload, SplitCall(*k, /*skip_packing=*/true), seed)
                      .code(),
                  absl::StatusCode::kFailedPrecondition);
      }
    }
  }
  std::cout << spec << ": " << split_points << " of " << points
            << " points split\n";
  return split_points;
}

TEST(SplitPrepack, ConvSampledPointsComputeTheReference) {
  EXPECT_GT(CheckSampledPoints(kConv), 0);
}

TEST(SplitPrepack, DenseSampledPointsComputeTheReference) {
  EXPECT_GT(CheckSampledPoints(kDense), 0);
}

// With weights that arrive at run time nothing is split: the kernel is the
// unsplit lowering, on the same space points.
TEST(SplitPrepack, RunTimeWeightsStayInTheKernel) {
  std::string spec = kDense;
  spec.erase(spec.find(" const"), 6);
  const Workload workload = ParseWorkloadSpec(spec).value();
  const Program initial = workload.InitialProgram().value();
  absl::StatusOr<std::vector<Trace>> spaces = tuner::GenerateDesignSpaces(
      workload, HostTarget(2), tuner::DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  for (const Trace& space : *spaces) {
    auto sampled = ReplayTrace(space, initial, Decisions{}, 11).value();
    absl::StatusOr<PrepackSplit> split = SplitPrepack(sampled->program());
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_TRUE(split->packed.empty());
    EXPECT_TRUE(
        StructuralEqual(split->main, LowerProgram(sampled->program()).value()));
  }
}

}  // namespace
}  // namespace lathe
