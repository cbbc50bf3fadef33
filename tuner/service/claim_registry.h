// The daemon's ConcurrentRuns (tuner/search/concurrent_runs.h): one per
// database, shared by every job of a `lathe serve`, in memory. Jobs on the
// same (workload, target) claim their candidates here before they are
// measured, so that none is measured twice, and store their cost models
// through SaveModel, so that a job's save never replaces a model trained
// through later records (one that already holds its records).
//
// A task's claims live while a job of it runs (Join to the matching Leave):
// memory grows with the trials of the running jobs, not with the daemon's
// history. The record id each saved model was trained through is kept per
// (target, name) for the daemon's life: a few bytes per target.
// Tests: tests/tuner/service/claim_registry_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tuner/search/concurrent_runs.h"

namespace lathe::service {

class ClaimRegistry final : public tuner::ConcurrentRuns {
 public:
  void Join(const std::string& workload_key,
            const std::string& target) override;
  void Leave(const std::string& workload_key,
             const std::string& target) override;
  bool Claim(const std::string& workload_key, const std::string& target,
             const void* run, const std::vector<std::string>& hashes) override;
  void Release(const std::string& workload_key, const std::string& target,
               const void* run,
               const std::vector<std::string>& hashes) override;
  void Claimed(const std::string& workload_key, const std::string& target,
               int64_t* cursor,
               absl::flat_hash_set<std::string>& into) override;
  absl::Status SaveModel(const std::string& target, const std::string& name,
                         int64_t trained_through,
                         const std::function<absl::Status()>& save) override;

  // Tasks with a joined run, and the claims they hold (tests, metrics).
  int64_t tasks() const;
  int64_t claims() const;

 private:
  using Key = std::pair<std::string, std::string>;  // (workload key, target)
  struct Task {
    int joined = 0;
    absl::flat_hash_map<std::string, const void*> holder;  // hash -> run
    std::vector<std::string> claimed;  // in claim order, for Claimed()
  };

  mutable std::mutex mutex_;
  std::map<Key, Task> tasks_;
  // Saves run one at a time under their own lock (a save writes the
  // database; claims must not wait for it).
  std::mutex save_mutex_;
  std::map<Key, int64_t> saved_through_;  // (target, name) -> record id
};

}  // namespace lathe::service
