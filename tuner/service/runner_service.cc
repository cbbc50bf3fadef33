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

grpc::Status RunnerServiceImpl::RegisterRunner(grpc::ServerContext* context,
                                               const proto::RegisterRunnerRequest* request,
                                               proto::RegisterRunnerResponse* response) {
  return Answer(daemon_.RegisterRunner(*request, context->peer()), response);
}

grpc::Status RunnerServiceImpl::AcquireWork(grpc::ServerContext*,
                                            const proto::AcquireWorkRequest* request,
                                            proto::AcquireWorkResponse* response) {
  return Answer(daemon_.AcquireWork(*request), response);
}

grpc::Status RunnerServiceImpl::Heartbeat(grpc::ServerContext*, const proto::HeartbeatRequest* request,
                                          proto::HeartbeatResponse* response) {
  return Answer(daemon_.Heartbeat(*request), response);
}

grpc::Status RunnerServiceImpl::ReportResult(grpc::ServerContext*,
                                             const proto::ReportResultRequest* request,
                                             proto::ReportResultResponse* response) {
  return Answer(daemon_.ReportResult(*request), response);
}

}  // namespace lathe::service
