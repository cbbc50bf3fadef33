// Property test of MultiLevelTiling (tuner/space/multi_level_tiling.h):
// every sampled point of every space the rule makes is a valid program.
// For GEMM- and convolution-like workloads at small, odd and prime shapes
// (unit dimensions, stride 2, few channels, groups), each space is sampled
// with fresh decisions (ReplayTrace with a seed and none given: what the
// search does when it mutates decisions), lowered, JIT-compiled for this
// machine on 2 threads and checked against the workload's reference.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/multi_level_tiling.h"

namespace lathe::tuner {
namespace {

using testing::CheckSpacePoint;
using testing::RuleFixture;

struct Case {
  std::string spec;
  std::string block;  // the reduction block
};

// Points sampled per workload, spread evenly over its spaces (at least
// kMinPointsPerSpace each): about a minute on two cores, most of it LLVM.
// LATHE_TILING_POINTS=N samples N points per space instead (a deeper run).
constexpr int kPointsPerWorkload = 24;
constexpr int kMinPointsPerSpace = 4;

int PointsPerSpace(size_t spaces) {
  if (const char* env = std::getenv("LATHE_TILING_POINTS");
      env != nullptr && std::atoi(env) > 0) {
    return std::atoi(env);
  }
  return std::max<int>(kMinPointsPerSpace,
                       kPointsPerWorkload / static_cast<int>(spaces));
}

class TilingProperty : public ::testing::TestWithParam<Case> {};

TEST_P(TilingProperty, EverySampledPointMatchesTheReference) {
  const Case& c = GetParam();
  RuleFixture f(c.spec, HostTarget(2));
  MultiLevelTiling rule;
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> spaces =
      rule.Apply(f.Fresh(), c.block, f.context);
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  // The rule takes every one of these blocks, in every branch it plans.
  const size_t planned =
      rule.PlanTilings(f.initial, *f.initial.FindBlock(c.block),
                       f.context.target)
          .size();
  ASSERT_GT(planned, 0u);
  ASSERT_EQ(spaces->size(), planned);
  const int per_space = PointsPerSpace(spaces->size());
  const auto start = std::chrono::steady_clock::now();
  for (size_t s = 0; s < spaces->size(); ++s) {
    const Trace& space = (*spaces)[s]->trace();
    for (int i = 0; i < per_space; ++i) {
      const uint64_t seed = 1000 * s + i + 1;
      absl::Status st =
          CheckSpacePoint(f.workload, space, f.context.target, seed);
      ASSERT_TRUE(st.ok()) << "space " << s << ", seed " << seed << ": " << st;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%s: %zu spaces x %d points in %.1f s\n", c.spec.c_str(),
              spaces->size(), per_space, secs);
}

INSTANTIATE_TEST_SUITE_P(
    GemmAndConv, TilingProperty,
    ::testing::Values(
        Case{"matmul:M=17,N=33,K=9", "C"},   // primes, odd panels
        Case{"matmul:M=24,N=96,K=16", "C"},  // whole panels
        Case{"matmul:M=1,N=40,K=16", "C"},   // one row: no row loop
        Case{"dense:M=9,N=37,K=5,bias=1,relu=1", "dense"},
        Case{"dense:M=16,N=64,K=24", "Y"},
        Case{"batch_matmul:B=3,M=17,N=41,K=7", "C"},
        Case{"conv2d_nchw:N=1,C=3,H=11,W=13,K=16,R=3,S=3,pad=1,stride=2", "Y"},
        Case{"conv2d_nchw:N=2,C=4,H=5,W=5,K=32,R=3,S=3,pad=1", "Y"},
        Case{"conv2d_nchw:N=1,C=4,H=8,W=16,K=8,R=3,S=3,pad=1,groups=2", "Y"},
        Case{"conv2d_nhwc:N=1,C=3,H=11,W=13,K=19,R=3,S=3,pad=1,stride=2", "Y"},
        // A depthwise layer (16 channels, 7 x 9: a prime width that four
        // positions do not divide) read by a 1x1 projection to 8 channels:
        // the branches parallel over pixels compute it at the projection's
        // tile (compute_producer_at_tile.h).
        Case{"custom:input in0[1,1,7,9,16]; input in1[1,1,3,3,16] const; "
             "input in2[1,16] const; input in3[1,16,1,1,8] const; "
             "d1[a0,a1o,a2,a3,a1i] += in0?[a0,a1o,a2+a4-1,a3+a5-1,a1i] * "
             "in1[a1o,0,a4,a5,a1i]; "
             "d0[b0,b1o,b2,b3,b1i] = min(max(d1[b0,b1o,b2,b3,b1i] + "
             "in2[b1o,b1i], 0.0), 6.0); "
             "out[c0,c1o,c2,c3,c1i] += d0[c0,c4o,c2,c3,c4i] * "
             "in3[c1o,c4i+16*c4o,0,0,c1i]"
             "|a0=1,a1o=1,a2=7,a3=9,a1i=16,a4=3,a5=3,b0=1,b1o=1,b2=7,b3=9,"
             "b1i=16,c0=1,c1o=1,c2=7,c3=9,c1i=8,c4o=1,c4i=16",
             "out"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.spec;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

}  // namespace
}  // namespace lathe::tuner
