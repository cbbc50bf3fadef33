#include "rpc/channel.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/bounded_read.h"

namespace lathe::rpc {
namespace {

// The most a token or PEM file may hold: a token is at most
// kMaxTokenBytes once trimmed, a certificate chain a few KiB.
constexpr size_t kMaxSecretFileBytes = size_t{1} << 20;

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const char* what) {
  return ReadBoundedFile(path, what, kMaxSecretFileBytes,
                         "kMaxSecretFileBytes");
}

}  // namespace

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* what, const char* label) {
  absl::StatusOr<std::string> text = ReadFile(path, what);
  if (!text.ok()) return text.status();
  if (text->empty())
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, " is empty"));
  bool found = false;
  for (size_t at = text->find("-----BEGIN "); at != std::string::npos && !found;
       at = text->find("-----BEGIN ", at + 1)) {
    const size_t end = text->find("-----", at + 11);
    found = end != std::string::npos &&
            text->substr(at, end - at).find(label) != std::string::npos;
  }
  if (!found) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, ": no PEM ", label,
                     " in it (-----BEGIN ... ", label, "-----)"));
  }
  return text;
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  if (path.empty())
    return absl::InvalidArgumentError("no token file: give --token-file");
  absl::StatusOr<std::string> text = ReadFile(path, "token file");
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, " holds no token"));
  }
  // gRPC refuses metadata past 8 KiB, with a message that names neither the
  // token nor the file.
  constexpr size_t kMaxTokenBytes = 4096;
  if (token.size() > kMaxTokenBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, ": the token is ", token.size(),
                     " bytes; at most ", kMaxTokenBytes));
  }
  for (char c : token) {
    // The token travels as a metadata value: printable ASCII, no spaces.
    if (c <= ' ' || c > '~') {
      return absl::InvalidArgumentError(
          absl::StrCat("token file ", path,
                       ": the token must be printable ASCII without spaces"));
    }
  }
  return token;
}

absl::Status CheckAddressPort(const std::string& address) {
  // gRPC's own forms (a unix socket, a dns:/// name) are gRPC's to judge.
  for (const char* scheme :
       {"unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:", "vsock:"}) {
    if (absl::StartsWith(address, scheme)) return absl::OkStatus();
  }
  // HOST:PORT, with HOST an IPv6 address in brackets or not.
  const size_t colon = address.rfind(':');
  const size_t bracket = address.rfind(']');
  if (colon == std::string::npos ||
      (bracket != std::string::npos && colon < bracket)) {
    // gRPC would use port 443.
    return absl::InvalidArgumentError(absl::StrCat(
        "address \"", address, "\": no port (HOST:PORT, e.g. 127.0.0.1:7770)"));
  }
  const absl::string_view port = absl::string_view(address).substr(colon + 1);
  // Digits only ("-5" would wrap), and not too many for an int.
  int value = 0;
  if (!port.empty() && port.size() <= 5 &&
      std::all_of(port.begin(), port.end(), absl::ascii_isdigit) &&
      absl::SimpleAtoi(port, &value) && value <= 65535) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "address \"", address, "\": port \"", port, "\" is not in 0-65535"));
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const ChannelOptions& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError(
        "no tuner address (--tuner; --connect for a runner)");
  }
  if (absl::Status st = CheckAddressPort(options.address); !st.ok()) return st;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls_ca_file.empty()) {
    if (!options.tls_cert_file.empty()) {
      return absl::InvalidArgumentError(
          "a client certificate needs TLS: give --tls-ca too");
    }
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    absl::StatusOr<std::string> ca =
        ReadPemFile(options.tls_ca_file, "TLS CA", "CERTIFICATE");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
      return absl::InvalidArgumentError(
          "mutual TLS needs both --tls-cert and --tls-key");
    }
    if (!options.tls_cert_file.empty()) {
      absl::StatusOr<std::string> cert =
          ReadPemFile(options.tls_cert_file, "TLS certificate", "CERTIFICATE");
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key =
          ReadPemFile(options.tls_key_file, "TLS key", "PRIVATE KEY");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxServiceMessageBytes);
  args.SetMaxSendMessageSize(kMaxServiceMessageBytes);
  // Reconnect quickly after the tuner restarts.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(options.address, credentials, args);
}

void PrepareContext(grpc::ClientContext& context, const std::string& token,
                    double deadline_s) {
  context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  // Past a day is no deadline: a deadline of 1e300 s overflowed into the
  // past and failed every call at once.
  if (deadline_s > 0 && deadline_s <= 86400) {
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(deadline_s * 1000)));
  }
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& address) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  const std::string& message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::Status(code, absl::StrCat("tuner at ", address,
                                             " is not reachable: ", message));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::Status(
          code, absl::StrCat("tuner at ", address, " did not answer in time"));
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::Status(code,
                          absl::StrCat("tuner at ", address,
                                       " refused the credentials: ", message));
    default:
      return absl::Status(code,
                          absl::StrCat("tuner at ", address, ": ", message));
  }
}

bool IsTransient(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
      return true;
    default:
      return false;
  }
}

}  // namespace lathe::rpc
