// Warnings for a server that is set up to expose what it should not: a
// secret (the shared token's file, the TLS private key) that the file's
// group or other users may read, and a listen address that other machines
// can reach while calls (and the token in them) travel without TLS. Each
// warning is one line naming the file or address and what to do; the
// server still starts (an operator may mean it, e.g. on a private network).
// Tests: tests/rpc/exposure_warnings_test.cc.
#pragma once

#include <string>
#include <vector>

namespace lathe::rpc {

// Whether `address` ("host:port", "[v6]:port", "unix:PATH") can be reached
// only from this machine: a loopback host ("localhost", 127.0.0.0/8,
// "::1") or a Unix socket.
bool IsLoopbackAddress(const std::string& address);

// The warnings for serving on `listen` with the token read from
// `token_file` and, when `tls_key_file` is not empty, TLS with that key.
std::vector<std::string> ExposureWarnings(const std::string& listen,
                                          const std::string& token_file,
                                          const std::string& tls_key_file);

}  // namespace lathe::rpc
