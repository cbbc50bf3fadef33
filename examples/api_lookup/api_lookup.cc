// Kernels from a tuning database at run time (api/lathe.h): opens the
// database, asks for the kernel of a dense layer (dense+bias+relu) on a
// target, which is the best record's when the database has one and the
// default schedule otherwise, JIT-compiles it, runs it on random data and
// checks it against a plain loop. Then the same for a matmul the database
// does not know, which gets the default schedule and says why.
//   api_lookup DB [TARGET]   (TARGET default "host -num-threads=1")
// Prints one line per kernel; exits non-zero when a result is wrong or a
// kernel cannot be had.
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/lathe.h"

namespace {

constexpr int kM = 32, kN = 64, kK = 64;

float Random(std::mt19937& rng) {
  return std::uniform_real_distribution<float>(-1, 1)(rng);
}

// The kernel's origin, in words.
std::string Origin(const lathe::api::Kernel& kernel) {
  const lathe::api::KernelOrigin& origin = kernel.origin();
  if (origin.tuned()) {
    return "tuned: database record " + std::to_string(origin.record_id) +
           " (median " + std::to_string(origin.median_s * 1e6) + " us)";
  }
  return "default schedule: " + (origin.fallback_reason.empty()
                                     ? std::string("no database")
                                     : origin.fallback_reason);
}

// Largest difference from the reference, relative to its magnitude.
bool Close(const std::vector<float>& got, const std::vector<float>& want) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-4f * (1 + std::fabs(want[i]))))
      return false;
  }
  return true;
}

// y[m][n] = relu(sum_k x[m][k] w[n][k] + b[n]): Lathe's dense layout.
bool CheckDense(lathe::api::Database& db, const std::string& target) {
  const std::string spec = "dense:M=" + std::to_string(kM) +
                           ",N=" + std::to_string(kN) +
                           ",K=" + std::to_string(kK) + ",bias=1,relu=1";
  absl::StatusOr<lathe::api::Kernel> dense = db.GetKernel(spec, target);
  if (!dense.ok()) {
    std::fprintf(stderr, "api_lookup: %s\n", dense.status().ToString().c_str());
    return false;
  }
  std::mt19937 rng(7);
  std::vector<float> x(kM * kK), w(kN * kK), b(kN), y(kM * kN), want(kM * kN);
  for (float& v : x) v = Random(rng);
  for (float& v : w) v = Random(rng);
  for (float& v : b) v = Random(rng);
  for (int m = 0; m < kM; ++m) {
    for (int n = 0; n < kN; ++n) {
      float sum = b[n];
      for (int k = 0; k < kK; ++k) sum += x[m * kK + k] * w[n * kK + k];
      want[m * kN + n] = sum > 0 ? sum : 0;
    }
  }
  const int rc = (*dense)(x.data(), w.data(), b.data(), y.data());
  const bool ok = rc == 0 && Close(y, want);
  std::printf("dense: %s; %s\n", ok ? "matches the reference" : "WRONG",
              Origin(*dense).c_str());
  return ok;
}

// c[i][j] = sum_k a[i][k] bt[k][j], with a workload the database lacks.
bool CheckMatmul(lathe::api::Database& db, const std::string& target) {
  constexpr int n = 16;
  absl::StatusOr<lathe::api::Kernel> mm =
      db.GetKernel("matmul:M=16,N=16,K=16", target);
  if (!mm.ok()) {
    std::fprintf(stderr, "api_lookup: %s\n", mm.status().ToString().c_str());
    return false;
  }
  std::mt19937 rng(8);
  std::vector<float> a(n * n), bt(n * n), c(n * n), want(n * n, 0);
  for (float& v : a) v = Random(rng);
  for (float& v : bt) v = Random(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        want[i * n + j] += a[i * n + k] * bt[k * n + j];
  const int rc = (*mm)(a.data(), bt.data(), c.data());
  const bool ok = rc == 0 && Close(c, want);
  std::printf("matmul: %s; %s\n", ok ? "matches the reference" : "WRONG",
              Origin(*mm).c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: api_lookup DB [TARGET]\n");
    return 2;
  }
  const std::string target = argc == 3 ? argv[2] : "host -num-threads=1";
  absl::StatusOr<std::unique_ptr<lathe::api::Database>> db =
      lathe::api::Database::Open(argv[1]);
  if (!db.ok()) {
    std::fprintf(stderr, "api_lookup: %s\n", db.status().ToString().c_str());
    return 1;
  }
  const bool dense_ok = CheckDense(**db, target);
  const bool matmul_ok = CheckMatmul(**db, target);
  return dense_ok && matmul_ok ? 0 : 1;
}
