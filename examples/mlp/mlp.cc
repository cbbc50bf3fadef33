// A two-layer MLP on Lathe kernels: y = (relu(x W1^T + b1)) W2^T + b2, with
// the layers from the tuning database (tuned_*) and from the default
// schedules (default_*), both checked against plain C++ loops and timed
// against each other. Exits non-zero when a result is wrong.
//   mlp [ROUNDS]   (default 15 rounds of timing; 0: check only)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "mlp_default.h"
#include "mlp_tuned.h"

namespace {

constexpr int kBatch = 64, kIn = 256, kHidden = 256, kOut = 64;

using Layer1 = int (*)(const float*, const float*, const float*, float*);

struct Mlp {
  Layer1 hidden;  // dense+bias+relu
  Layer1 output;  // dense+bias
  const char* name;
};

struct Weights {
  std::vector<float> x, w1, b1, w2, b2;
};

// out[m][n] = sum_k in[m][k] w[n][k] + b[n], then relu when asked.
void ReferenceDense(const std::vector<float>& in, const std::vector<float>& w,
                    const std::vector<float>& b, int m_size, int n_size,
                    int k_size, bool relu, std::vector<float>& out) {
  out.assign(static_cast<size_t>(m_size) * n_size, 0);
  for (int m = 0; m < m_size; ++m) {
    for (int n = 0; n < n_size; ++n) {
      double sum = b[n];
      for (int k = 0; k < k_size; ++k)
        sum += double(in[m * k_size + k]) * w[n * k_size + k];
      out[m * n_size + n] = relu && sum < 0 ? 0.0f : static_cast<float>(sum);
    }
  }
}

int Forward(const Mlp& mlp, const Weights& p, std::vector<float>& hidden,
            std::vector<float>& y) {
  int rc = mlp.hidden(p.x.data(), p.w1.data(), p.b1.data(), hidden.data());
  if (rc == 0)
    rc = mlp.output(hidden.data(), p.w2.data(), p.b2.data(), y.data());
  return rc;
}

bool Check(const Mlp& mlp, const Weights& p, const std::vector<float>& want) {
  std::vector<float> hidden(kBatch * kHidden), y(kBatch * kOut, NAN);
  if (Forward(mlp, p, hidden, y) != 0) {
    std::printf("%s: a kernel failed\n", mlp.name);
    return false;
  }
  for (size_t i = 0; i < y.size(); ++i) {
    if (!(std::fabs(y[i] - want[i]) <= 1e-3f * (1.0f + std::fabs(want[i])))) {
      std::printf("%s: y[%zu] = %g, want %g\n", mlp.name, i, y[i], want[i]);
      return false;
    }
  }
  std::printf("%s: matches the reference\n", mlp.name);
  return true;
}

// Seconds per forward pass: the best of `rounds` medians... the median of
// rounds, each the mean of enough calls to last ~20 ms. The two MLPs are
// timed in alternating rounds so that a load change hits both alike.
double TimeRound(const Mlp& mlp, const Weights& p, int calls) {
  std::vector<float> hidden(kBatch * kHidden), y(kBatch * kOut);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) Forward(mlp, p, hidden, y);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() /
         calls;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
  };
  Weights p{fill(kBatch * kIn), fill(kHidden * kIn), fill(kHidden),
            fill(kOut * kHidden), fill(kOut)};
  std::vector<float> hidden, want;
  ReferenceDense(p.x, p.w1, p.b1, kBatch, kHidden, kIn, /*relu=*/true, hidden);
  ReferenceDense(hidden, p.w2, p.b2, kBatch, kOut, kHidden, /*relu=*/false,
                 want);

  const Mlp tuned{tuned_dense_64x256x256x1x1, tuned_dense_64x64x256x1x0,
                  "tuned"};
  const Mlp fallback{default_dense_64x256x256x1x1, default_dense_64x64x256x1x0,
                     "default"};
  if (!Check(tuned, p, want) || !Check(fallback, p, want)) return 1;
  if (rounds <= 0) return 0;

  // Calls per round: ~20 ms of the default MLP.
  const double guess = TimeRound(fallback, p, 3);
  const int calls = std::max(1, static_cast<int>(0.02 / std::max(guess, 1e-7)));
  std::vector<double> tuned_s, default_s;
  for (int r = 0; r < rounds; ++r) {
    tuned_s.push_back(TimeRound(tuned, p, calls));
    default_s.push_back(TimeRound(fallback, p, calls));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double t = median(tuned_s), d = median(default_s);
  const double flops =
      2.0 * kBatch * kIn * kHidden + 2.0 * kBatch * kHidden * kOut;
  std::printf("tuned    %8.1f us per forward  %7.2f GFLOP/s\n", t * 1e6,
              flops / t * 1e-9);
  std::printf("default  %8.1f us per forward  %7.2f GFLOP/s\n", d * 1e6,
              flops / d * 1e-9);
  std::printf("speed-up %.2fx (median of %d rounds of %d calls)\n", d / t,
              rounds, calls);
  return 0;
}
