#include "tuner/search/measurement_rounds.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner/search/training_label.h"

namespace lathe::tuner {

RoundSettings SettingsOfRound(double min_time_s, int min_repeats,
                              int max_repeats, int rounds) {
  rounds = std::max(1, rounds);
  RoundSettings settings;
  settings.min_time_s = std::max(0.0, min_time_s) / rounds;
  settings.min_repeats = std::max(1, (min_repeats + rounds - 1) / rounds);
  // <= 0 is the request's "no limit".
  settings.max_repeats =
      max_repeats <= 0
          ? max_repeats
          : std::max(settings.min_repeats, (max_repeats + rounds - 1) / rounds);
  return settings;
}

proto::MeasureRequest RequestOfRound(const Task& task,
                                     const RoundSettings& settings,
                                     bool flush_cache) {
  proto::MeasureRequest request;
  request.set_workload(task.workload.CanonicalForm());
  request.set_target(task.target.ToString());
  request.set_min_time_s(settings.min_time_s);
  request.set_min_repeats(settings.min_repeats);
  request.set_max_repeats(settings.max_repeats);
  request.set_flush_cache(flush_cache);
  // One seed for every candidate: the worker computes the reference output
  // once per workload (for a 1024^3 matmul the reference takes longer than
  // building and timing a candidate).
  request.set_check_seed(1);
  return request;
}

std::vector<size_t> OrderOfRound(const std::vector<size_t>& measured_ok,
                                 int round) {
  std::vector<size_t> order = measured_ok;
  if (round % 2 == 1) std::reverse(order.begin(), order.end());
  return order;
}

std::vector<size_t> CandidatesOfRound(
    const std::vector<std::optional<proto::MeasureResult>>& results, int round,
    double within) {
  std::vector<size_t> candidates;
  if (round == 0) {
    for (size_t i = 0; i < results.size(); ++i) candidates.push_back(i);
    return OrderOfRound(candidates, round);
  }
  // By the label's measure (training_label.h: the fastest repeat), per flop;
  // 0 for a failure.
  std::vector<double> speed(results.size(), 0);
  double fastest = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i]) speed[i] = TrainingThroughput(1, *results[i]);
    fastest = std::max(fastest, speed[i]);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i] || results[i]->status() != proto::MEASURE_OK) continue;
    if (within > 0 && speed[i] * within < fastest) continue;
    candidates.push_back(i);
  }
  return OrderOfRound(candidates, round);
}

void MergeRound(const proto::MeasureResult& later, int round,
                proto::MeasureResult* into) {
  into->set_run_ms(into->run_ms() + later.run_ms());
  into->set_check_ms(into->check_ms() + later.check_ms());
  if (later.status() == proto::MEASURE_OK) {
    for (double t : later.times_s()) into->add_times_s(t);
    return;
  }
  into->set_status(later.status() == proto::MEASURE_STATUS_UNSPECIFIED
                       ? proto::MEASURE_RUN_ERROR
                       : later.status());
  into->set_error(absl::StrCat("round ", round + 1, ": ", later.error()));
  into->clear_times_s();
}

std::vector<size_t> BuildAheadOf(const std::vector<size_t>& order, size_t k) {
  std::vector<size_t> next;
  for (size_t a = k + 1; a < order.size() && a <= k + kBuildAheadHints; ++a) {
    next.push_back(order[a]);
  }
  return next;
}

absl::StatusOr<std::vector<std::optional<proto::MeasureResult>>>
MeasureBatchInRounds(const Task& task,
                     const std::vector<const proto::Trace*>& traces,
                     const RoundSettings& settings, int rounds,
                     bool flush_cache, bool build_ahead,
                     const std::function<absl::StatusOr<proto::MeasureResult>(
                         const proto::MeasureRequest&)>& measure) {
  std::vector<std::optional<proto::MeasureResult>> results(traces.size());
  for (int round = 0; round < std::max(1, rounds); ++round) {
    const std::vector<size_t> order = CandidatesOfRound(results, round);
    for (size_t k = 0; k < order.size(); ++k) {
      const size_t i = order[k];
      if (traces[i] == nullptr) continue;
      proto::MeasureRequest request =
          RequestOfRound(task, settings, flush_cache);
      *request.mutable_trace() = *traces[i];
      for (size_t next :
           build_ahead ? BuildAheadOf(order, k) : std::vector<size_t>()) {
        if (traces[next] != nullptr) *request.add_build_ahead() = *traces[next];
      }
      absl::StatusOr<proto::MeasureResult> result = measure(request);
      if (!result.ok()) return result.status();
      if (round == 0) {
        results[i] = *std::move(result);
      } else {
        MergeRound(*result, round, &*results[i]);
      }
    }
  }
  return results;
}

}  // namespace lathe::tuner
