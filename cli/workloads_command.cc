#include "cli/workloads_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/json_text.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/registry.h"
#include "compiler/workload/spec.h"

namespace lathe::cli {
namespace {

struct WorkloadsOptions {
  bool json = false;
  std::vector<std::string> specs;
  std::string expr;
  std::string dims;
};

constexpr const char* kCustomHelp =
    "custom workloads: --expr \"C[i,j] += A[i,k] * B[k,j]\" --dims "
    "i=512,j=512,k=512, or the spec custom:EXPR|DIMS";

std::string DefaultText(const ParamSpec& p) {
  return p.required() ? "required" : absl::StrCat("default ", *p.default_value);
}

std::string ListText() {
  std::string out;
  for (const OperatorDef& op : Operators()) {
    absl::StrAppend(&out, op.name, "  ", op.summary, "\n");
    size_t name_width = 0, default_width = 0;
    for (const ParamSpec& p : op.params) {
      name_width = std::max(name_width, p.name.size());
      default_width = std::max(default_width, DefaultText(p).size());
    }
    for (const ParamSpec& p : op.params) {
      absl::StrAppendFormat(&out, "  %-*s  %-*s  %s (%s)\n",
                            static_cast<int>(name_width), p.name,
                            static_cast<int>(default_width), DefaultText(p),
                            p.description, ParamKindDescription(p.kind));
    }
    out += "\n";
  }
  absl::StrAppend(&out, kCustomHelp, "\n");
  return out;
}

std::string ListJson() {
  std::vector<std::string> ops;
  for (const OperatorDef& op : Operators()) {
    std::vector<std::string> params;
    for (const ParamSpec& p : op.params) {
      std::string param =
          absl::StrCat("{\"name\": ", JsonString(p.name),
                       ", \"kind\": ", JsonString(ParamKindDescription(p.kind)),
                       ", \"required\": ", p.required() ? "true" : "false");
      if (!p.required()) {
        absl::StrAppend(&param,
                        ", \"default\": ", JsonString(*p.default_value));
      }
      absl::StrAppend(&param, ", \"description\": ", JsonString(p.description),
                      "}");
      params.push_back(std::move(param));
    }
    ops.push_back(absl::StrCat("    {\"name\": ", JsonString(op.name),
                               ", \"summary\": ", JsonString(op.summary),
                               ",\n     \"params\": [\n      ",
                               absl::StrJoin(params, ",\n      "), "]}"));
  }
  return absl::StrCat("{\"operators\": [\n", absl::StrJoin(ops, ",\n"),
                      "\n]}\n");
}

std::string TensorText(const te::Tensor& t) {
  return absl::StrCat(t.name(), " ", t.dtype().ToString(), "[",
                      absl::StrJoin(t.shape(), ", "), "]");
}

std::string TensorJson(const te::Tensor& t) {
  return absl::StrCat("{\"name\": ", JsonString(t.name()),
                      ", \"dtype\": ", JsonString(t.dtype().ToString()),
                      ", \"shape\": [", absl::StrJoin(t.shape(), ", "), "]}");
}

std::string DescribeText(const Workload& w) {
  std::vector<std::string> inputs, outputs;
  for (const te::Tensor& t : w.inputs()) inputs.push_back(TensorText(t));
  for (const te::Tensor& t : w.outputs()) outputs.push_back(TensorText(t));
  return absl::StrCat(w.CanonicalForm(), "\n  key      ", w.Key(),
                      "\n  inputs   ", absl::StrJoin(inputs, ", "),
                      "\n  outputs  ", absl::StrJoin(outputs, ", "), "\n");
}

std::string DescribeJson(const Workload& w) {
  std::vector<std::string> inputs, outputs;
  for (const te::Tensor& t : w.inputs()) inputs.push_back(TensorJson(t));
  for (const te::Tensor& t : w.outputs()) outputs.push_back(TensorJson(t));
  return absl::StrCat("  {\"canonical\": ", JsonString(w.CanonicalForm()),
                      ", \"key\": ", JsonString(w.Key()),
                      ", \"op\": ", JsonString(w.op()), ",\n   \"inputs\": [",
                      absl::StrJoin(inputs, ", "), "],\n   \"outputs\": [",
                      absl::StrJoin(outputs, ", "), "]}");
}

absl::Status RunWorkloads(const WorkloadsOptions& options) {
  if (options.specs.empty() && options.expr.empty()) {
    const std::string out = options.json ? ListJson() : ListText();
    std::fputs(out.c_str(), stdout);
    return absl::OkStatus();
  }
  // Resolve everything before printing anything, so that a bad spec leaves
  // no partial output behind.
  std::vector<Workload> workloads;
  for (const std::string& spec : options.specs) {
    absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
    if (!w.ok()) return w.status();
    workloads.push_back(std::move(*w));
  }
  if (!options.expr.empty()) {
    absl::StatusOr<Workload> w =
        ParseCustomWorkload(options.expr, options.dims);
    if (!w.ok()) return w.status();
    workloads.push_back(std::move(*w));
  }
  std::string out;
  if (options.json) {
    std::vector<std::string> items;
    for (const Workload& w : workloads) items.push_back(DescribeJson(w));
    out = absl::StrCat("{\"workloads\": [\n", absl::StrJoin(items, ",\n"),
                       "\n]}\n");
  } else {
    for (const Workload& w : workloads) out += DescribeText(w);
  }
  std::fputs(out.c_str(), stdout);
  return absl::OkStatus();
}

}  // namespace

void AddWorkloadsCommand(CLI::App& app) {
  auto options = std::make_shared<WorkloadsOptions>();
  CLI::App* command = app.add_subcommand(
      "workloads",
      "List the operators and their parameters, or resolve workload specs "
      "to their canonical form and key");
  command->add_option("specs", options->specs,
                      "workload specs such as matmul:M=512,N=512,K=512");
  CLI::Option* expr = command->add_option(
      "--expr", options->expr,
      "a custom workload, e.g. \"C[i,j] += A[i,k] * B[k,j]\"");
  command
      ->add_option("--dims", options->dims,
                   "extents of the index variables of --expr, e.g. "
                   "i=512,j=512,k=512")
      ->needs(expr);
  expr->needs(command->get_option("--dims"));
  command->add_flag("--json", options->json, "print JSON");
  SetAction(command, [options] { return RunWorkloads(*options); });
}

}  // namespace lathe::cli
