// The one naming of a job's states: the words the jobs table stores in its
// state column (proto::Job::state), that `lathe tune` and the daemon write,
// and that the command line shows for the service's jobs.
//
// Stored rows hold "running", "stopped", "done", "failed" or "cancelled"
// (rows written before this header hold the same words). "queued" names a
// state of the service's jobs only: a queued job's row says "running".
// Tests: tests/database/job_state_test.cc.
#pragma once

#include <optional>

#include "absl/strings/string_view.h"

namespace lathe::db {

enum class JobState {
  kQueued,     // waits for the daemon to start it (never stored)
  kRunning,    // being tuned, or left by a process that did not end it
  kStopped,    // a `lathe tune` run that ended early (signal, error)
  kDone,       // finished
  kFailed,     // a service job that ended with an error
  kCancelled,  // a service job that a client cancelled
};

// The word of a state: "queued", "running", "stopped", "done", "failed",
// "cancelled".
const char* JobStateName(JobState state);

// The state a word names (exactly as JobStateName spells it); nullopt for
// any other text.
std::optional<JobState> ParseJobState(absl::string_view name);

}  // namespace lathe::db
