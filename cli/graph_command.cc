#include "cli/graph_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/model_args.h"
#include "compiler/graph/blocked_layouts.h"
#include "compiler/graph/kernel_partition.h"
#include "compiler/graph/pipeline.h"
#include "compiler/graph/printer.h"

namespace lathe::cli {
namespace {

struct GraphOptions {
  ModelArgs model;
  bool print_after_each = false;
};

const char* StepKindName(graph::GraphStep::Kind kind) {
  switch (kind) {
    case graph::GraphStep::Kind::kKernel:
      return "kernel";
    case graph::GraphStep::Kind::kHost:
      return "host";
    case graph::GraphStep::Kind::kAlias:
      return "alias";
  }
  return "?";
}

std::string PrintPartition(const graph::Graph& graph,
                           const graph::KernelPartition& partition) {
  int kernels = 0, host = 0, alias = 0;
  for (const graph::GraphStep& step : partition.steps) {
    switch (step.kind) {
      case graph::GraphStep::Kind::kKernel:
        ++kernels;
        break;
      case graph::GraphStep::Kind::kHost:
        ++host;
        break;
      case graph::GraphStep::Kind::kAlias:
        ++alias;
        break;
    }
  }
  std::string text =
      absl::StrCat("# partition: ", partition.steps.size(), " steps: ", kernels,
                   " kernels, ", host, " host, ", alias, " alias\n");
  for (size_t s = 0; s < partition.steps.size(); ++s) {
    const graph::GraphStep& step = partition.steps[s];
    std::vector<std::string> ops, names;
    for (int n : step.nodes) {
      ops.push_back(graph.nodes()[n].op);
      names.push_back(graph.nodes()[n].name);
    }
    absl::StrAppend(&text, StepKindName(step.kind), " ", s, ": ",
                    absl::StrJoin(ops, "+"), " (", absl::StrJoin(names, ", "),
                    ")");
    if (step.kind != graph::GraphStep::Kind::kKernel) {
      absl::StrAppend(&text, "\n");
      continue;
    }
    std::vector<std::string> args;
    for (size_t a = 0; a < step.args.size(); ++a) {
      args.push_back(graph.value(step.args[a]).name);
    }
    std::string output = args.empty() ? "" : args.back();
    if (!args.empty()) args.pop_back();
    absl::StrAppend(&text, " anchor ", step.anchor.empty() ? "-" : step.anchor,
                    ", ", absl::StrFormat("%.6g", step.flops), " flops\n  ",
                    step.workload, "\n  args: ", absl::StrJoin(args, ", "),
                    " -> ", output, "\n");
  }
  return text;
}

absl::Status RunGraph(const GraphOptions& options) {
  absl::StatusOr<graph::Graph> graph = options.model.Import();
  if (!graph.ok()) return graph.status();
  std::printf("# imported %s\n%s", options.model.path.c_str(),
              graph::PrintGraph(*graph).c_str());
  graph::PassObserver observer;
  if (options.print_after_each) {
    observer = [](const std::string& pass, const graph::Graph& g) {
      std::printf("# after %s\n%s", pass.c_str(), graph::PrintGraph(g).c_str());
    };
  }
  if (absl::Status st = graph::RunGraphPasses(*graph, observer); !st.ok()) {
    return st;
  }
  if (!options.print_after_each) {
    std::printf("# after passes\n%s", graph::PrintGraph(*graph).c_str());
  }
  absl::StatusOr<graph::KernelPartition> partition =
      graph::PartitionGraph(*graph);
  if (!partition.ok()) return partition.status();
  if (absl::Status st = graph::BlockActivations(*graph, *partition); !st.ok()) {
    return st;
  }
  std::fputs(PrintPartition(*graph, *partition).c_str(), stdout);
  return absl::OkStatus();
}

}  // namespace

void AddGraphCommand(CLI::App& app) {
  auto options = std::make_shared<GraphOptions>();
  CLI::App* command = app.add_subcommand(
      "graph",
      "print a model's graph before and after the passes, and its kernels");
  options->model.AddTo(command);
  command->add_flag("--print-after-each", options->print_after_each,
                    "print the graph after each pass");
  SetAction(command, [options] { return RunGraph(*options); });
}

}  // namespace lathe::cli
