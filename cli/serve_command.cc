#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/output_paths.h"
#include "database/database.h"
#include "database/writer_lock.h"
#include "rpc/channel.h"
#include "rpc/exposure_warnings.h"
#include "rpc/server_auth.h"
#include "tuner/service/compiler_hooks.h"
#include "tuner/service/daemon.h"
#include "tuner/service/daemon_metrics.h"
#include "tuner/service/http_listener.h"
#include "tuner/service/prometheus_text.h"
#include "tuner/service/server.h"

#ifndef LATHE_VERSION
#define LATHE_VERSION "unknown"
#endif

namespace lathe::cli {
namespace {

struct ServeOptions {
  std::string listen = "127.0.0.1:7770";
  std::string db_path;
  std::string token_file;
  std::string tls_cert, tls_key, tls_client_ca;
  double lease_s = 30;
  int64_t max_trials_per_job = 10000;
  int max_workloads_per_job = 256;
  int quarantine_after = 5;
  int max_runners = service::RunnerRegistry::kDefaultMaxRunners;
  int max_watchers = service::DaemonOptions::kDefaultMaxWatchers;
  int64_t max_workload_bytes = service::DaemonOptions::kDefaultMaxWorkloadBytes;
  int parallelism = 16;
  int build_ahead = service::LeaseManager::kDefaultBuildAheadHints;
  std::string port_file;
  std::string metrics_listen;  // "": no metrics endpoint
  int max_message_bytes = rpc::kMaxServiceMessageBytes;
};

absl::Status RunServe(const ServeOptions& options) {
  absl::StatusOr<std::string> token = rpc::ReadTokenFile(options.token_file);
  if (!token.ok()) return token.status();
  if (options.db_path.empty())
    return absl::InvalidArgumentError("--db is required");
  // Before the database is created: a refused address leaves no file.
  if (absl::Status st = rpc::CheckAddressPort(options.listen); !st.ok())
    return st;
  if (absl::Status st = CheckOutputPaths(
          {{"--db", options.db_path}, {"--token-file", options.token_file}},
          {{"--port-file", options.port_file}});
      !st.ok()) {
    return st;
  }
  // Below a second a lease expires between heartbeats (and the daemon spins
  // expiring them); past a day a dead runner holds its candidate for good.
  if (!(options.lease_s >= 1 && options.lease_s <= 86400)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--lease-seconds must be in [1, 86400], got ", options.lease_s));
  }
  if (options.max_message_bytes < 1024) {
    return absl::InvalidArgumentError(
        "--max-message-bytes must be at least 1024");
  }
  if (options.max_workloads_per_job < 1) {
    return absl::InvalidArgumentError(
        "--max-workloads-per-job must be at least 1");
  }
  rpc::ServerSecurity security;
  security.token = *token;
  security.tls_cert_file = options.tls_cert;
  security.tls_key_file = options.tls_key;
  security.tls_client_ca_file = options.tls_client_ca;
  // TLS files that cannot be read or are not PEM of the right kind, before
  // the database is created, as for a refused address.
  if (absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
          rpc::MakeServerCredentials(security);
      !credentials.ok()) {
    return credentials.status();
  }
  struct stat db_stat;
  const bool db_existed = stat(options.db_path.c_str(), &db_stat) == 0;

  // SIGINT and SIGTERM are taken by sigwait below; every thread started
  // from here on inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  service::DaemonOptions daemon_options;
  daemon_options.compiler = service::CompilerHooks();
  daemon_options.db_path = options.db_path;
  daemon_options.lease_time = absl::Seconds(options.lease_s);
  daemon_options.max_trials_per_job = options.max_trials_per_job;
  daemon_options.max_workloads_per_job = options.max_workloads_per_job;
  daemon_options.quarantine_after = options.quarantine_after;
  daemon_options.max_runners = options.max_runners;
  daemon_options.max_watchers = options.max_watchers;
  daemon_options.max_workload_bytes = options.max_workload_bytes;
  daemon_options.measure_parallelism = options.parallelism;
  daemon_options.build_ahead_hints = options.build_ahead;
  daemon_options.lathe_version = LATHE_VERSION;
  absl::StatusOr<std::unique_ptr<service::Daemon>> daemon =
      service::Daemon::Start(daemon_options);
  if (!daemon.ok()) return daemon.status();

  // A daemon that never listened leaves no database it created (a
  // certificate and key that are not a pair are found only when the server
  // starts, an address taken only when it is bound).
  auto abandon = [&](const absl::Status& why) {
    daemon->reset();
    if (!db_existed) {
      db::RemoveDatabaseFiles(options.db_path);
      std::remove(db::WriterLockPath(options.db_path).c_str());
    }
    return why;
  };
  absl::StatusOr<std::unique_ptr<service::Server>> server =
      service::Server::Start(**daemon, options.listen, security,
                             options.max_message_bytes);
  if (!server.ok()) return abandon(server.status());
  // Prometheus's scrapes (docs/service.md, "Metrics"): plain HTTP, counts
  // only. Stopped before the daemon it reads.
  std::unique_ptr<service::HttpListener> metrics;
  if (!options.metrics_listen.empty()) {
    service::Daemon* read = daemon->get();
    absl::StatusOr<std::unique_ptr<service::HttpListener>> started =
        service::HttpListener::Start(
            options.metrics_listen,
            {{"/metrics", [read] {
                return service::HttpResponse{
                    std::string(service::kPrometheusContentType),
                    service::DaemonMetricsText(*read)};
              }}});
    if (!started.ok()) {
      (*server)->Shutdown();
      server->reset();
      return abandon(absl::Status(
          started.status().code(),
          absl::StrCat("--metrics-listen: ", started.status().message())));
    }
    metrics = *std::move(started);
  }
  // Served anyway (the operator may mean it), but said once it listens.
  for (const std::string& warning : rpc::ExposureWarnings(
           options.listen, options.token_file, options.tls_key)) {
    std::fprintf(stderr, "lathe serve: warning: %s\n", warning.c_str());
  }
  const std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::fprintf(stderr, "lathe serve: listening on %s:%d (%s), database %s\n",
               host.c_str(), (*server)->port(),
               options.tls_cert.empty() ? "token, no TLS" : "token and TLS",
               options.db_path.c_str());
  if (metrics != nullptr) {
    const std::string metrics_host =
        options.metrics_listen.substr(0, options.metrics_listen.rfind(':'));
    std::fprintf(stderr,
                 "lathe serve: metrics on http://%s:%d/metrics (plain HTTP)\n",
                 metrics_host.c_str(), metrics->port());
  }
  std::fflush(stderr);
  if (!options.port_file.empty()) {
    // Written whole, then renamed: a reader never sees half a number.
    const std::string partial = options.port_file + ".partial";
    std::ofstream out(partial);
    out << (*server)->port() << "\n";
    out.close();
    if (!out || std::rename(partial.c_str(), options.port_file.c_str()) != 0) {
      std::remove(partial.c_str());
      if (metrics != nullptr) metrics->Shutdown();
      (*server)->Shutdown();
      (*daemon)->Shutdown();
      return absl::PermissionDeniedError(
          absl::StrCat("--port-file ", options.port_file, ": cannot write"));
    }
  }

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr,
               "lathe serve: stopping (signal %d); unfinished jobs (not "
               "simulated ones) resume "
               "on restart\n",
               signal_number);
  if (metrics != nullptr) metrics->Shutdown();
  (*daemon)->Shutdown();
  (*server)->Shutdown();
  // A job's preparation whose client gave up may still run on its thread
  // (job_preparation.h): never waited for, and no exit handler runs
  // beside it.
  if (const int preparing = (*daemon)->preparing(); preparing > 0) {
    server->reset();
    daemon->reset();  // the database closed
    std::fprintf(stderr,
                 "lathe serve: stopped; %d abandoned job preparation(s) "
                 "dropped\n",
                 preparing);
    std::fflush(stderr);
    std::_Exit(0);
  }
  return absl::OkStatus();
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve",
      "run the tuner daemon: jobs measured by remote runners (lathe runner)");
  command->add_option(
      "--listen", options->listen,
      "address to listen on, e.g. 0.0.0.0:7770; port 0 picks a free one "
      "(default 127.0.0.1:7770)");
  command
      ->add_option("--db", options->db_path, "the database of jobs and results")
      ->required();
  command
      ->add_option("--token-file", options->token_file,
                   "file holding the shared token every call must carry")
      ->required();
  command->add_option("--tls-cert", options->tls_cert,
                      "serve TLS with this certificate (PEM)");
  command->add_option("--tls-key", options->tls_key,
                      "the certificate's private key (PEM)");
  command->add_option(
      "--tls-client-ca", options->tls_client_ca,
      "mutual TLS: clients must present a certificate signed by this CA (PEM)");
  command->add_option(
      "--lease-seconds", options->lease_s,
      "a runner's lease expires this long after its last heartbeat; the "
      "candidate goes to another runner (default 30)");
  command->add_option("--max-trials-per-job", options->max_trials_per_job,
                      "refuse jobs asking for more trials (default 10000)");
  command->add_option("--max-workloads-per-job", options->max_workloads_per_job,
                      "refuse jobs with more workloads (default 256; a model's "
                      "tasks are one job)");
  command
      ->add_option("--quarantine-after", options->quarantine_after,
                   "consecutive failures after which a runner gets no more "
                   "work; 0: never "
                   "(default 5)")
      ->check(WholeNumber(0, 1000000));
  command
      ->add_option("--max-runners", options->max_runners,
                   "refuse runner registrations beyond this many known "
                   "runners (default and most 1000, so that their list fits "
                   "a message)")
      ->check(WholeNumber(1, 1000));
  command
      ->add_option("--max-watchers", options->max_watchers,
                   "refuse job watches (lathe watch) beyond this many at once "
                   "(default 64)")
      ->check(WholeNumber(1, 4096));
  command
      ->add_option("--max-workload-bytes", options->max_workload_bytes,
                   "refuse workloads whose tensors take more bytes (default "
                   "4 GiB; also refused: more than the largest worker memory "
                   "limit of the target's runners)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  command
      ->add_option(
          "--parallelism", options->parallelism,
          "candidates of one job out for measurement at once (default 16)")
      ->check(WholeNumber(1, 4096));
  command
      ->add_option(
          "--build-ahead", options->build_ahead,
          "queued candidates a lease names for its runner to build while it "
          "measures; 0: none (default 4)")
      ->check(WholeNumber(0, 64));
  command->add_option("--max-message-bytes", options->max_message_bytes,
                      "refuse requests larger than this (default 4 MiB)");
  command->add_option("--port-file", options->port_file,
                      "write the port listened on to this file once serving");
  command
      ->add_option(
          "--metrics-listen", options->metrics_listen,
          "serve Prometheus metrics on http://ADDR/metrics (HOST:PORT, e.g. "
          "0.0.0.0:9100; port 0 picks a free one): plain HTTP, no token, "
          "counts only (docs/service.md, Metrics)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            absl::StatusOr<std::pair<std::string, int>> parsed =
                service::ParseListenAddress(text);
            return parsed.ok() ? std::string()
                               : std::string(parsed.status().message());
          },
          "HOST:PORT"));
  SetAction(command, [options] { return RunServe(*options); });
}

}  // namespace lathe::cli
