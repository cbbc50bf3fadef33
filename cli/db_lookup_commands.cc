// `lathe db best` and `lathe db top`: the fastest records of a task, each
// checked to replay to the program that was measured (record_lookup.h).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/record_lookup.h"
#include "cli/command.h"
#include "cli/db_command.h"
#include "cli/db_common.h"
#include "cli/json_text.h"
#include "cli/output_paths.h"
#include "cli/shown_text.h"
#include "cli/time_text.h"
#include "cli/workload_args.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/schedule/trace.h"

namespace lathe::cli {
namespace {

struct LookupOptions {
  DbArgs db;
  WorkloadArgs workload;
  std::string target = "host";
  bool compatible = false;
  int k = 10;
  std::string trace_out;
};

std::string MatchJson(const api::CheckedMatch& checked,
                      const std::string& asked_target) {
  const proto::Record& r = checked.match.record;
  std::string trace_json = "null";
  if (absl::StatusOr<Trace> trace = Trace::FromProto(r.trace()); trace.ok()) {
    trace_json = trace->ToJson();
  }
  return absl::StrCat(
      "{\"id\": ", r.id(), ", \"workload\": ", JsonString(r.workload()),
      ", \"workload_key\": ", JsonString(r.workload_key()),
      ", \"target\": ", JsonString(asked_target),
      ", \"record_target\": ", JsonString(r.target().canonical()),
      ", \"exact\": ", checked.match.exact ? "true" : "false",
      ", \"difference\": ", JsonString(checked.match.difference),
      ", \"median_s\": ", absl::StrFormat("%.9g", r.median_s()),
      ", \"spread\": ", absl::StrFormat("%.6g", r.spread()),
      ", \"samples\": ", r.times_s_size(),
      ", \"gflops\": ", absl::StrFormat("%.3f", RecordGflops(r)),
      ", \"structural_hash\": ", JsonString(r.structural_hash()),
      ", \"replays\": ", checked.replays ? "true" : "false",
      ", \"replay_problem\": ", JsonString(checked.replay_problem),
      ", \"runner\": ", JsonString(r.runner()),
      ", \"device\": ", JsonString(r.target().device()),
      ", \"lathe_version\": ", JsonString(r.lathe_version()),
      ", \"measured_at_unix_ms\": ", r.measured_at_unix_ms(),
      ", \"job\": ", JsonString(r.job()), ", \"trace\": ", trace_json, "}");
}

struct LookupResult {
  Workload workload;
  Target target;
  std::vector<api::CheckedMatch> matches;  // never empty
};

absl::StatusOr<LookupResult> Lookup(const LookupOptions& options, int k) {
  absl::StatusOr<Workload> workload = options.workload.Resolve();
  if (!workload.ok()) return workload.status();
  absl::StatusOr<Target> target = ParseTarget(options.target);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      options.db.Open(db::OpenOptions::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<api::CheckedMatch>> matches =
      api::LookupChecked(**db, *workload, *target, k,
                         options.compatible ? db::TargetMatching::kCompatible
                                            : db::TargetMatching::kExact);
  if (!matches.ok()) return matches.status();
  if (matches->empty()) {
    return absl::NotFoundError(
        absl::StrCat(options.db.path, ": no measured record of ",
                     workload->CanonicalForm(), " for ", target->ToString(),
                     options.compatible ? " or a compatible target"
                                        : " (try --compatible)"));
  }
  return LookupResult{*std::move(workload), *target, *std::move(matches)};
}

absl::Status RunBest(const LookupOptions& options) {
  if (absl::Status st = CheckOutputPaths({{"--db", options.db.path}},
                                         {{"--trace-out", options.trace_out}});
      !st.ok()) {
    return st;
  }
  absl::StatusOr<LookupResult> found = Lookup(options, 1);
  if (!found.ok()) return found.status();
  const Target& target = found->target;
  const api::CheckedMatch& best = found->matches.front();
  const proto::Record& r = best.match.record;
  if (!options.trace_out.empty()) {
    absl::StatusOr<Trace> trace = Trace::FromProto(r.trace());
    if (!trace.ok()) return trace.status();
    std::ofstream out(options.trace_out);
    out << trace->ToJson() << "\n";
    if (!out.flush()) {
      return absl::PermissionDeniedError(
          absl::StrCat(options.trace_out, ": cannot write"));
    }
  }
  if (options.db.json) {
    std::printf("%s\n", MatchJson(best, target.ToString()).c_str());
    return absl::OkStatus();
  }
  std::printf("workload  %s\n", r.workload().c_str());
  std::printf("target    %s\n", target.ToString().c_str());
  if (!best.match.exact) {
    std::printf("match     compatible: %s (%s)\n",
                r.target().canonical().c_str(), best.match.difference.c_str());
  }
  std::printf("record    #%lld, %s, runner %s, lathe %s%s\n",
              static_cast<long long>(r.id()),
              FormatUnixMs(r.measured_at_unix_ms()).c_str(),
              Shown(r.runner()).c_str(), Shown(r.lathe_version()).c_str(),
              r.job().empty() ? "" : (", job " + Shown(r.job())).c_str());
  if (!r.target().device().empty()) {
    std::printf("device    %s\n", Shown(r.target().device()).c_str());
  }
  std::printf("time      median %s, spread %.1f%%, %d samples, %.2f GFLOP/s\n",
              TimeText(r.median_s()).c_str(), r.spread() * 100,
              r.times_s_size(), RecordGflops(r));
  std::printf("program   %s\n", r.structural_hash().c_str());
  if (best.replays) {
    std::printf(
        "replay    ok: this Lathe builds the measured program from the "
        "trace\n");
  } else {
    std::printf("replay    MISMATCH: %s\n", best.replay_problem.c_str());
  }
  if (!options.trace_out.empty())
    std::printf("trace     written to %s\n", options.trace_out.c_str());
  return absl::OkStatus();
}

absl::Status RunTop(const LookupOptions& options) {
  if (options.k < 1) return absl::InvalidArgumentError("-k must be at least 1");
  absl::StatusOr<LookupResult> found = Lookup(options, options.k);
  if (!found.ok()) return found.status();
  const Target& target = found->target;
  const std::vector<api::CheckedMatch>* matches = &found->matches;
  if (options.db.json) {
    std::vector<std::string> rows;
    for (const api::CheckedMatch& m : *matches)
      rows.push_back(MatchJson(m, target.ToString()));
    std::printf("[\n  %s\n]\n", absl::StrJoin(rows, ",\n  ").c_str());
    return absl::OkStatus();
  }
  std::printf("%s on %s\n", found->workload.CanonicalForm().c_str(),
              target.ToString().c_str());
  if (!matches->front().match.exact) {
    std::printf("compatible match: %s (%s)\n",
                matches->front().match.record.target().canonical().c_str(),
                matches->front().match.difference.c_str());
  }
  // One unit for the column, the one of the fastest (printed first).
  const TimeUnit unit = TimeUnitFor(matches->front().match.record.median_s());
  std::printf("%4s  %8s  %12s  %9s  %7s  %-16s  %-7s  %s\n", "rank", "record",
              absl::StrCat("median ", unit.name).c_str(), "GFLOP/s", "spread",
              "program", "replays", "runner");
  int rank = 0;
  for (const api::CheckedMatch& m : *matches) {
    const proto::Record& r = m.match.record;
    const std::string median =
        NumberIn(r.median_s(), unit);  // the unit is in the heading
    std::printf("%4d  %8lld  %12s  %9.2f  %6.1f%%  %-16s  %-7s  %s\n", ++rank,
                static_cast<long long>(r.id()), median.c_str(), RecordGflops(r),
                r.spread() * 100, r.structural_hash().c_str(),
                m.replays ? "yes" : "NO", Shown(r.runner()).c_str());
  }
  return absl::OkStatus();
}

void AddLookupOptions(CLI::App* command, LookupOptions* options) {
  options->db.AddTo(command);
  options->workload.AddTo(command, /*spec_required=*/true);
  command->add_option("--target", options->target,
                      "the target to look up, e.g. host or \"llvm -mcpu=znver4 "
                      "-num-threads=2\" "
                      "(default: host)");
  command->add_flag(
      "--compatible", options->compatible,
      "when the target has no record, accept one of a compatible target (same "
      "kind, a subset of its features, any thread count)");
}

}  // namespace

void AddDbLookupCommands(CLI::App* db) {
  auto best = std::make_shared<LookupOptions>();
  CLI::App* best_command =
      db->add_subcommand("best",
                         "the fastest measured schedule of a workload on a "
                         "target, checked to replay");
  AddLookupOptions(best_command, best.get());
  best_command->add_option("--trace-out", best->trace_out,
                           "write the record's trace (JSON) to this file");
  SetAction(best_command, [best] { return RunBest(*best); });

  auto top = std::make_shared<LookupOptions>();
  CLI::App* top_command = db->add_subcommand(
      "top", "the k fastest measured schedules of a workload on a target");
  AddLookupOptions(top_command, top.get());
  top_command->add_option("-k", top->k, "how many (default 10)");
  SetAction(top_command, [top] { return RunTop(*top); });
}

}  // namespace lathe::cli
