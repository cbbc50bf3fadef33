// A remote runner (`lathe runner --connect ADDR`): connects out to the
// tuner daemon (so it works behind NAT), registers its target and device,
// pulls work under leases, renews them with heartbeats while it measures,
// and reports each result. Its traffic with the tuner runs beside the
// measurement (runner/remote/lease_courier.h): each report carries the next
// lease back, fetched while the previous candidate was measured.
//
// It measures exactly as `lathe tune` does, with a LocalRunner
// (runner/local_runner.h): each candidate is built from (workload, trace,
// target) with this runner's own compiler in a sandboxed worker process.
// Nothing but those three and the measure options comes from the network;
// no compiled code is ever accepted.
//
// With `simulate_ms` > 0 it measures nothing: each candidate "takes"
// simulate_ms and gets that fake time. The runner registers as simulated,
// and the daemon gives it only the work of simulated jobs (the dispatch
// benchmark), whose records never reach a real database.
//
// The runner outlives the daemon: while the tuner is unreachable it retries,
// and when the daemon no longer knows it (restarted) it registers again.
// Tests: through `lathe runner` processes in
// tests/tuner/service/service_integration_test.sh, and in-process in
// bench_dispatch.
#pragma once

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "rpc/channel.h"
#include "runner/local_runner.h"

namespace lathe::runner {

struct RemoteRunnerOptions {
  rpc::ChannelOptions channel;
  std::string name;    // e.g. "runner@host-12"
  std::string target;  // canonical target string it measures
  std::string device;  // free text
  std::string lathe_version;
  double simulate_ms = 0;     // > 0: dispatch benchmark, fake times
  LocalRunnerOptions local;   // the measurement worker
  double acquire_wait_s = 2;  // long poll of AcquireWork
  // Ask for the next lease while measuring one, so the next measurement
  // starts without a round trip (runner/remote/lease_courier.h).
  bool prefetch = true;
  // Set to stop (SIGINT, SIGTERM): the candidate being measured is
  // abandoned and its lease given back (released) at once.
  const std::atomic<bool>* stop = nullptr;
  // Progress lines on stderr.
  bool log = true;
};

// Runs until `stop` (OK) or an error that retrying cannot fix: the tuner
// refused the credentials (Unauthenticated), refused the registration
// (InvalidArgument naming the field), quarantined this runner
// (FailedPrecondition), or the worker cannot start (Unavailable).
absl::Status RunRemoteRunner(const RemoteRunnerOptions& options);

}  // namespace lathe::runner
