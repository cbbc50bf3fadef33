#include "cli/runner_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/target/target_info.h"
#include "rpc/channel.h"
#include "runner/measurable_target.h"
#include "runner/remote/remote_runner.h"

#ifndef LATHE_VERSION
#define LATHE_VERSION "unknown"
#endif

namespace lathe::cli {
namespace {

struct RunnerCommandOptions {
  std::string connect;
  std::string token_file;
  std::string target = "host";
  std::string name;
  std::string tls_ca, tls_cert, tls_key;
  double simulate_ms = 0;
  double timeout_s = 60;
  bool no_prefetch = false;
};

std::atomic<bool> g_runner_stop{false};

extern "C" void OnRunnerSignal(int) { g_runner_stop.store(true); }

absl::Status RunRunner(const RunnerCommandOptions& options) {
  absl::StatusOr<std::string> token = rpc::ReadTokenFile(options.token_file);
  if (!token.ok()) return token.status();
  if (options.simulate_ms < 0)
    return absl::InvalidArgumentError("--simulate-ms must be >= 0");
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  if (options.simulate_ms == 0) {
    // Only what runs here, as it would on the target, is measured here.
    if (absl::Status st = runner::CheckMeasurableHere(*target); !st.ok())
      return st;
  }
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);

  runner::RemoteRunnerOptions remote;
  remote.channel.address = options.connect;
  remote.channel.token = *token;
  remote.channel.tls_ca_file = options.tls_ca;
  remote.channel.tls_cert_file = options.tls_cert;
  remote.channel.tls_key_file = options.tls_key;
  remote.name = options.name.empty()
                    ? absl::StrCat("runner@", host, "-", getpid())
                    : options.name;
  remote.target = target->ToString();
  remote.device = runner::MeasuringDeviceDescription(*target);
  remote.lathe_version = LATHE_VERSION;
  remote.simulate_ms = options.simulate_ms;
  remote.local =
      runner::WorkerFor(*target, {"/proc/self/exe", "runner-worker"});
  remote.local.timeout_s = options.timeout_s;
  remote.prefetch = !options.no_prefetch;
  remote.stop = &g_runner_stop;

  struct sigaction action = {};
  action.sa_handler = OnRunnerSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return runner::RunRemoteRunner(remote);
}

}  // namespace

void AddRunnerCommand(CLI::App& app) {
  auto options = std::make_shared<RunnerCommandOptions>();
  CLI::App* command =
      app.add_subcommand("runner",
                         "measure candidates for a tuner daemon (lathe serve): "
                         "connects out, pulls work");
  command
      ->add_option("--connect", options->connect,
                   "the tuner's address, host:port")
      ->required();
  command
      ->add_option("--token-file", options->token_file,
                   "file holding the tuner's shared token")
      ->required();
  command->add_option(
      "--target", options->target,
      "the target measured here (default host; cuda: this machine's GPU); it "
      "only gets work of jobs with exactly this target");
  command->add_option("--name", options->name,
                      "this runner's name (default runner@HOST-PID)");
  command->add_option("--tls-ca", options->tls_ca,
                      "TLS: the CA of the tuner's certificate (PEM)");
  command->add_option("--tls-cert", options->tls_cert,
                      "mutual TLS: this runner's certificate");
  command->add_option("--tls-key", options->tls_key,
                      "mutual TLS: this runner's key");
  command
      ->add_option(
          "--timeout", options->timeout_s,
          "per candidate: build, check and timing, seconds (default 60)")
      ->check(Seconds());
  command->add_flag("--no-prefetch", options->no_prefetch,
                    "ask for the next candidate only when this one is measured "
                    "(by default the "
                    "next is fetched during the measurement; a short queue "
                    "still goes to idle "
                    "runners first)");
  command
      ->add_option(
          "--simulate-ms", options->simulate_ms,
          "DISPATCH BENCHMARK ONLY: measure nothing, answer each candidate "
          "after "
          "this many ms with a fake time (takes only simulated jobs' work)")
      ->check(NonNegativeNumber());
  SetAction(command, [options] { return RunRunner(*options); });
}

}  // namespace lathe::cli
