#include "compiler/graph/blocked_layouts.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/workload/block_dims.h"
#include "compiler/workload/custom_workload.h"

namespace lathe::graph {
namespace {

// A kernel step's workload as a definition, and per argument the name of
// its tensor there (the declared inputs in order, then the output).
struct KernelView {
  CustomDefinition def;
  std::vector<std::string> names;
};

absl::StatusOr<KernelView> ViewOf(const GraphStep& step) {
  absl::StatusOr<CustomDefinition> def = ParseCustomSpec(step.workload);
  if (!def.ok()) {
    return absl::InternalError(absl::StrCat("kernel step ", step.workload, ": ",
                                            def.status().message()));
  }
  KernelView view{*std::move(def), {}};
  for (const InputDeclaration& input : view.def.parsed.inputs)
    view.names.push_back(input.name);
  view.names.push_back(view.def.parsed.statements.back().output);
  if (view.names.size() != step.args.size()) {
    return absl::InternalError(absl::StrCat("kernel step ", step.workload, ": ",
                                            view.names.size(), " tensors for ",
                                            step.args.size(), " arguments"));
  }
  return view;
}

// The dimension of a flattened tensor that holds exactly dimension 1 (the
// channels) of the value's shape, or -1: flattening merges neighbours, so
// it is the one whose leading extents multiply to the value's first.
int ChannelDimension(const std::vector<int64_t>& value_shape,
                     const std::vector<int64_t>& flat_shape) {
  int64_t before = 1;
  for (size_t d = 0; d < flat_shape.size(); ++d) {
    if (before == value_shape[0] && flat_shape[d] == value_shape[1])
      return static_cast<int>(d);
    before *= flat_shape[d];
    if (before > value_shape[0]) break;
  }
  return -1;
}

class Blocker {
 public:
  Blocker(Graph& graph, KernelPartition& partition)
      : graph_(graph), partition_(partition) {}

  absl::Status Run() {
    const int num_steps = static_cast<int>(partition_.steps.size());
    views_.resize(num_steps);
    std::set<int> seeds;
    std::set<int> outside(graph_.outputs().begin(), graph_.outputs().end());
    outside.insert(graph_.inputs().begin(), graph_.inputs().end());
    for (int s = 0; s < num_steps; ++s) {
      const GraphStep& step = partition_.steps[s];
      if (step.kind != GraphStep::Kind::kKernel) {
        // A view or host step reads the value as ONNX lays it out.
        for (int n : step.nodes) {
          for (int v : graph_.nodes()[n].inputs) outside.insert(v);
        }
        continue;
      }
      absl::StatusOr<KernelView> view = ViewOf(step);
      if (!view.ok()) return view.status();
      views_[s] = *std::move(view);
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (graph_.IsConstant(step.args[a])) continue;
        touching_[step.args[a]].push_back(s);
        if (a + 1 == step.args.size()) producer_[step.args[a]] = s;
      }
      for (int n : step.nodes) {
        const Node& node = graph_.nodes()[n];
        if (node.op == "Conv" && node.Has("group") && node.Int("group") > 1) {
          for (int v : step.args) seeds.insert(v);
        }
      }
    }
    std::set<int> chosen;
    for (int v : seeds) {
      if (!outside.count(v) && Fits(v)) chosen.insert(v);
    }
    // A kernel that reads a blocked value writes blocked too where it can:
    // a 1x1 projection then reads and writes blocks (a vector of output
    // channels per input scalar) instead of reading lanes across pixels.
    for (bool changed = true; changed;) {
      changed = false;
      for (int s = 0; s < num_steps; ++s) {
        const GraphStep& step = partition_.steps[s];
        if (step.kind != GraphStep::Kind::kKernel) continue;
        const int out = step.args.back();
        if (chosen.count(out) || outside.count(out) || !Fits(out)) continue;
        for (size_t a = 0; a + 1 < step.args.size(); ++a) {
          if (chosen.count(step.args[a])) {
            chosen.insert(out);
            changed = true;
            break;
          }
        }
      }
    }
    // Drop the values of any kernel that cannot take its requests, until
    // every kernel touching a chosen value can.
    std::map<int, BlockedDefinition> rewritten;
    for (bool changed = true; changed;) {
      changed = false;
      rewritten.clear();
      for (int s = 0; s < num_steps && !changed; ++s) {
        if (partition_.steps[s].kind != GraphStep::Kind::kKernel) continue;
        std::vector<DimBlock> requests;
        std::vector<int> requested;
        const std::vector<int>& args = partition_.steps[s].args;
        for (size_t a = 0; a < args.size(); ++a) {
          if (!chosen.count(args[a])) continue;
          requests.push_back({views_[s].names[a], Dim(s, a), BlockOf(args[a])});
          requested.push_back(args[a]);
        }
        if (requests.empty()) continue;
        absl::StatusOr<BlockedDefinition> blocked =
            BlockDims(views_[s].def, requests, /*block_constants=*/true);
        if (blocked.ok()) {
          rewritten.emplace(s, *std::move(blocked));
          continue;
        }
        for (int v : requested) chosen.erase(v);
        changed = true;
      }
    }
    for (auto& [s, blocked] : rewritten) {
      if (absl::Status st = Apply(s, blocked); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  // The flattened dimension of argument a of step s that holds the value's
  // channels.
  int Dim(int s, size_t a) const {
    const int v = partition_.steps[s].args[a];
    const CustomTensor* t = views_[s].def.FindTensor(views_[s].names[a]);
    return ChannelDimension(graph_.value(v).type.shape, t->shape);
  }

  // The block of activation v (its shape [N, C, ...] has at least 3 dims).
  int64_t BlockOf(int v) const {
    return ChannelBlockOf(graph_.value(v).type.shape[1]);
  }

  // Whether v can be blocked as far as its shape and its kernels' forms
  // show: made by a kernel, channels dividing by a block, and a dimension
  // holding them in every kernel that touches it.
  bool Fits(int v) const {
    const Value& value = graph_.value(v);
    if (value.constant || !producer_.count(v)) return false;
    const std::vector<int64_t>& shape = value.type.shape;
    if (shape.size() < 3 || BlockOf(v) == 0) return false;
    for (int s : touching_.at(v)) {
      const std::vector<int>& args = partition_.steps[s].args;
      for (size_t a = 0; a < args.size(); ++a) {
        if (args[a] == v && Dim(s, a) < 0) return false;
      }
    }
    return true;
  }

  // Step s takes its blocked form; the constants it reads blocked become
  // new graph constants (one per constant, dimension and flattened shape).
  absl::Status Apply(int s, const BlockedDefinition& blocked) {
    GraphStep& step = partition_.steps[s];
    absl::StatusOr<Workload> workload = MakeCustomWorkload(blocked.definition);
    if (!workload.ok()) {
      return absl::InternalError(absl::StrCat("blocked layout of kernel ",
                                              step.workload, ": ",
                                              workload.status().message()));
    }
    for (const DimBlock& b : blocked.blocked) {
      size_t a = 0;
      while (a < views_[s].names.size() && views_[s].names[a] != b.tensor) ++a;
      const int v = step.args[a];
      if (!graph_.IsConstant(v)) continue;
      const std::vector<int64_t>& flat =
          views_[s].def.FindTensor(b.tensor)->shape;
      const auto key = std::make_tuple(v, b.dim, b.block, flat);
      auto it = constants_.find(key);
      if (it == constants_.end()) {
        const TensorData& data = *graph_.value(v).constant;
        TensorData reordered(data.dtype, flat);
        reordered.shape[b.dim] /= b.block;
        reordered.shape.push_back(b.block);
        reordered.values = BlockValues(data.values, flat, b.dim, b.block);
        const std::string name = absl::StrCat(graph_.value(v).name, "_blocked",
                                              b.block, "_", constants_.size());
        it = constants_
                 .emplace(key, graph_.AddConstant(name, std::move(reordered)))
                 .first;
      }
      step.args[a] = it->second;
    }
    step.workload = workload->CanonicalForm();
    return absl::OkStatus();
  }

  Graph& graph_;
  KernelPartition& partition_;
  std::vector<KernelView> views_;
  std::map<int, std::vector<int>> touching_;  // value -> kernel steps
  std::map<int, int> producer_;               // value -> kernel step
  std::map<std::tuple<int, int, int64_t, std::vector<int64_t>>, int> constants_;
};

}  // namespace

int64_t ChannelBlockOf(int64_t channels) {
  for (int64_t block : {kChannelBlock, kNarrowChannelBlock}) {
    if (channels > 0 && channels % block == 0) return block;
  }
  return 0;
}

absl::Status BlockActivations(Graph& graph, KernelPartition& partition) {
  return Blocker(graph, partition).Run();
}

}  // namespace lathe::graph
