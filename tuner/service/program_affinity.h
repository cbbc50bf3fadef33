// Which runner holds which program built, as far as the daemon can tell:
// the runner a program was last leased to, or told to build ahead
// (lease_manager.h, "Building ahead").
//
// Why: a batch is measured in rounds (tuner/search/measurement_rounds.h),
// and each later round asks for the same programs again. Leased to the
// runner that built it, a program is answered from its worker's JIT cache;
// leased to another, it is built again (about 0.6 s for a conv2d
// candidate, several times its check and timing). A preference only: a
// runner with nothing else queued for it takes any program.
//
// Bounded: the oldest programs are forgotten past `capacity`. Not
// thread-safe (the lease manager's mutex guards it).
// Tests: tests/tuner/service/program_affinity_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "proto/measure.pb.h"

namespace lathe::service {

class ProgramAffinity {
 public:
  static constexpr size_t kDefaultCapacity = 4096;
  explicit ProgramAffinity(size_t capacity = kDefaultCapacity);

  // The program a request builds: its workload, target and trace (absent:
  // the default schedule). Requests that differ only in how they measure
  // (time, repeats, seed) name the same program.
  static uint64_t KeyOf(const proto::MeasureRequest& request);

  void Remember(uint64_t program, const std::string& runner);
  // The runner remembered last for `program`; empty when none is.
  const std::string& RunnerOf(uint64_t program) const;
  // Every program of a runner that is gone (expired, quarantined, stopped).
  void Forget(const std::string& runner);
  size_t size() const { return runner_of_.size(); }

 private:
  struct Entry {
    std::string runner;
    uint64_t stamp =
        0;  // of its latest Remember: older queue entries are stale
  };
  const size_t capacity_;
  uint64_t next_stamp_ = 0;
  absl::flat_hash_map<uint64_t, Entry> runner_of_;
  std::deque<std::pair<uint64_t, uint64_t>>
      order_;  // (program, stamp), oldest first
};

}  // namespace lathe::service
