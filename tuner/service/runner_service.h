// The gRPC face of the runner protocol (proto RunnerService): converts
// messages and statuses; leases, the registry and quarantine are Daemon's.
// Tests: tests/tuner/service/service_integration_test.sh (through `lathe`).
#pragma once

#include "proto/service.grpc.pb.h"
#include "tuner/service/daemon.h"

namespace lathe::service {

class RunnerServiceImpl final : public proto::RunnerService::Service {
 public:
  explicit RunnerServiceImpl(Daemon& daemon) : daemon_(daemon) {}

  grpc::Status RegisterRunner(grpc::ServerContext* context,
                              const proto::RegisterRunnerRequest* request,
                              proto::RegisterRunnerResponse* response) override;
  grpc::Status AcquireWork(grpc::ServerContext* context,
                           const proto::AcquireWorkRequest* request,
                           proto::AcquireWorkResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context,
                         const proto::HeartbeatRequest* request,
                         proto::HeartbeatResponse* response) override;
  grpc::Status ReportResult(grpc::ServerContext* context,
                            const proto::ReportResultRequest* request,
                            proto::ReportResultResponse* response) override;

 private:
  Daemon& daemon_;
};

}  // namespace lathe::service
