#include "compiler/schedule/primitive/sampling.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::primitive {

namespace {
std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}
}  // namespace

absl::StatusOr<std::vector<int64_t>> SamplePerfectTile(Rng* rng, int64_t extent,
                                                       int64_t n,
                                                       int64_t max_innermost) {
  if (n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_perfect_tile: n = ", n, " must be at least 1"));
  }
  if (max_innermost < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_perfect_tile: max_innermost = ", max_innermost,
                     " must be at least 1"));
  }
  std::vector<int64_t> factors(static_cast<size_t>(n), 1);
  // 1. The innermost factor: a divisor of the extent within the bound.
  std::vector<int64_t> inner_choices;
  for (int64_t d : Divisors(extent)) {
    if (d <= max_innermost) inner_choices.push_back(d);
  }
  int64_t rest = extent;
  if (n > 1) {
    factors.back() = inner_choices[rng->UniformInt(
        static_cast<int64_t>(inner_choices.size()))];
    rest /= factors.back();
  } else {
    factors[0] = extent;
    return factors;
  }
  // 2. Every other factor but the outermost: a divisor of what is left.
  for (int64_t i = n - 2; i >= 1; --i) {
    std::vector<int64_t> choices = Divisors(rest);
    factors[i] = choices[rng->UniformInt(static_cast<int64_t>(choices.size()))];
    rest /= factors[i];
  }
  // 3. The outermost takes the remainder, so the product is exact.
  factors[0] = rest;
  return factors;
}

absl::Status CheckPerfectTile(const std::vector<int64_t>& factors,
                              int64_t extent, int64_t n,
                              int64_t max_innermost) {
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample_perfect_tile: decision [", absl::StrJoin(factors, ", "),
        "] for extent ", extent, " is invalid: ", why));
  };
  if (static_cast<int64_t>(factors.size()) != n) {
    return fail(absl::StrCat("expected ", n, " factors"));
  }
  int64_t product = 1;
  for (int64_t f : factors) {
    if (f < 1) return fail("a factor is below 1");
    product *= f;
    if (product > extent) break;
  }
  if (product != extent) return fail("the product is not the extent");
  if (n > 1 && factors.back() > max_innermost) {
    return fail(absl::StrCat("the innermost factor exceeds ", max_innermost));
  }
  return absl::OkStatus();
}

namespace {

// The candidates and their probabilities make a distribution: as many of
// each, none negative, not all 0.
absl::Status CheckDistribution(const std::vector<int64_t>& candidates,
                               const std::vector<double>& probs) {
  if (candidates.empty() || candidates.size() != probs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_categorical: ", candidates.size(),
                     " candidates and ", probs.size(), " probabilities"));
  }
  double total = 0;
  for (double p : probs) {
    if (!(p >= 0)) {
      return absl::InvalidArgumentError(
          "sample_categorical: negative probability");
    }
    total += p;
  }
  if (!(total > 0)) {
    return absl::InvalidArgumentError(
        "sample_categorical: probabilities sum to 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> SampleCategorical(
    Rng* rng, const std::vector<int64_t>& candidates,
    const std::vector<double>& probs) {
  if (absl::Status st = CheckDistribution(candidates, probs); !st.ok())
    return st;
  return rng->Categorical(probs);
}

absl::Status CheckCategorical(int64_t decision,
                              const std::vector<int64_t>& candidates,
                              const std::vector<double>& probs) {
  // A trace replayed with its decisions is also mutated (sampled again), so
  // its distribution must be one here already, not only when resampled.
  if (absl::Status st = CheckDistribution(candidates, probs); !st.ok())
    return st;
  if (decision < 0 || decision >= static_cast<int64_t>(candidates.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample_categorical: decision ", decision, " is not an index into ",
        candidates.size(), " candidates"));
  }
  return absl::OkStatus();
}

}  // namespace lathe::primitive
