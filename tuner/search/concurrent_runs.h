// What tuning runs (tuner.h, Tune) of one process on one database share, so
// that several at once (the tuning service's jobs) measure nothing twice and
// do not lose each other's learning. Tune uses it through
// TuneOptions::concurrent; nullptr (`lathe tune`: one run per database,
// database/writer_lock.h) means none is shared.
//
// Claims. Each task, a (workload key, target) pair, has the hashes
// (structural and lowered, candidate.h) its runs have measured or are
// measuring. A run joins its tasks before it reads the database and leaves
// them at its end; it claims a candidate before dispatching it (a candidate
// any of whose hashes another run holds is skipped, as a program measured
// already) and releases the claims of candidates it never measured (it
// stopped). Measured candidates stay claimed while any run of the task has
// joined; once the last leaves, their records are all committed and the
// next run finds them in the database. Claimed() hands a run what the
// others claimed since it last looked, so its search skips them up front.
// Releases are not handed on: a run that saw a claim keeps skipping it.
//
// The saved cost model. Every run retrains on everything it knows, and a run
// sharing the database reads what the others commit (records of the target
// past a record id) before each retraining, so a model trained through
// record id N has learned from every record of the target up to N (within
// the bounded warm start, tuner.h). SaveModel stores a run's model unless a
// model of that target and name trained through a later record was stored
// by another run of this process: the last save then holds what every run
// committed.
// Tests: tests/tuner/service/concurrent_tune_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"

namespace lathe::tuner {

class ConcurrentRuns {
 public:
  virtual ~ConcurrentRuns() = default;

  // A run tunes the task from now until it leaves it; every Join is
  // matched by one Leave.
  virtual void Join(const std::string& workload_key,
                    const std::string& target) = 0;
  virtual void Leave(const std::string& workload_key,
                     const std::string& target) = 0;
  // Claims every hash for `run` (any address unique to it while it runs),
  // or none: false when another run holds any
  // of them (hashes `run` holds already do not count against it). A task no
  // run has joined keeps no claims: true.
  virtual bool Claim(const std::string& workload_key, const std::string& target,
                     const void* run,
                     const std::vector<std::string>& hashes) = 0;
  // Gives up `run`'s claims of these hashes (a candidate never measured).
  virtual void Release(const std::string& workload_key,
                       const std::string& target, const void* run,
                       const std::vector<std::string>& hashes) = 0;
  // Adds to `into` the hashes claimed by any run of the task since
  // `*cursor` (0 at the first call) and advances it.
  virtual void Claimed(const std::string& workload_key,
                       const std::string& target, int64_t* cursor,
                       absl::flat_hash_set<std::string>& into) = 0;
  // Runs `save` (which stores the model) unless a model of (target, name)
  // trained through a later record id than `trained_through` was saved
  // here; saves of one (target, name) run one at a time. Returns save's
  // error, or OK when it was skipped.
  virtual absl::Status SaveModel(const std::string& target,
                                 const std::string& name,
                                 int64_t trained_through,
                                 const std::function<absl::Status()>& save) = 0;
};

}  // namespace lathe::tuner
