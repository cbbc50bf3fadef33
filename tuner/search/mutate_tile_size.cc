#include "tuner/search/mutate_tile_size.h"

#include <vector>

namespace lathe::tuner {
namespace {

std::vector<int64_t> PrimeFactors(int64_t n) {
  std::vector<int64_t> primes;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  }
  if (n > 1) primes.push_back(n);
  return primes;
}

}  // namespace

std::optional<Decisions> MutateTileSize::Apply(const Trace& space,
                                               const Decisions& decisions,
                                               Rng& rng) const {
  std::vector<int64_t> tiles =
      SamplingInstructions(space, decisions, "sample_perfect_tile");
  // Tiles of one level or of a prime extent of 1 cannot change; try the
  // others in random order.
  while (!tiles.empty()) {
    const size_t pick =
        static_cast<size_t>(rng.UniformInt(static_cast<int64_t>(tiles.size())));
    const int64_t index = tiles[pick];
    tiles.erase(tiles.begin() + static_cast<std::ptrdiff_t>(pick));
    const std::vector<int64_t>& factors = decisions.at(index);
    const int64_t n = static_cast<int64_t>(factors.size());
    if (n < 2) continue;
    int64_t max_innermost = 0;
    if (absl::StatusOr<int64_t> attr =
            space.instructions[index].IntAttr("max_innermost");
        attr.ok()) {
      max_innermost = *attr;
    }
    // Levels with a factor to give, in random order of (from, to).
    std::vector<std::pair<int64_t, int64_t>> moves;
    for (int64_t from = 0; from < n; ++from) {
      if (factors[from] < 2) continue;
      for (int64_t to = 0; to < n; ++to) {
        if (to != from) moves.push_back({from, to});
      }
    }
    while (!moves.empty()) {
      const size_t m = static_cast<size_t>(
          rng.UniformInt(static_cast<int64_t>(moves.size())));
      const auto [from, to] = moves[m];
      moves.erase(moves.begin() + static_cast<std::ptrdiff_t>(m));
      std::vector<int64_t> primes = PrimeFactors(factors[from]);
      const int64_t prime = primes[static_cast<size_t>(
          rng.UniformInt(static_cast<int64_t>(primes.size())))];
      std::vector<int64_t> mutated = factors;
      mutated[from] /= prime;
      mutated[to] *= prime;
      if (max_innermost > 0 && mutated[n - 1] > max_innermost) continue;
      Decisions result = decisions;
      result[index] = std::move(mutated);
      return result;
    }
  }
  return std::nullopt;
}

}  // namespace lathe::tuner
