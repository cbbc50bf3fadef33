#include "tuner/service/server.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "runner/remote/channel.h"
#include "tuner/service/runner_service.h"
#include "tuner/service/tuner_service.h"

namespace lathe::service {

absl::StatusOr<std::unique_ptr<Server>> Server::Start(Daemon& daemon, const std::string& address,
                                                      const ServerSecurity& security,
                                                      int max_message_bytes) {
  if (absl::Status st = runner::CheckAddressPort(address); !st.ok()) return st;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(security);
  if (!credentials.ok()) return credentials.status();
  std::unique_ptr<Server> server(new Server());
  server->tuner_ = std::make_unique<TunerServiceImpl>(daemon);
  server->runner_ = std::make_unique<RunnerServiceImpl>(daemon);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, *credentials, &server->port_);
  builder.RegisterService(server->tuner_.get());
  builder.RegisterService(server->runner_.get());
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  // gRPC sets SO_REUSEPORT by default: a second daemon on the same port
  // would start and take half of the calls (each with its own jobs).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Runners long-poll: keep threads polling rather than starting a thread
  // for each call that finds every poller busy (gRPC's defaults: 1 and 2).
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 4);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 32);
  builder.SetMaxSendMessageSize(runner::kMaxServiceMessageBytes);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  }
  return server;
}

Server::~Server() { Shutdown(); }

void Server::Shutdown() {
  if (server_ == nullptr) return;
  // Long polls and watches end within the deadline.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
}

}  // namespace lathe::service
