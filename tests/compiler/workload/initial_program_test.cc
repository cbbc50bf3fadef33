// The initial program of every workload, run by the IR interpreter, computes
// what the workload's reference computes: the te definitions (built through
// the loop IR) and the plain loops (built without it) agree.
#include <gtest/gtest.h>

#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

void ExpectProgramMatchesReference(const Workload& w) {
  SCOPED_TRACE(w.CanonicalForm());
  absl::StatusOr<Program> program = w.InitialProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<TensorData> inputs;
  uint64_t seed = 1;
  for (const te::Tensor& t : w.inputs()) {
    inputs.push_back(TensorData::Like(*t.buffer()));
    FillRandom(&inputs.back(), seed++);
  }
  absl::StatusOr<std::vector<TensorData>> expected = RunReference(w, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<TensorData> args = inputs;
  for (const te::Tensor& t : w.outputs()) {
    args.push_back(TensorData::Like(*t.buffer()));
  }
  std::vector<TensorData*> arg_ptrs;
  for (TensorData& t : args) arg_ptrs.push_back(&t);
  absl::Status run = Interpret(*program, arg_ptrs);
  ASSERT_TRUE(run.ok()) << run;
  for (size_t i = 0; i < w.outputs().size(); ++i) {
    absl::Status close =
        CheckAllClose(args[inputs.size() + i], (*expected)[i], /*rtol=*/1e-5,
                      /*atol=*/1e-5, w.outputs()[i].name());
    EXPECT_TRUE(close.ok()) << close;
  }
}

TEST(InitialProgram, RegistryOperatorsMatchTheirReferences) {
  for (const char* spec : {
           "matmul:M=5,N=7,K=3",
           "batch_matmul:B=3,M=2,N=5,K=4",
           "dense:M=3,N=4,K=5",
           "dense:M=3,N=4,K=5,bias=1",
           "dense:M=3,N=4,K=5,relu=1",
           "dense:M=3,N=4,K=5,bias=1,relu=1",
           "conv2d_nchw:N=2,C=3,H=6,W=5,K=4,R=3,S=2",
           "conv2d_nchw:N=1,C=4,H=7,W=7,K=6,R=3,S=3,stride=2,pad=1,groups=2",
           "conv2d_nchw:N=1,C=3,H=8,W=6,K=3,R=3,S=3,pad=2,dilation=2,groups=3",
           "conv2d_nhwc:N=2,C=3,H=6,W=5,K=4,R=3,S=2,pad=1",
           "conv2d_nhwc:N=1,C=4,H=7,W=7,K=8,R=3,S=3,stride=2,pad=1,groups=4",
           "conv2d_nhwc:N=1,C=2,H=9,W=9,K=2,R=2,S=3,stride=3,dilation=2",
           "max_pool2d:N=1,C=3,H=6,W=6,R=2,S=2,stride=2",
           "max_pool2d:N=2,C=2,H=5,W=7,R=3,S=3,stride=2,pad=1",
           "avg_pool2d:N=1,C=3,H=6,W=6,R=2,S=2,stride=2",
           "avg_pool2d:N=2,C=2,H=5,W=7,R=3,S=2,stride=2,pad=1",
           "softmax:M=4,N=9",
           "add:M=3,N=5",
           "relu:M=4,N=6",
       }) {
    absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
    ASSERT_TRUE(w.ok()) << spec << ": " << w.status();
    ExpectProgramMatchesReference(*w);
  }
}

TEST(InitialProgram, CustomWorkloadsMatchTheirReferences) {
  for (auto [expr, dims] : std::vector<std::pair<std::string, std::string>>{
           {"C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0)",
            "i=4,j=5,k=3"},
           {"Y[n,k,p,q] += X[n,c,2*p+r,2*q+s] * W[k,c,r,s]",
            "n=1,k=2,p=3,q=3,c=2,r=3,s=3"},
           {"Y[i] = -X[5-i] / (2 + exp(-X[i])) - abs(X[i]) * 0.5", "i=6"},
           {"M[i] min= X[i,k]; Y[i,j] = sqrt(X[i,j] - M[i]) + tanh(X[i,j])",
            "i=3,j=4,k=4"},
           {"Y[i] += X[i+k] * K[k]", "i=5,k=3"},
           // Declared inputs, padded reads (a padding stage) and the
           // functions beyond the math ones.
           {"input X[1,4,6,6]; input W[8,4,3,3]; input B[8]; "
            "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
            "Z[n,k,p,q] = max(Y[n,k,p,q] + B[k], 0)",
            "n=1,k=8,p=6,q=6,c=4,r=3,s=3"},
           {"input X[1,3,5,7] pad -3.4028234663852886e+38; "
            "Y[n,c,p,q] max= X?[n,c,2*p+r-1,2*q+s-1]",
            "n=1,c=3,p=3,q=4,r=3,s=3"},
           {"input X[7]; Y[i] = X?[i-2] + X?[i+1] * X[i]", "i=7"},
           {"Y[i] = erf(X[i]) + pow(abs(X[i]), 1.5) + "
            "select(lt(X[i], 0), X[i] * 2, 3) + le(X[i], B[i]) + "
            "gt(X[i], B[i]) * 2 + ge(X[i], 0) * 4 + eq(X[i], X[i])",
            "i=9"},
       }) {
    absl::StatusOr<Workload> w = ParseCustomWorkload(expr, dims);
    ASSERT_TRUE(w.ok()) << expr << ": " << w.status();
    ExpectProgramMatchesReference(*w);
  }
}

}  // namespace
}  // namespace lathe
