#include "tuner/service/server.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "rpc/channel.h"
#include "tuner/service/runner_service.h"
#include "tuner/service/tuner_service.h"

namespace lathe::service {
namespace {

// Whether a plain (insecure) listener can bind `address` right now: told
// apart from a TLS listener that cannot, it names the certificate and key as
// the cause (gRPC reports neither, only that the server did not start).
bool CanListenWithoutTls(const std::string& address) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A server with no service does not start; this one answers every call
  // "unimplemented" for the instant it listens.
  proto::TunerService::Service unimplemented;
  builder.RegisterService(&unimplemented);
  std::unique_ptr<grpc::Server> probe = builder.BuildAndStart();
  if (probe == nullptr) return false;
  probe->Shutdown(std::chrono::system_clock::now());
  probe->Wait();
  return port != 0;
}

absl::Status ListenFailure(const std::string& address,
                           const rpc::ServerSecurity& security) {
  if (!security.tls_cert_file.empty() && CanListenWithoutTls(address)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot listen on ", address, " with TLS: the certificate ",
        security.tls_cert_file, " and the key ", security.tls_key_file,
        " are not a pair (or not a kind gRPC serves); the address itself is "
        "free"));
  }
  return absl::UnavailableError(absl::StrCat(
      "cannot listen on ", address,
      ": the port is in use or the address is not this machine's"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(
    Daemon& daemon, const std::string& address,
    const rpc::ServerSecurity& security, int max_message_bytes) {
  if (absl::Status st = rpc::CheckAddressPort(address); !st.ok()) return st;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      rpc::MakeServerCredentials(security);
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
  builder.SetSyncServerOption(
      grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 4);
  builder.SetSyncServerOption(
      grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 32);
  builder.SetMaxSendMessageSize(rpc::kMaxServiceMessageBytes);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return ListenFailure(address, security);
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
