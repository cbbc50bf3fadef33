// The RPC layer of the tuning service, shared by the daemon
// (tuner/service: its token and TLS files), remote runners
// (runner/remote/remote_runner.h) and the client commands (`lathe submit`,
// `jobs`, `watch`, `runners`, `cancel`): the token read from its file, PEM
// files checked before gRPC sees them, a channel (plain or TLS, optionally
// with a client certificate for mutual TLS), the token attached to every
// call, and gRPC errors turned into one line that names the tuner.
// Tests: tests/rpc/channel_test.cc.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace grpc {
class Channel;
class ClientContext;
class Status;
}  // namespace grpc

namespace lathe::rpc {

// Largest message either side accepts (a job's spec, a trace, a result).
inline constexpr int kMaxServiceMessageBytes = 4 << 20;

// The token: the file's content less surrounding whitespace. NotFound when
// the file cannot be read; InvalidArgument when it holds no token.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

struct ChannelOptions {
  std::string address;  // host:port
  std::string token;
  // TLS when set: the CA that signed the tuner's certificate (PEM).
  std::string tls_ca_file;
  // Mutual TLS: this client's certificate and key (PEM).
  std::string tls_cert_file;
  std::string tls_key_file;
};

// InvalidArgument unless `address` is HOST:PORT with PORT a number in
// 0-65535: gRPC would take 99999 modulo 65536 (port 34463), "-5" as 65531,
// and no port at all as 443. Addresses in gRPC's own schemes (unix:, dns:,
// ipv4:, ipv6:, ...) are gRPC's to judge.
absl::Status CheckAddressPort(const std::string& address);

// Errors: no address, its port (CheckAddressPort), TLS files.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const ChannelOptions& options);

// The PEM file of a TLS option (`what`: "TLS certificate"), which must hold a
// block whose BEGIN line contains `label` ("CERTIFICATE", "PRIVATE KEY"):
// NotFound for a file that cannot be read, InvalidArgument naming the file
// for one that is empty or is not that PEM. gRPC itself only says "cannot
// listen" or "empty address list" for such files.
absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* what, const char* label);

// Adds the token to a call and sets its deadline (seconds from now; <= 0 or
// more than a day: none).
void PrepareContext(grpc::ClientContext& context, const std::string& token,
                    double deadline_s);

// An error of a call to the tuner at `address` as an absl::Status with the
// same code: "tuner at 127.0.0.1:5000 is not reachable: ...", "tuner at ...
// refused the credentials: ...", or the daemon's own message.
absl::Status FromGrpc(const grpc::Status& status, const std::string& address);

// A failure that waiting and calling again can cure: the tuner is not
// reachable (UNAVAILABLE), did not answer in time (DEADLINE_EXCEEDED), or
// cancelled the call because it is shutting down (CANCELLED: a daemon
// stopped by SIGTERM cancels the long polls in flight, and a restarted one
// must find its runners still there).
bool IsTransient(const grpc::Status& status);

}  // namespace lathe::rpc
