#include "rpc/server_auth.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "proto/service.grpc.pb.h"
#include "rpc/channel.h"
#include "tests/support/temp_folder.h"
#include "tuner/service/compiler_hooks.h"
#include "tuner/service/daemon.h"
#include "tuner/service/server.h"

namespace lathe::rpc {
namespace {

TEST(Auth, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("s3cret", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("s3cret", "s3cres"));
  EXPECT_FALSE(ConstantTimeEquals("s3cret", "s3cret-and-more"));
  EXPECT_FALSE(ConstantTimeEquals("s3cret", ""));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  // A prefix is not the token, nor is the token with a NUL appended.
  EXPECT_FALSE(ConstantTimeEquals("abc", std::string("abc\0", 4)));
}

TEST(Auth, AuthorizationNeedsTheBearerToken) {
  EXPECT_TRUE(AuthorizationMatches("Bearer tok", "tok"));
  EXPECT_FALSE(AuthorizationMatches("tok", "tok"));
  EXPECT_FALSE(AuthorizationMatches("Bearer tok2", "tok"));
  EXPECT_FALSE(AuthorizationMatches("bearer tok", "tok"));
  // An empty configured token never matches anything.
  EXPECT_FALSE(AuthorizationMatches("Bearer ", ""));
}

TEST(Auth, CredentialsRefuseBadTlsSettings) {
  ServerSecurity security;
  EXPECT_EQ(MakeServerCredentials(security).status().code(),
            absl::StatusCode::kInvalidArgument);
  security.token = "t";
  EXPECT_TRUE(MakeServerCredentials(security).ok());
  security.tls_cert_file = "/nonexistent/cert.pem";
  EXPECT_EQ(MakeServerCredentials(security).status().code(),
            absl::StatusCode::kInvalidArgument);
  security.tls_key_file = "/nonexistent/key.pem";
  EXPECT_EQ(MakeServerCredentials(security).status().code(),
            absl::StatusCode::kNotFound);
}

// A real server on loopback: calls without the token, or with a wrong one,
// are refused before any handler runs.
class AuthServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service::DaemonOptions options;
    options.compiler = service::CompilerHooks();
    options.db_path = dir_ + "/t.db";
    options.log = false;
    daemon_ = service::Daemon::Start(options).value();
    ServerSecurity security;
    security.token = "right-token";
    server_ = service::Server::Start(*daemon_, "127.0.0.1:0", security, 1 << 16)
                  .value();
    rpc::ChannelOptions channel;
    channel.address = absl::StrCat("127.0.0.1:", server_->port());
    auto made = rpc::MakeChannel(channel).value();
    tuner_ = proto::TunerService::NewStub(made);
    runners_ = proto::RunnerService::NewStub(made);
  }
  void TearDown() override {
    server_.reset();
    daemon_.reset();
  }

  test_support::TempFolder folder_;
  const std::string dir_ = folder_.path();
  std::unique_ptr<service::Daemon> daemon_;
  std::unique_ptr<service::Server> server_;
  std::unique_ptr<proto::TunerService::Stub> tuner_;
  std::unique_ptr<proto::RunnerService::Stub> runners_;
};

TEST_F(AuthServerTest, NoTokenOrWrongTokenIsUnauthenticatedBeforeTheHandler) {
  // An empty spec would be INVALID_ARGUMENT from the handler: the answer
  // UNAUTHENTICATED shows the handler never ran.
  for (const char* token : {"", "wrong-token", "right-token-not"}) {
    grpc::ClientContext context;
    if (*token != '\0') rpc::PrepareContext(context, token, 10);
    proto::JobStatus job;
    const grpc::Status status =
        tuner_->SubmitJob(&context, proto::SubmitJobRequest(), &job);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << token;
  }
  {
    grpc::ClientContext context;
    proto::RegisterRunnerRequest request;
    request.set_name("intruder");
    request.set_target("llvm -num-threads=1");
    proto::RegisterRunnerResponse response;
    EXPECT_EQ(
        runners_->RegisterRunner(&context, request, &response).error_code(),
        grpc::StatusCode::UNAUTHENTICATED);
  }
  EXPECT_TRUE(daemon_->ListRunners().empty());
  // The right token gets the handler's own answer.
  grpc::ClientContext context;
  rpc::PrepareContext(context, "right-token", 10);
  proto::JobStatus job;
  const grpc::Status status =
      tuner_->SubmitJob(&context, proto::SubmitJobRequest(), &job);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("spec.workloads"), std::string::npos)
      << status.error_message();
}

TEST_F(AuthServerTest, OversizedRequestIsRefusedAndTheServerGoesOn) {
  grpc::ClientContext context;
  rpc::PrepareContext(context, "right-token", 10);
  proto::SubmitJobRequest request;
  request.mutable_spec()->add_workloads(std::string(100000, 'x'));
  proto::JobStatus job;
  EXPECT_EQ(tuner_->SubmitJob(&context, request, &job).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  grpc::ClientContext again;
  rpc::PrepareContext(again, "right-token", 10);
  proto::ListJobsResponse jobs;
  EXPECT_TRUE(tuner_->ListJobs(&again, proto::ListJobsRequest(), &jobs).ok());
}

}  // namespace
}  // namespace lathe::rpc
