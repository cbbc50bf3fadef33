// The gRPC face of the daemon's jobs (proto TunerService): converts
// messages and statuses, nothing more; the work is Daemon's.
// Tests: tests/tuner/service/service_integration_test.sh (through `lathe`).
#pragma once

#include "proto/service.grpc.pb.h"
#include "tuner/service/daemon.h"

namespace lathe::service {

class TunerServiceImpl final : public proto::TunerService::Service {
 public:
  explicit TunerServiceImpl(Daemon& daemon) : daemon_(daemon) {}

  grpc::Status SubmitJob(grpc::ServerContext* context,
                         const proto::SubmitJobRequest* request,
                         proto::JobStatus* response) override;
  grpc::Status GetJob(grpc::ServerContext* context,
                      const proto::GetJobRequest* request,
                      proto::JobStatus* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context,
                        const proto::ListJobsRequest* request,
                        proto::ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* context,
                         const proto::CancelJobRequest* request,
                         proto::JobStatus* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context,
                        const proto::WatchJobRequest* request,
                        grpc::ServerWriter<proto::JobEvent>* writer) override;
  grpc::Status ListRunners(grpc::ServerContext* context,
                           const proto::ListRunnersRequest* request,
                           proto::ListRunnersResponse* response) override;

 private:
  Daemon& daemon_;
};

// absl::Status to grpc::Status, the code kept.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace lathe::service
