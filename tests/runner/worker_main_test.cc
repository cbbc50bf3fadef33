// Tests of lathe-runner-worker (runner/worker_main.cc, RunMeasureWorker) on
// the wire: its hello, a request and its result, its exit at the end of
// its input, and a request that is not one.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/measure.pb.h"
#include "runner/worker_process.h"
#include "runner/worker_protocol.h"

#ifndef LATHE_RUNNER_WORKER
#error "LATHE_RUNNER_WORKER: the path of lathe-runner-worker"
#endif

namespace lathe::runner {
namespace {

std::unique_ptr<WorkerProcess> StartWorker() {
  WorkerProcessOptions options;
  options.argv = {LATHE_RUNNER_WORKER};
  absl::StatusOr<std::unique_ptr<WorkerProcess>> worker =
      WorkerProcess::Spawn(options);
  EXPECT_TRUE(worker.ok()) << worker.status();
  if (!worker.ok()) return nullptr;
  absl::StatusOr<std::string> hello = (*worker)->Receive(30);
  EXPECT_TRUE(hello.ok()) << hello.status();
  EXPECT_EQ(hello.value_or(""), kWorkerHello);
  return *std::move(worker);
}

TEST(WorkerMain, SaysHelloAnswersEachRequestAndExitsAtTheEnd) {
  auto worker = StartWorker();
  ASSERT_NE(worker, nullptr);
  proto::MeasureRequest request;
  request.set_workload("matmul:M=8,N=8,K=8");  // no trace: the default schedule
  request.set_target("host -num-threads=1");
  request.set_min_repeats(2);
  request.set_max_repeats(2);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(worker->Send(request.SerializeAsString(), 30).ok());
    absl::StatusOr<std::string> ack = worker->Receive(30);
    ASSERT_TRUE(ack.ok()) << ack.status();
    EXPECT_EQ(*ack, "");
    absl::StatusOr<std::string> reply = worker->Receive(30);
    ASSERT_TRUE(reply.ok()) << reply.status();
    proto::MeasureResult result;
    ASSERT_TRUE(result.ParseFromString(*reply));
    EXPECT_EQ(result.status(), proto::MEASURE_OK) << result.error();
    EXPECT_EQ(result.times_s_size(), 2);
    EXPECT_EQ(result.structural_hash().size(), 16u);
  }
  // Nothing printed by the compiler reached the channel, and the worker
  // wrote nothing else either.
  EXPECT_EQ(worker->stderr_tail(), "");
  EXPECT_TRUE(worker->Running());
}

TEST(WorkerMain, ExitsWithZeroAtTheEndOfItsInput) {
  WorkerProcessOptions options;
  options.argv = {"/bin/sh", "-c",
                  std::string(LATHE_RUNNER_WORKER) +
                      " </dev/null; echo worker exit $? >&2; exit 1"};
  absl::StatusOr<std::unique_ptr<WorkerProcess>> sh =
      WorkerProcess::Spawn(options);
  ASSERT_TRUE(sh.ok()) << sh.status();
  absl::StatusOr<std::string> hello = (*sh)->Receive(30);
  EXPECT_EQ(hello.value_or(""), kWorkerHello);
  absl::StatusOr<std::string> end = (*sh)->Receive(30);
  EXPECT_EQ(end.status().message(),
            "exited with status 1; stderr: worker exit 0");
}

TEST(WorkerMain, RequestThatIsNotAMeasureRequestGetsARunError) {
  auto worker = StartWorker();
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Send("\xff\xff\xff", 30).ok());
  EXPECT_EQ(worker->Receive(30).value_or("?"), "");  // the acknowledgement
  absl::StatusOr<std::string> reply = worker->Receive(30);
  ASSERT_TRUE(reply.ok()) << reply.status();
  proto::MeasureResult result;
  ASSERT_TRUE(result.ParseFromString(*reply));
  EXPECT_EQ(result.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(result.error(), "worker: the request is not a MeasureRequest");
}

}  // namespace
}  // namespace lathe::runner
