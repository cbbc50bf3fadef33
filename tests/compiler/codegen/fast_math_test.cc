// The float32 exp, erf and tanh the CPU back end emits as plain IR
// (compiler/codegen/llvm/fast_math.h): compiled kernels over a dense sweep
// of inputs and the special values, in a serial loop (scalar IR) and a
// vectorized one (explicit vector IR), against the float64 libm results
// within the header's error bounds; and the vectorized loop calls no libm
// function.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "compiler/codegen/llvm/jit.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace lathe {
namespace {

using testing::Host;
using testing::MakeLoweredProgram;

// Y[i] = fn(X[i]) over n elements.
Program UnaryProgram(const std::string& fn, int64_t n, ForKind kind) {
  BufferPtr x = MakeBuffer("X", DType::Float32(), {n});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {n});
  Expr i = Var("i");
  return MakeLoweredProgram(
      fn, {x}, {y},
      MakeFor(i, n,
              MakeStore(y, {i}, Call(fn, {Load(x, {i})}, DType::Float32())),
              kind));
}

// Inputs: a dense sweep of [-lo, hi] and the edges.
std::vector<float> Inputs(double lo, double hi) {
  std::vector<float> xs;
  const int steps = 20000;
  for (int s = 0; s <= steps; ++s)
    xs.push_back(static_cast<float>(lo + (hi - lo) * s / steps));
  for (float v : {0.0f,
                  -0.0f,
                  1e-30f,
                  -1e-30f,
                  1e-7f,
                  -3e-5f,
                  0.1249f,
                  0.1251f,
                  0.2499f,
                  0.2501f,
                  88.7f,
                  88.72f,
                  89.0f,
                  -87.3f,
                  -100.0f,
                  -104.5f,
                  1e30f,
                  -1e30f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    xs.push_back(v);
  // A multiple of 16 plus a tail, so vector chunks and the tail both run.
  while (xs.size() % 16 != 5) xs.push_back(0.5f);
  return xs;
}

struct Bound {
  double relative;
  double absolute;
};

void ExpectWithin(const std::string& fn, double (*reference)(double),
                  const std::vector<float>& xs, Bound bound) {
  for (ForKind kind : {ForKind::kSerial, ForKind::kVectorized}) {
    SCOPED_TRACE(fn + (kind == ForKind::kSerial ? " serial" : " vectorized"));
    const int64_t n = static_cast<int64_t>(xs.size());
    absl::StatusOr<CompiledKernel> kernel =
        Compile(UnaryProgram(fn, n, kind), Host());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    std::vector<float> in = xs, out(n, -12345.0f);
    ASSERT_EQ(kernel->Call({in.data(), out.data()}), 0);
    int failures = 0;
    for (int64_t e = 0; e < n && failures < 5; ++e) {
      const double expected = reference(static_cast<double>(in[e]));
      const double got = out[e];
      // What float32 can hold: overflow is +inf, underflow below the
      // smallest normal may flush.
      const double representable = static_cast<float>(expected);
      if (std::isinf(representable)) {
        if (got != representable) {
          ADD_FAILURE() << fn << "(" << in[e] << ") = " << got << ", want "
                        << representable;
          ++failures;
        }
        continue;
      }
      const double error = std::fabs(got - expected);
      const double allowed =
          std::max(bound.absolute, bound.relative * std::fabs(expected)) +
          std::numeric_limits<float>::min();
      if (!(error <= allowed)) {
        ADD_FAILURE() << fn << "(" << in[e] << ") = " << got << ", want "
                      << expected << " (error " << error << ", allowed "
                      << allowed << ")";
        ++failures;
      }
    }
    // NaN propagates.
    in.assign(n, std::numeric_limits<float>::quiet_NaN());
    ASSERT_EQ(kernel->Call({in.data(), out.data()}), 0);
    EXPECT_TRUE(std::isnan(out[0])) << out[0];
    EXPECT_TRUE(std::isnan(out[n - 1])) << out[n - 1];
  }
}

double Exp(double x) { return std::exp(x); }
double Erf(double x) { return std::erf(x); }
double Tanh(double x) { return std::tanh(x); }

TEST(FastMath, ExpWithinTwoTenMillionths) {
  ExpectWithin("exp", &Exp, Inputs(-110, 90), {2e-7, 0});
}

TEST(FastMath, ErfWithinTwoTenMillionthsAbsolute) {
  ExpectWithin("erf", &Erf, Inputs(-6, 6), {2e-6, 2e-7});
}

TEST(FastMath, TanhWithinOneMillionth) {
  ExpectWithin("tanh", &Tanh, Inputs(-12, 12), {1e-6, 0});
}

// The vectorized loop's IR, optimized: vector math, no call of libm.
TEST(FastMath, VectorizedLoopCallsNoLibm) {
  for (const std::string fn : {"exp", "erf", "tanh"}) {
    absl::StatusOr<std::string> ir =
        GenerateLLVMIR(UnaryProgram(fn, 64, ForKind::kVectorized), Host());
    ASSERT_TRUE(ir.ok()) << ir.status();
    for (const std::string symbol : {"expf", "erff", "tanhf", "llvm.exp."}) {
      EXPECT_EQ(ir->find("@" + symbol), std::string::npos)
          << fn << " calls " << symbol << "\n"
          << *ir;
    }
    EXPECT_NE(ir->find("x float>"), std::string::npos) << fn << "\n" << *ir;
  }
}

}  // namespace
}  // namespace lathe
