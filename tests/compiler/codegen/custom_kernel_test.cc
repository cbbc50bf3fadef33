// Custom workloads with input declarations, padded reads (a padding stage)
// and the functions erf, pow, select and the comparisons, scheduled by the
// default schedule (compiler/codegen/kernel_program.h), compiled by the JIT
// at one and two threads, and run against the workload's reference
// (compiler/workload/custom_eval.h).
#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/codegen/llvm/jit.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/reference.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

void ExpectKernelMatchesReference(const std::string& expr,
                                  const std::string& dims, int threads) {
  SCOPED_TRACE(expr + " | " + dims + " at " + std::to_string(threads) +
               " threads");
  absl::StatusOr<Workload> w = ParseCustomWorkload(expr, dims);
  ASSERT_TRUE(w.ok()) << w.status();
  const Target target = HostTarget(threads);
  absl::StatusOr<KernelProgram> program =
      MakeKernelProgram(*w, nullptr, target);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CompiledKernel> kernel = Compile(program->lowered, target);
  ASSERT_TRUE(kernel.ok()) << kernel.status() << "\n"
                           << PrintProgram(program->lowered);

  std::vector<TensorData> inputs;
  for (size_t i = 0; i < w->inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*w->inputs()[i].buffer()));
    FillRandom(&inputs.back(), 5 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected = RunReference(*w, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  std::vector<std::vector<float>> arrays;
  for (const TensorData& t : inputs) {
    arrays.emplace_back(t.values.begin(), t.values.end());
  }
  TensorData actual = TensorData::Like(*w->outputs()[0].buffer());
  arrays.emplace_back(actual.values.size(), -12345.0f);
  std::vector<float*> args;
  for (std::vector<float>& a : arrays) args.push_back(a.data());
  ASSERT_EQ(kernel->Call(args), 0);
  for (int64_t e = 0; e < actual.size(); ++e) {
    actual.values[e] = arrays.back()[e];
  }
  absl::Status close =
      CheckAllClose(actual, (*expected)[0], 1e-4, 1e-5, "output");
  EXPECT_TRUE(close.ok()) << close << "\n" << PrintProgram(program->scheduled);
}

const std::vector<std::pair<std::string, std::string>>& Workloads() {
  static const auto* workloads =
      new std::vector<std::pair<std::string, std::string>>{
          // A 3x3 convolution with padding 1, bias and relu.
          {"input X[1,4,6,6]; input W[8,4,3,3]; input B[8]; "
           "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
           "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0)",
           "n=1,k=8,p=6,q=6,c=4,r=3,s=3"},
          // Strided, with padding 1, over odd extents.
          {"input X[1,3,7,9]; input W[5,3,3,3]; "
           "Y[n,k,p,q] += X?[n,c,2*p+r-1,2*q+s-1] * W[k,c,r,s]",
           "n=1,k=5,p=4,q=5,c=3,r=3,s=3"},
          // Max pooling with the lowest float32 as the pad value.
          {"input X[1,16,9,9] pad -3.4028234663852886e+38; "
           "Y[n,c,p,q] max= X?[n,c,2*p+r-1,2*q+s-1]",
           "n=1,c=16,p=5,q=5,r=3,s=3"},
          // Padding on one side of one dimension, read twice.
          {"input X[6,20]; Y[i,j] = X?[i,j+1] - X?[i,j+3]", "i=6,j=20"},
          // GELU (erf), a power, select and comparisons.
          {"Y[i,j] = X[i,j] * 0.5 * (1 + erf(X[i,j] * 0.7071067811865476))",
           "i=8,j=33"},
          {"input X[8,32]; input E[32]; "
           "Y[i,j] = pow(abs(X[i,j]) + 0.5, E[j]) + select(lt(X[i,j], 0), "
           "X[i,j] * 0.1, X[i,j]) + le(X[i,j], 0.25) - gt(X[i,j], 0.5) + "
           "ge(X[i,j], -0.5) * 2 + eq(X[i,j], X[i,j]) * 3",
           "i=8,j=32"},
          // Layer normalization of rows: reductions, pow, sqrt.
          {"input X[4,64]; input G[64]; input B[64]; "
           "S[i] += X[i,k]; D[i,j] = X[i,j] - S[i] / 64; "
           "V[i] += pow(D[i,k], 2); "
           "Y[i,j] = D[i,j] / sqrt(V[i] / 64 + 1e-5) * G[j] + B[j]",
           "i=4,j=64,k=64"},
      };
  return *workloads;
}

TEST(CustomKernel, DefaultScheduleMatchesTheReference) {
  for (const auto& [expr, dims] : Workloads()) {
    for (int threads : {1, 2}) {
      ExpectKernelMatchesReference(expr, dims, threads);
    }
  }
}

}  // namespace
}  // namespace lathe
