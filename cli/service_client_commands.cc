#include "cli/service_client_commands.h"

#include <grpcpp/grpcpp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/model_args.h"
#include "cli/model_tasks.h"
#include "cli/shown_text.h"
#include "cli/time_text.h"
#include "compiler/codegen/cpu_target.h"
#include "google/protobuf/util/json_util.h"
#include "proto/service.grpc.pb.h"
#include "rpc/channel.h"
#include "tuner/search/measurement_rounds.h"
#include "tuner/service/job_table.h"
#include "tuner/service/state_names.h"

namespace lathe::cli {
namespace {

// What every client command needs to reach the tuner.
struct ClientOptions {
  std::string tuner;
  std::string token_file;
  std::string tls_ca, tls_cert, tls_key;
  double timeout_s = 30;
  bool json = false;
};

void AddClientOptions(CLI::App* command, ClientOptions& options) {
  command
      ->add_option("--tuner", options.tuner, "the tuner's address, host:port")
      ->required();
  command->add_option(
      "--token-file", options.token_file,
      "file holding the tuner's shared token (default: $LATHE_TOKEN_FILE)");
  command->add_option("--tls-ca", options.tls_ca,
                      "TLS: the CA of the tuner's certificate (PEM)");
  command->add_option("--tls-cert", options.tls_cert,
                      "mutual TLS: this client's certificate");
  command->add_option("--tls-key", options.tls_key,
                      "mutual TLS: this client's key");
  command
      ->add_option("--timeout", options.timeout_s,
                   "seconds to wait for the tuner's answer (default 30)")
      ->check(Seconds());
}

class Client {
 public:
  static absl::StatusOr<Client> Connect(const ClientOptions& options) {
    std::string token_file = options.token_file;
    if (token_file.empty() && std::getenv("LATHE_TOKEN_FILE") != nullptr) {
      token_file = std::getenv("LATHE_TOKEN_FILE");
    }
    absl::StatusOr<std::string> token = rpc::ReadTokenFile(token_file);
    if (!token.ok()) return token.status();
    rpc::ChannelOptions channel;
    channel.address = options.tuner;
    channel.token = *token;
    channel.tls_ca_file = options.tls_ca;
    channel.tls_cert_file = options.tls_cert;
    channel.tls_key_file = options.tls_key;
    absl::StatusOr<std::shared_ptr<grpc::Channel>> made =
        rpc::MakeChannel(channel);
    if (!made.ok()) return made.status();
    return Client(options, *token, proto::TunerService::NewStub(*made));
  }

  // One call: the token, the deadline, errors in one line naming the tuner.
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> Call(Method method, const Request& request) {
    grpc::ClientContext context;
    rpc::PrepareContext(context, token_, options_.timeout_s);
    Response response;
    const grpc::Status status =
        ((*stub_).*method)(&context, request, &response);
    if (!status.ok()) return rpc::FromGrpc(status, options_.tuner);
    return response;
  }

  proto::TunerService::Stub& stub() { return *stub_; }
  const std::string& token() const { return token_; }
  const ClientOptions& options() const { return options_; }

 private:
  Client(ClientOptions options, std::string token,
         std::unique_ptr<proto::TunerService::Stub> stub)
      : options_(std::move(options)),
        token_(std::move(token)),
        stub_(std::move(stub)) {}
  ClientOptions options_;
  std::string token_;
  std::shared_ptr<proto::TunerService::Stub> stub_;
};

std::string Json(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

std::string ProgressLine(const proto::JobStatus& job) {
  std::string line =
      absl::StrFormat("%s %s %lld/%lld trials", Shown(job.id()),
                      service::JobStateName(job.state()),
                      static_cast<long long>(job.trials_done()),
                      static_cast<long long>(job.trials_total()));
  if (job.work_leased() + job.work_queued() > 0) {
    absl::StrAppendFormat(&line, " (%d measuring, %d queued)",
                          job.work_leased(), job.work_queued());
  }
  for (const proto::TaskStatus& t : job.tasks()) {
    const std::string name = t.workload().substr(0, t.workload().find(','));
    if (t.best_s() > 0) {
      absl::StrAppendFormat(&line, " | %s %s %.1f GFLOP/s", Shown(name),
                            TimeText(t.best_s()), t.best_gflops());
    }
  }
  if (!job.error().empty())
    absl::StrAppend(&line, " | error: ", Shown(job.error()));
  // Once the job has ended: its report, beside the daemon's database.
  if (!job.report_path().empty()) {
    absl::StrAppend(&line, " | report: ", Shown(job.report_path()),
                    " (on the tuner's machine)");
  }
  return line;
}

// Follows the job until it ends; its final status.
absl::StatusOr<proto::JobStatus> Follow(Client& client, const std::string& id,
                                        bool print_stdout) {
  grpc::ClientContext context;
  rpc::PrepareContext(context, client.token(),
                      0);  // as long as the job takes
  proto::WatchJobRequest request;
  request.set_id(id);
  std::unique_ptr<grpc::ClientReader<proto::JobEvent>> reader =
      client.stub().WatchJob(&context, request);
  proto::JobEvent event;
  proto::JobStatus last;
  bool any = false;
  while (reader->Read(&event)) {
    any = true;
    last = event.job();
    std::fprintf(print_stdout ? stdout : stderr, "%s\n",
                 ProgressLine(last).c_str());
    std::fflush(print_stdout ? stdout : stderr);
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return rpc::FromGrpc(status, client.options().tuner);
  if (!any || !service::IsFinal(last.state())) {
    return absl::UnavailableError(
        absl::StrCat("tuner at ", client.options().tuner,
                     " ended the watch of ", id, " before the job ended"));
  }
  return last;
}

absl::Status FinalStatus(const proto::JobStatus& job) {
  if (job.state() == proto::JOB_DONE) return absl::OkStatus();
  return absl::AbortedError(
      absl::StrCat("job ", job.id(), " ", service::JobStateName(job.state()),
                   job.error().empty() ? "" : ": ", job.error()));
}

struct SubmitOptions {
  ClientOptions client;
  std::vector<std::string> specs;  // or one model (MODEL.onnx)
  ModelArgs model;                 // its path set from specs; --shape
  std::string target = "host";
  int64_t trials = 200;
  int batch = 0;
  uint64_t seed = 0;
  double min_time_s = 0;
  std::string weights;
  int remeasure_top = 0;
  int measure_rounds = 0;
  bool simulated = false;
  bool wait = false;
};

absl::Status RunSubmit(SubmitOptions options) {
  proto::SubmitJobRequest request;
  proto::JobSpec& spec = *request.mutable_spec();
  absl::StatusOr<bool> is_model = ModelArgument(options.specs, options.model);
  if (!is_model.ok()) return is_model.status();
  if (*is_model) {
    // The model stays here: the daemon gets its tasks' specs, each weighted
    // by how often the model calls it.
    if (!options.weights.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--weights: the tasks of ", options.model.path,
          " are weighted by how often the model calls them; give no "
          "--weights with a model"));
    }
    absl::StatusOr<std::vector<ModelTaskWorkload>> tasks =
        LoadModelTasks(options.model);
    if (!tasks.ok()) return tasks.status();
    if (tasks->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.model.path,
                       ": the model calls no kernel (lathe tasks lists none)"));
    }
    for (const ModelTaskWorkload& t : *tasks) {
      spec.add_workloads(t.workload.CanonicalForm());
      spec.add_weights(t.task.count);
    }
  } else {
    for (const std::string& s : options.specs) spec.add_workloads(s);
  }
  // "host" is this machine: the target goes out resolved, as runners
  // announce theirs.
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  spec.set_target(target->ToString());
  spec.set_max_trials(options.trials);
  spec.set_batch_size(options.batch);
  spec.set_seed(options.seed);
  spec.set_min_time_s(options.min_time_s);
  spec.set_simulated(options.simulated);
  spec.set_remeasure_top(options.remeasure_top);
  spec.set_measure_rounds(options.measure_rounds);
  if (!*is_model && !options.weights.empty()) {
    for (absl::string_view w : absl::StrSplit(options.weights, ',')) {
      double value = 0;
      if (!absl::SimpleAtod(w, &value) || !std::isfinite(value) || value <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--weights: \"", w, "\" is not a positive number"));
      }
      spec.add_weights(value);
    }
  }
  absl::StatusOr<Client> client = Client::Connect(options.client);
  if (!client.ok()) return client.status();
  absl::StatusOr<proto::JobStatus> job =
      client->Call<proto::SubmitJobRequest, proto::JobStatus>(
          &proto::TunerService::Stub::SubmitJob, request);
  if (!job.ok()) return job.status();
  // A job no runner can take waits silently otherwise.
  absl::StatusOr<proto::ListRunnersResponse> runners =
      client->Call<proto::ListRunnersRequest, proto::ListRunnersResponse>(
          &proto::TunerService::Stub::ListRunners, proto::ListRunnersRequest());
  if (runners.ok()) {
    bool matched = false;
    for (const proto::RunnerInfo& r : runners->runners()) {
      matched |= r.target() == job->spec().target() &&
                 r.simulated() == job->spec().simulated() &&
                 r.state() != proto::RUNNER_QUARANTINED &&
                 r.state() != proto::RUNNER_LOST;
    }
    if (!matched) {
      std::fprintf(stderr,
                   "lathe: warning: no %srunner of target \"%s\" is connected; "
                   "job %s waits "
                   "for one (lathe runners lists them)\n",
                   job->spec().simulated() ? "simulated " : "",
                   job->spec().target().c_str(), job->id().c_str());
    }
  }
  if (!options.wait) {
    std::printf("%s\n",
                options.client.json ? Json(*job).c_str() : job->id().c_str());
    return absl::OkStatus();
  }
  std::fprintf(stderr, "submitted job %s\n", job->id().c_str());
  absl::StatusOr<proto::JobStatus> final =
      Follow(*client, job->id(), /*print_stdout=*/false);
  if (!final.ok()) return final.status();
  std::printf("%s\n", options.client.json ? Json(*final).c_str()
                                          : ProgressLine(*final).c_str());
  return FinalStatus(*final);
}

void PrintJobs(const proto::ListJobsResponse& jobs) {
  std::printf("%-28s %-10s %-13s %s\n", "JOB", "STATE", "TRIALS",
              "WORKLOADS / TARGET");
  for (const proto::JobStatus& job : jobs.jobs()) {
    std::printf(
        "%-28s %-10s %-13s %s on \"%s\"%s\n", Shown(job.id()).c_str(),
        service::JobStateName(job.state()),
        absl::StrCat(job.trials_done(), "/", job.trials_total()).c_str(),
        Shown(absl::StrJoin(job.spec().workloads(), " ")).c_str(),
        Shown(job.spec().target()).c_str(),
        job.spec().simulated() ? " (simulated)" : "");
  }
}

}  // namespace

void AddServiceClientCommands(CLI::App& app) {
  {
    auto options = std::make_shared<SubmitOptions>();
    CLI::App* command =
        app.add_subcommand("submit",
                           "submit a tuning job to a tuner daemon; prints its "
                           "id (or follows it: --wait)");
    command
        ->add_option("specs", options->specs,
                     "workload specs, e.g. matmul:M=512,N=512,K=512, or one "
                     "model (MODEL.onnx): its tasks as specs, each weighted "
                     "by how often the model calls it")
        ->required();
    options->model.AddShapeOption(command);
    AddClientOptions(command, options->client);
    command->add_option(
        "--target", options->target,
        "target string of the runners to measure on (default host: this "
        "machine's, resolved here)");
    command->add_option("--trials", options->trials,
                        "measurements in all (default 200)");
    command
        ->add_option("--batch", options->batch,
                     "candidates per batch (default 32)")
        ->check(WholeNumber(1, 1024));
    command
        ->add_option("--seed", options->seed, "the search's seed (default 1)")
        ->check(WholeNumber(0, INT64_MAX));
    command
        ->add_option(
            "--min-time", options->min_time_s,
            "time each candidate at least this long, seconds (default 0.1)")
        ->check(NonNegativeSeconds());
    command->add_option("--weights", options->weights,
                        "how often each workload runs, e.g. 1,4");
    command
        ->add_option(
            "--measure-rounds", options->measure_rounds,
            "measure each batch in this many rounds, the min time split over "
            "them (default 3)")
        ->check(WholeNumber(1, tuner::kMaxMeasureRounds));
    command->add_option(
        "--remeasure-top", options->remeasure_top,
        "near-ties re-measured at the end (default 3; -1: none)");
    command->add_flag(
        "--simulated", options->simulated,
        "a dispatch benchmark job: only simulated runners take it, nothing is "
        "recorded");
    command->add_flag("--wait", options->wait,
                      "follow the job until it ends (progress on stderr)");
    command->add_flag("--json", options->client.json, "print the job as JSON");
    SetAction(command, [options] { return RunSubmit(*options); });
  }
  {
    auto options = std::make_shared<ClientOptions>();
    CLI::App* command =
        app.add_subcommand("jobs", "list a tuner daemon's jobs");
    AddClientOptions(command, *options);
    command->add_flag("--json", options->json, "print JSON");
    SetAction(command, [options]() -> absl::Status {
      absl::StatusOr<Client> client = Client::Connect(*options);
      if (!client.ok()) return client.status();
      absl::StatusOr<proto::ListJobsResponse> jobs =
          client->Call<proto::ListJobsRequest, proto::ListJobsResponse>(
              &proto::TunerService::Stub::ListJobs, proto::ListJobsRequest());
      if (!jobs.ok()) return jobs.status();
      if (options->json) {
        std::printf("%s\n", Json(*jobs).c_str());
      } else {
        PrintJobs(*jobs);
      }
      return absl::OkStatus();
    });
  }
  {
    auto options = std::make_shared<ClientOptions>();
    auto job = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand(
        "watch", "follow a job's progress until it ends (exit 0: done)");
    command->add_option("job", *job, "the job id")->required();
    AddClientOptions(command, *options);
    SetAction(command, [options, job]() -> absl::Status {
      absl::StatusOr<Client> client = Client::Connect(*options);
      if (!client.ok()) return client.status();
      absl::StatusOr<proto::JobStatus> final =
          Follow(*client, *job, /*print_stdout=*/true);
      if (!final.ok()) return final.status();
      return FinalStatus(*final);
    });
  }
  {
    auto options = std::make_shared<ClientOptions>();
    auto job = std::make_shared<std::string>();
    CLI::App* command =
        app.add_subcommand("cancel", "cancel a job (what it measured stays)");
    command->add_option("job", *job, "the job id")->required();
    AddClientOptions(command, *options);
    SetAction(command, [options, job]() -> absl::Status {
      absl::StatusOr<Client> client = Client::Connect(*options);
      if (!client.ok()) return client.status();
      proto::CancelJobRequest request;
      request.set_id(*job);
      absl::StatusOr<proto::JobStatus> status =
          client->Call<proto::CancelJobRequest, proto::JobStatus>(
              &proto::TunerService::Stub::CancelJob, request);
      if (!status.ok()) return status.status();
      const bool ended_before = status->state() == proto::JOB_DONE ||
                                status->state() == proto::JOB_FAILED;
      std::printf("%s%s\n", ProgressLine(*status).c_str(),
                  ended_before ? " (it had ended: nothing to cancel)" : "");
      return absl::OkStatus();
    });
  }
  {
    auto options = std::make_shared<ClientOptions>();
    CLI::App* command =
        app.add_subcommand("runners", "list the runners of a tuner daemon");
    AddClientOptions(command, *options);
    command->add_flag("--json", options->json, "print JSON");
    SetAction(command, [options]() -> absl::Status {
      absl::StatusOr<Client> client = Client::Connect(*options);
      if (!client.ok()) return client.status();
      absl::StatusOr<proto::ListRunnersResponse> runners =
          client->Call<proto::ListRunnersRequest, proto::ListRunnersResponse>(
              &proto::TunerService::Stub::ListRunners,
              proto::ListRunnersRequest());
      if (!runners.ok()) return runners.status();
      if (options->json) {
        std::printf("%s\n", Json(*runners).c_str());
        return absl::OkStatus();
      }
      std::printf("%-16s %-12s %-8s %-9s %s\n", "RUNNER", "STATE", "RESULTS",
                  "FAILURES", "NAME / TARGET");
      for (const proto::RunnerInfo& r : runners->runners()) {
        std::printf("%-16s %-12s %-8lld %-9lld %s on \"%s\"%s\n",
                    r.id().c_str(), service::RunnerStateName(r.state()),
                    static_cast<long long>(r.results()),
                    static_cast<long long>(r.failures()),
                    Shown(r.name()).c_str(), Shown(r.target()).c_str(),
                    r.simulated() ? " (simulated)" : "");
      }
      std::printf(
          "leases expired: %lld; results dropped (late or unknown lease): "
          "%lld\n",
          static_cast<long long>(runners->leases_expired()),
          static_cast<long long>(runners->results_dropped()));
      return absl::OkStatus();
    });
  }
}

}  // namespace lathe::cli
