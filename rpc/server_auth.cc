#include "rpc/server_auth.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpcpp/security/server_credentials.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rpc/channel.h"

namespace lathe::rpc {
namespace {

absl::string_view SliceView(const grpc_slice& slice) {
  return absl::string_view(
      reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(slice)),
      GRPC_SLICE_LENGTH(slice));
}

// gRPC core's auth metadata processor: runs in the server's auth filter for
// every incoming call, before the call reaches a handler.
void ProcessAuthMetadata(void* state, grpc_auth_context* /*context*/,
                         const grpc_metadata* md, size_t num_md,
                         grpc_process_auth_metadata_done_cb done,
                         void* user_data) {
  const std::string& token = *static_cast<const std::string*>(state);
  for (size_t i = 0; i < num_md; ++i) {
    if (SliceView(md[i].key) != "authorization") continue;
    if (AuthorizationMatches(SliceView(md[i].value), token)) {
      // Consumed: the handler never sees the token.
      done(user_data, &md[i], 1, nullptr, 0, GRPC_STATUS_OK, nullptr);
      return;
    }
    done(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNAUTHENTICATED,
         "lathe: wrong token (see --token-file)");
    return;
  }
  done(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_UNAUTHENTICATED,
       "lathe: no credentials: every call needs the shared token "
       "(--token-file)");
}

void DestroyToken(void* state) { delete static_cast<std::string*>(state); }

// Server credentials built on gRPC core's insecure or SSL credentials with
// the token check attached. grpc++'s InsecureServerCredentials refuses an
// auth metadata processor, although gRPC core runs one on insecure
// connections too; this class builds the core credentials itself.
class TokenServerCredentials : public grpc::ServerCredentials {
 public:
  TokenServerCredentials(std::string token, std::string cert, std::string key,
                         std::string client_ca)
      : token_(std::move(token)),
        cert_(std::move(cert)),
        key_(std::move(key)),
        client_ca_(std::move(client_ca)) {}

  void SetAuthMetadataProcessor(
      const std::shared_ptr<grpc::AuthMetadataProcessor>& /*processor*/)
      override {
    // The token check is this class's processor; nothing else replaces it.
  }

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override {
    grpc_server_credentials* creds = nullptr;
    if (cert_.empty()) {
      creds = grpc_insecure_server_credentials_create();
    } else {
      grpc_ssl_pem_key_cert_pair pair = {key_.c_str(), cert_.c_str()};
      creds = grpc_ssl_server_credentials_create_ex(
          client_ca_.empty() ? nullptr : client_ca_.c_str(), &pair, 1,
          client_ca_.empty()
              ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY,
          nullptr);
    }
    grpc_auth_metadata_processor processor;
    processor.process = ProcessAuthMetadata;
    processor.destroy = DestroyToken;
    processor.state = new std::string(token_);
    grpc_server_credentials_set_auth_metadata_processor(creds, processor);
    const int port = grpc_server_add_http2_port(server, addr.c_str(), creds);
    grpc_server_credentials_release(creds);
    return port;
  }

  std::string token_, cert_, key_, client_ca_;
};

}  // namespace

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Every byte of the longer string is visited whatever the contents.
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool AuthorizationMatches(absl::string_view header_value,
                          absl::string_view token) {
  constexpr absl::string_view kBearer = "Bearer ";
  if (token.empty() || !absl::StartsWith(header_value, kBearer)) return false;
  return ConstantTimeEquals(header_value.substr(kBearer.size()), token);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurity& security) {
  if (security.token.empty())
    return absl::InvalidArgumentError("the token is empty");
  if (security.tls_cert_file.empty() != security.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls-cert and --tls-key");
  }
  if (security.tls_cert_file.empty() && !security.tls_client_ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca needs --tls-cert and --tls-key");
  }
  std::string cert, key, client_ca;
  if (!security.tls_cert_file.empty()) {
    absl::StatusOr<std::string> c =
        ReadPemFile(security.tls_cert_file, "TLS certificate", "CERTIFICATE");
    if (!c.ok()) return c.status();
    absl::StatusOr<std::string> k =
        ReadPemFile(security.tls_key_file, "TLS key", "PRIVATE KEY");
    if (!k.ok()) return k.status();
    cert = *c;
    key = *k;
  }
  if (!security.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPemFile(
        security.tls_client_ca_file, "TLS client CA", "CERTIFICATE");
    if (!ca.ok()) return ca.status();
    client_ca = *ca;
  }
  return std::shared_ptr<grpc::ServerCredentials>(
      new TokenServerCredentials(security.token, cert, key, client_ca));
}

}  // namespace lathe::rpc
