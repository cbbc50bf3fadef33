#include "compiler/schedule/primitive/sampling.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/schedule/instruction_kind.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "proto/trace_limits.h"

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
  if (n < 1 || n > kMaxSplitFactors) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_perfect_tile: n = ", n, " is outside [1, ",
                     "kMaxSplitFactors (", kMaxSplitFactors, ")]"));
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

namespace lathe {
namespace {

// A decision of one value (sample_categorical, sample_compute_location).
absl::StatusOr<std::optional<int64_t>> SingleDecision(const ReplayContext& c) {
  if (c.decision == nullptr) return std::nullopt;
  if (c.decision->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.inst.kind, ": a decision is one index"));
  }
  return (*c.decision)[0];
}

}  // namespace

const InstructionKind& SamplePerfectTileInstruction() {
  // Input: the loop. Attributes: n and max_innermost. Outputs: the n
  // factors. Decision: the factors.
  static const auto* const kind = new InstructionKind{
      "sample_perfect_tile",
      {"n", "max_innermost"},
      /*samples=*/true,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(LoopRV loop, c.Loop(0));
        LATHE_ASSIGN_OR_RETURN(int64_t n, c.IntAttr(0));
        LATHE_ASSIGN_OR_RETURN(int64_t max_innermost, c.IntAttr(1));
        std::optional<std::vector<int64_t>> decision;
        if (c.decision) decision = *c.decision;
        LATHE_ASSIGN_OR_RETURN(
            std::vector<ExprRV> factors,
            c.sch->SamplePerfectTile(loop, n, max_innermost, decision));
        return c.Outputs(IdsOf(factors));
      }};
  return *kind;
}

const InstructionKind& SampleCategoricalInstruction() {
  // Attributes: the candidates and their probabilities. Output: the value.
  // Decision: the index of the candidate.
  static const auto* const kind = new InstructionKind{
      "sample_categorical",
      {"candidates", "probs"},
      /*samples=*/true,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> candidates, c.IntsAttr(0));
        LATHE_ASSIGN_OR_RETURN(std::vector<double> probs, c.FloatsAttr(1));
        LATHE_ASSIGN_OR_RETURN(std::optional<int64_t> decision,
                               SingleDecision(c));
        LATHE_ASSIGN_OR_RETURN(
            ExprRV v, c.sch->SampleCategorical(candidates, probs, decision));
        return c.Outputs({v.id});
      }};
  return *kind;
}

const InstructionKind& SampleComputeLocationInstruction() {
  // Input: the block. Output: the loop (or the "stay" handle). Decision: the
  // index into ComputeLocations, or -1.
  static const auto* const kind = new InstructionKind{
      "sample_compute_location",
      {},
      /*samples=*/true,
      [](const ReplayContext& c) -> absl::Status {
        LATHE_ASSIGN_OR_RETURN(BlockRV block, c.Block(0));
        LATHE_ASSIGN_OR_RETURN(std::optional<int64_t> decision,
                               SingleDecision(c));
        LATHE_ASSIGN_OR_RETURN(LoopRV loop,
                               c.sch->SampleComputeLocation(block, decision));
        return c.Outputs({loop.id});
      }};
  return *kind;
}

absl::StatusOr<std::vector<ExprRV>> ConcreteSchedule::SamplePerfectTile(
    LoopRV loop, int64_t n, int64_t max_innermost,
    std::optional<std::vector<int64_t>> decision) {
  LATHE_ASSIGN_OR_RETURN(std::string name, LoopName(loop));
  int64_t extent = program_.FindLoop(name)->extent;
  std::vector<int64_t> factors;
  if (decision.has_value()) {
    LATHE_RETURN_IF_ERROR(
        primitive::CheckPerfectTile(*decision, extent, n, max_innermost));
    factors = *decision;
  } else {
    LATHE_ASSIGN_OR_RETURN(
        factors, primitive::SamplePerfectTile(&rng_, extent, n, max_innermost));
  }
  std::vector<ExprRV> result;
  for (int64_t f : factors) result.push_back(NewExprRV(f));
  Record(SamplePerfectTileInstruction(), {InputOf(loop)}, {n, max_innermost},
         IdsOf(result), factors);
  return result;
}

absl::StatusOr<ExprRV> ConcreteSchedule::SampleCategorical(
    const std::vector<int64_t>& candidates, const std::vector<double>& probs,
    std::optional<int64_t> decision) {
  int64_t index;
  if (decision.has_value()) {
    LATHE_RETURN_IF_ERROR(
        primitive::CheckCategorical(*decision, candidates, probs));
    index = *decision;
  } else {
    LATHE_ASSIGN_OR_RETURN(
        index, primitive::SampleCategorical(&rng_, candidates, probs));
  }
  ExprRV value = NewExprRV(candidates[index]);
  Record(SampleCategoricalInstruction(), {}, {candidates, probs}, {value.id},
         std::vector<int64_t>{index});
  return value;
}

absl::StatusOr<LoopRV> ConcreteSchedule::SampleComputeLocation(
    BlockRV block, std::optional<int64_t> decision) {
  LATHE_ASSIGN_OR_RETURN(std::string name, BlockName(block));
  // "Stay" needs no location; the location at index d only the first d + 1
  // (the list is long to compute, and replays with a decision are the
  // search's inner loop). Sampling needs them all.
  std::vector<std::string> locations;
  if (!decision.has_value() || *decision < -1) {
    locations = primitive::ComputeLocations(program_, name);
  } else if (*decision >= 0) {
    locations = primitive::ComputeLocations(program_, name,
                                            static_cast<size_t>(*decision) + 1);
  }
  int64_t index;
  if (decision.has_value()) {
    index = *decision;
    // Fewer than d + 1 locations is the whole list, for the message.
    if (index < -1 || index >= static_cast<int64_t>(locations.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample_compute_location: decision ", index, " for block \"", name,
          "\" is not -1 or an index into its ", locations.size(),
          " locations"));
    }
  } else {
    // -1 (stay) is one more choice beside every valid location.
    index = rng_.UniformInt(static_cast<int64_t>(locations.size()) + 1) - 1;
  }
  // "Stay" is a loop handle that names no loop (see IsStayLocation).
  LoopRV loop = NewLoopRV(index < 0 ? std::string() : locations[index]);
  Record(SampleComputeLocationInstruction(), {InputOf(block)}, {}, {loop.id},
         std::vector<int64_t>{index});
  return loop;
}

}  // namespace lathe
