// The daemon's jobs: each job's status as clients see it (GetJob, ListJobs,
// WatchJob), changes announced to watchers, and how a job is kept in the
// database's jobs table so that a restarted daemon finds it again.
//
// A service job is a row of the jobs table whose description is
// "lathe-service-job " followed by its JobSpec in JSON; its state column
// (named as database/job_state.h names them) is "running" until it ends
// ("done", "failed", "cancelled"). Rows of other kinds (`lathe tune` runs)
// are never touched.
// Thread-safe. Tests: tests/tuner/service/job_table_test.cc.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/record.pb.h"
#include "proto/service.pb.h"

namespace lathe::service {

// The jobs-table row of a job, and back. SpecOfRow: nullopt for a row that
// is not a service job; InvalidArgument for one whose spec does not parse.
proto::Job JobRow(const proto::JobStatus& job);
absl::StatusOr<std::optional<proto::JobSpec>> SpecOfRow(const proto::Job& row);
proto::JobState StateOfRow(const proto::Job& row);

// The name of a job's state in its row (and in the daemon's log): "done",
// "failed" or "cancelled" when final, else "running" (database/job_state.h).
const char* RowState(proto::JobState state);

// Whether a job in `state` has ended (done, failed or cancelled): the daemon
// keeps it, clients stop watching it.
bool IsFinal(proto::JobState state);

class JobTable {
 public:
  struct Snapshot {
    proto::JobStatus job;
    int64_t version = 0;
    std::string message;  // of the latest change
  };

  // InvalidArgument when the id is taken.
  absl::Status Add(const proto::JobStatus& job);
  absl::StatusOr<proto::JobStatus> Get(const std::string& id);
  // In creation order.
  std::vector<proto::JobStatus> List();
  // How many jobs are in each state; every state of proto::JobState but
  // the unspecified one is present, also at 0.
  std::map<proto::JobState, int64_t> CountByState();
  // Changes the job and wakes its watchers; `message` says what happened.
  void Update(const std::string& id,
              const std::function<void(proto::JobStatus&)>& change,
              const std::string& message = "");
  // The job once its version is past `after_version` or `timeout` passed
  // (then as it is). NotFound for an unknown id.
  absl::StatusOr<Snapshot> WaitForChange(const std::string& id,
                                         int64_t after_version,
                                         absl::Duration timeout);
  // Wakes every watcher (the daemon is stopping).
  void WakeAll();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Snapshot> jobs_;
  std::vector<std::string> order_;
};

}  // namespace lathe::service
