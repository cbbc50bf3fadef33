// `lathe serve`'s gRPC server: both services of proto/service.proto on one
// address, every call authenticated (tuner/service/auth.h), messages over a
// size limit refused (RESOURCE_EXHAUSTED).
// Tests: tests/tuner/service/service_integration_test.sh.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rpc/server_auth.h"
#include "tuner/service/daemon.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace lathe::service {

class TunerServiceImpl;
class RunnerServiceImpl;

class Server {
 public:
  // Listens on `address` ("127.0.0.1:0": a free port, see port()).
  // Unavailable when the address cannot be bound.
  // Calls whose request exceeds `max_message_bytes` are refused with
  // RESOURCE_EXHAUSTED.
  static absl::StatusOr<std::unique_ptr<Server>> Start(
      Daemon& daemon, const std::string& address,
      const rpc::ServerSecurity& security, int max_message_bytes);
  ~Server();
  int port() const { return port_; }
  // Stops accepting calls and ends those in progress (long polls, watches).
  void Shutdown();

 private:
  Server() = default;
  std::unique_ptr<TunerServiceImpl> tuner_;
  std::unique_ptr<RunnerServiceImpl> runner_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace lathe::service
