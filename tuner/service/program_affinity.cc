#include "tuner/service/program_affinity.h"

#include "absl/hash/hash.h"

namespace lathe::service {

ProgramAffinity::ProgramAffinity(size_t capacity)
    : capacity_(capacity < 1 ? 1 : capacity) {}

uint64_t ProgramAffinity::KeyOf(const proto::MeasureRequest& request) {
  std::string trace;
  if (request.has_trace()) {
    // Deterministic: the same trace gives the same bytes in every call.
    trace = request.trace().SerializeAsString();
  }
  return absl::HashOf(request.workload(), request.target(), request.has_trace(),
                      trace);
}

void ProgramAffinity::Remember(uint64_t program, const std::string& runner) {
  Entry& entry = runner_of_[program];
  entry.runner = runner;
  entry.stamp = ++next_stamp_;
  order_.emplace_back(program, entry.stamp);
  while (runner_of_.size() > capacity_) {
    const auto [oldest, stamp] = order_.front();
    order_.pop_front();
    auto it = runner_of_.find(oldest);
    if (it != runner_of_.end() && it->second.stamp == stamp)
      runner_of_.erase(it);
  }
  // The queue holds an entry per Remember: one program remembered over and
  // over would grow it without bound, so its stale entries are dropped
  // once it holds twice the capacity (amortized O(1) a call).
  if (order_.size() > 2 * capacity_) {
    std::deque<std::pair<uint64_t, uint64_t>> live;
    for (const auto& [key, stamp] : order_) {
      auto it = runner_of_.find(key);
      if (it != runner_of_.end() && it->second.stamp == stamp)
        live.emplace_back(key, stamp);
    }
    order_.swap(live);
  }
}

const std::string& ProgramAffinity::RunnerOf(uint64_t program) const {
  static const std::string* const kNone = new std::string();
  auto it = runner_of_.find(program);
  return it == runner_of_.end() ? *kNone : it->second.runner;
}

void ProgramAffinity::Forget(const std::string& runner) {
  absl::erase_if(runner_of_, [&](const auto& entry) {
    return entry.second.runner == runner;
  });
}

}  // namespace lathe::service
