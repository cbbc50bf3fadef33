#include "rpc/channel.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_folder.h"

namespace lathe::rpc {
namespace {

class ChannelTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  test_support::TempFolder folder_;
  const std::string dir_ = folder_.path();
};

TEST_F(ChannelTest, TokenFileIsTrimmedAndMustHoldOnePrintableWord) {
  EXPECT_EQ(ReadTokenFile(Write("t", "  s3cret-token\n")).value(),
            "s3cret-token");
  absl::Status empty = ReadTokenFile(Write("e", " \n\n")).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(empty.message().find("holds no token"), std::string::npos) << empty;
  EXPECT_EQ(ReadTokenFile(Write("s", "two words")).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status missing = ReadTokenFile(dir_ + "/none").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(dir_ + "/none"), std::string::npos)
      << missing;
  EXPECT_NE(ReadTokenFile("").status().message().find("--token-file"),
            std::string::npos);
  EXPECT_NE(ReadTokenFile(dir_).status().message().find("is a directory"),
            std::string::npos);
  // gRPC would refuse it as metadata, naming neither the token nor the file.
  absl::Status huge =
      ReadTokenFile(Write("huge", std::string(9000, 'x'))).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("the token is 9000 bytes; at most 4096"),
            std::string::npos)
      << huge;
}

TEST_F(ChannelTest, ChannelOptionsAreChecked) {
  ChannelOptions options;
  EXPECT_EQ(MakeChannel(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.address = "127.0.0.1:1";
  EXPECT_TRUE(MakeChannel(options).ok());
  options.tls_cert_file = Write("cert.pem", "x");
  EXPECT_NE(MakeChannel(options).status().message().find("--tls-ca"),
            std::string::npos);
  options.tls_ca_file = Write("ca.pem", "x");
  EXPECT_NE(MakeChannel(options).status().message().find("no PEM CERTIFICATE"),
            std::string::npos);
  options.tls_ca_file = Write(
      "ca.pem", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
  EXPECT_NE(MakeChannel(options).status().message().find("--tls-key"),
            std::string::npos);
  options.tls_ca_file = dir_ + "/none.pem";
  EXPECT_EQ(MakeChannel(options).status().code(), absl::StatusCode::kNotFound);
}

// gRPC takes a port modulo 65536: 99999 would reach port 34463.
TEST_F(ChannelTest, APortOutOfRangeIsRefusedByName) {
  for (const char* good :
       {"127.0.0.1:0", "127.0.0.1:65535", "[::1]:7770", "localhost:7770",
        "unix:/tmp/lathe.sock", "dns:///tuner.example"}) {
    EXPECT_TRUE(CheckAddressPort(good).ok()) << good;
  }
  for (const char* bad :
       {"127.0.0.1:65536", "127.0.0.1:99999", "[::1]:123456789012",
        "127.0.0.1:-5", ":abc", "localhost:", "127.0.0.1:7770x"}) {
    absl::Status st = CheckAddressPort(bad);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("is not in 0-65535"), std::string::npos) << st;
  }
  // No port: gRPC would call or listen on 443.
  for (const char* bad : {"127.0.0.1", "localhost", "[::1]", "tuner.example"}) {
    absl::Status st = CheckAddressPort(bad);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("no port"), std::string::npos) << st;
  }
  ChannelOptions options;
  options.address = "127.0.0.1:99999";
  EXPECT_NE(MakeChannel(options).status().message().find("port \"99999\""),
            std::string::npos);
}

TEST_F(ChannelTest, ErrorsNameTheTunerAndKeepTheCode) {
  const absl::Status unavailable = FromGrpc(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused"), "h:1");
  EXPECT_EQ(unavailable.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(unavailable.message(),
            "tuner at h:1 is not reachable: connection refused");
  const absl::Status refused = FromGrpc(
      grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong token"), "h:1");
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(refused.message(),
            "tuner at h:1 refused the credentials: wrong token");
  const absl::Status invalid = FromGrpc(
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "spec.target: empty"),
      "h:1");
  EXPECT_EQ(invalid.message(), "tuner at h:1: spec.target: empty");
  EXPECT_TRUE(FromGrpc(grpc::Status::OK, "h:1").ok());
}

// Against nothing listening: a call fails UNAVAILABLE within its deadline.
TEST_F(ChannelTest, UnreachableTunerFailsWithinTheDeadline) {
  ChannelOptions options;
  options.address = "127.0.0.1:1";
  std::shared_ptr<grpc::Channel> channel = MakeChannel(options).value();
  grpc::ClientContext context;
  PrepareContext(context, "t", 0.5);
  EXPECT_FALSE(channel->WaitForConnected(context.deadline()));
}

}  // namespace
}  // namespace lathe::rpc
