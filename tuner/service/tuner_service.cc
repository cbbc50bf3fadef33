#include "tuner/service/tuner_service.h"

#include <string>

namespace lathe::service {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

grpc::Status TunerServiceImpl::SubmitJob(grpc::ServerContext* context,
                                         const proto::SubmitJobRequest* request,
                                         proto::JobStatus* response) {
  // The preparation is abandoned when the client goes away.
  absl::StatusOr<proto::JobStatus> job = daemon_.Submit(
      request->spec(), [context] { return context->IsCancelled(); });
  if (!job.ok()) return ToGrpc(job.status());
  *response = *std::move(job);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::GetJob(grpc::ServerContext*,
                                      const proto::GetJobRequest* request,
                                      proto::JobStatus* response) {
  absl::StatusOr<proto::JobStatus> job = daemon_.GetJob(request->id());
  if (!job.ok()) return ToGrpc(job.status());
  *response = *std::move(job);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::ListJobs(grpc::ServerContext*,
                                        const proto::ListJobsRequest*,
                                        proto::ListJobsResponse* response) {
  for (proto::JobStatus& job : daemon_.ListJobs())
    *response->add_jobs() = std::move(job);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::CancelJob(grpc::ServerContext*,
                                         const proto::CancelJobRequest* request,
                                         proto::JobStatus* response) {
  absl::StatusOr<proto::JobStatus> job = daemon_.CancelJob(request->id());
  if (!job.ok()) return ToGrpc(job.status());
  *response = *std::move(job);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::WatchJob(
    grpc::ServerContext* context, const proto::WatchJobRequest* request,
    grpc::ServerWriter<proto::JobEvent>* writer) {
  absl::StatusOr<std::unique_ptr<Daemon::WatchSlot>> slot =
      daemon_.StartWatch();
  if (!slot.ok()) return ToGrpc(slot.status());
  absl::StatusOr<proto::JobStatus> job = daemon_.GetJob(request->id());
  if (!job.ok()) return ToGrpc(job.status());
  int64_t version = -1;
  while (!context->IsCancelled()) {
    absl::StatusOr<JobTable::Snapshot> snapshot =
        daemon_.jobs().WaitForChange(request->id(), version, absl::Seconds(1));
    if (!snapshot.ok()) return ToGrpc(snapshot.status());
    if (snapshot->version == version) {
      if (daemon_.stopping())
        return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "the daemon is stopping");
      continue;  // no change: look at the client again
    }
    version = snapshot->version;
    proto::JobEvent event;
    absl::StatusOr<proto::JobStatus> now = daemon_.GetJob(request->id());
    *event.mutable_job() = now.ok() ? *now : snapshot->job;
    event.set_message(snapshot->message);
    if (!writer->Write(event)) return grpc::Status::OK;  // the client left
    if (IsFinal(event.job().state())) return grpc::Status::OK;
  }
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::ListRunners(
    grpc::ServerContext*, const proto::ListRunnersRequest*,
    proto::ListRunnersResponse* response) {
  for (proto::RunnerInfo& runner : daemon_.ListRunners())
    *response->add_runners() = std::move(runner);
  const LeaseStats stats = daemon_.leases().Stats();
  response->set_leases_expired(stats.expired);
  response->set_results_dropped(stats.dropped_results);
  return grpc::Status::OK;
}

}  // namespace lathe::service
