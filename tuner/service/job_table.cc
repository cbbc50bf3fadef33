#include "tuner/service/job_table.h"

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "database/job_state.h"
#include "google/protobuf/util/json_util.h"

namespace lathe::service {
namespace {

// An id as errors show it: an id of kilobytes (not one of ours) would make
// the error itself too large for the gRPC status that carries it.
std::string Shown(const std::string& id) {
  return id.size() <= 80 ? id : absl::StrCat(id.substr(0, 80), "...");
}

constexpr absl::string_view kRowPrefix = "lathe-service-job ";

}  // namespace

const char* RowState(proto::JobState state) {
  switch (state) {
    case proto::JOB_DONE:
      return db::JobStateName(db::JobState::kDone);
    case proto::JOB_FAILED:
      return db::JobStateName(db::JobState::kFailed);
    case proto::JOB_CANCELLED:
      return db::JobStateName(db::JobState::kCancelled);
    default:
      return db::JobStateName(db::JobState::kRunning);
  }
}

bool IsFinal(proto::JobState state) {
  return state == proto::JOB_DONE || state == proto::JOB_FAILED ||
         state == proto::JOB_CANCELLED;
}

proto::Job JobRow(const proto::JobStatus& job) {
  proto::Job row;
  row.set_id(job.id());
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(job.spec(), &json, options);
  row.set_description(absl::StrCat(kRowPrefix, json));
  row.set_created_at_unix_ms(job.created_at_unix_ms());
  row.set_state(RowState(job.state()));
  return row;
}

absl::StatusOr<std::optional<proto::JobSpec>> SpecOfRow(const proto::Job& row) {
  if (!absl::StartsWith(row.description(), kRowPrefix))
    return std::optional<proto::JobSpec>();
  proto::JobSpec spec;
  const std::string json = row.description().substr(kRowPrefix.size());
  if (!google::protobuf::util::JsonStringToMessage(json, &spec).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job ", row.id(), ": the spec in the jobs table does not parse"));
  }
  return std::optional<proto::JobSpec>(spec);
}

proto::JobState StateOfRow(const proto::Job& row) {
  const std::optional<db::JobState> state = db::ParseJobState(row.state());
  if (state == db::JobState::kDone) return proto::JOB_DONE;
  if (state == db::JobState::kFailed) return proto::JOB_FAILED;
  if (state == db::JobState::kCancelled) return proto::JOB_CANCELLED;
  return proto::JOB_RUNNING;
}

absl::Status JobTable::Add(const proto::JobStatus& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (jobs_.count(job.id()) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job.id(), " exists"));
  }
  jobs_[job.id()].job = job;
  order_.push_back(job.id());
  changed_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<proto::JobStatus> JobTable::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end())
    return absl::NotFoundError(absl::StrCat("no job \"", Shown(id), "\""));
  return it->second.job;
}

std::vector<proto::JobStatus> JobTable::List() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<proto::JobStatus> list;
  for (const std::string& id : order_) list.push_back(jobs_[id].job);
  return list;
}

std::map<proto::JobState, int64_t> JobTable::CountByState() {
  std::map<proto::JobState, int64_t> counts;
  for (int s = proto::JobState_MIN; s <= proto::JobState_MAX; ++s) {
    if (proto::JobState_IsValid(s) && s != proto::JOB_STATE_UNSPECIFIED)
      counts[static_cast<proto::JobState>(s)] = 0;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, snapshot] : jobs_) ++counts[snapshot.job.state()];
  return counts;
}

void JobTable::Update(const std::string& id,
                      const std::function<void(proto::JobStatus&)>& change,
                      const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  change(it->second.job);
  ++it->second.version;
  it->second.message = message;
  changed_.notify_all();
}

absl::StatusOr<JobTable::Snapshot> JobTable::WaitForChange(
    const std::string& id, int64_t after_version, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end())
    return absl::NotFoundError(absl::StrCat("no job \"", Shown(id), "\""));
  changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                    [&] { return it->second.version > after_version; });
  return it->second;
}

void JobTable::WakeAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
}

}  // namespace lathe::service
