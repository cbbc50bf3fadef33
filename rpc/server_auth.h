// Authentication of the tuning service (docs/architecture.md, "Trust and
// failure"): every call of both services (tuner and runner protocol) must
// carry the shared token as call metadata, "authorization: Bearer TOKEN".
// The check runs in gRPC's auth filter (an auth metadata processor attached
// to the server credentials), so a call without the token is answered
// UNAUTHENTICATED before any handler runs. The token is compared in
// constant time. TLS, and mutual TLS with a client CA, are optional.
// Tests: tests/rpc/server_auth_test.cc.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace grpc {
class ServerCredentials;
}  // namespace grpc

namespace lathe::rpc {

// Equal strings; the time taken depends only on the lengths, never on
// where the first difference is.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

// Whether an "authorization" metadata value presents `token`
// ("Bearer TOKEN").
bool AuthorizationMatches(absl::string_view header_value,
                          absl::string_view token);

struct ServerSecurity {
  std::string token;  // required, non-empty
  // TLS: both or neither (PEM files).
  std::string tls_cert_file;
  std::string tls_key_file;
  // Mutual TLS: clients must present a certificate signed by this CA.
  std::string tls_client_ca_file;
};

// Credentials for grpc::ServerBuilder::AddListeningPort that check the
// token of every call (and serve TLS when asked). InvalidArgument for an
// empty token or half a TLS pair; NotFound naming an unreadable file.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurity& security);

}  // namespace lathe::rpc
