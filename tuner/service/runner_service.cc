#include "tuner/service/runner_service.h"

#include "tuner/service/tuner_service.h"

namespace lathe::service {
namespace {

template <typename T>
grpc::Status Answer(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpc(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status RunnerServiceImpl::RegisterRunner(
    grpc::ServerContext* context, const proto::RegisterRunnerRequest* request,
    proto::RegisterRunnerResponse* response) {
  return Answer(daemon_.RegisterRunner(*request, context->peer()), response);
}

// A lease handed to a call whose client is gone (killed while it waited)
// would only wait out its expiry: it goes back to the queue now.
void ReturnIfGone(Daemon& daemon, grpc::ServerContext* context,
                  const std::string& runner,
                  const proto::AcquireWorkResponse& work) {
  if (!work.lease_id().empty() && context->IsCancelled()) {
    daemon.leases().Return(runner, work.lease_id());
  }
}

grpc::Status RunnerServiceImpl::AcquireWork(
    grpc::ServerContext* context, const proto::AcquireWorkRequest* request,
    proto::AcquireWorkResponse* response) {
  grpc::Status status = Answer(daemon_.AcquireWork(*request), response);
  if (status.ok())
    ReturnIfGone(daemon_, context, request->runner_id(), *response);
  return status;
}

grpc::Status RunnerServiceImpl::Heartbeat(
    grpc::ServerContext*, const proto::HeartbeatRequest* request,
    proto::HeartbeatResponse* response) {
  return Answer(daemon_.Heartbeat(*request), response);
}

grpc::Status RunnerServiceImpl::ReportResult(
    grpc::ServerContext* context, const proto::ReportResultRequest* request,
    proto::ReportResultResponse* response) {
  grpc::Status status = Answer(daemon_.ReportResult(*request), response);
  if (status.ok())
    ReturnIfGone(daemon_, context, request->runner_id(), response->next());
  return status;
}

}  // namespace lathe::service
