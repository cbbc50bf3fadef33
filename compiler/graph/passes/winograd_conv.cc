#include "compiler/graph/passes/winograd_conv.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/graph/op_registry.h"
#include "compiler/graph/ops/op_definition.h"
#include "compiler/graph/ops/window.h"

namespace lathe::graph {
namespace {

// F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks"): interpolation points 0, 1, -1 and infinity.
constexpr int64_t kTile = 4;    // a: input tile
constexpr int64_t kOutput = 2;  // m: output tile
constexpr double kBt[kTile][kTile] = {
    {1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[kTile][3] = {
    {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kAt[kOutput][kTile] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

// T[r,s,i,j] = M[r,i] M[s,j] for a [rows, kTile] matrix M.
TensorData ProductTable(const double* matrix, int64_t rows) {
  TensorData t(DType::Float32(), {rows, rows, kTile, kTile});
  size_t flat = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < rows; ++s) {
      for (int64_t i = 0; i < kTile; ++i) {
        for (int64_t j = 0; j < kTile; ++j) {
          t.values[flat++] = matrix[r * kTile + i] * matrix[s * kTile + j];
        }
      }
    }
  }
  return t;
}

TensorData ShapeConstant(const std::vector<int64_t>& shape) {
  TensorData t(DType::Int64(), {static_cast<int64_t>(shape.size())});
  for (size_t i = 0; i < shape.size(); ++i) t.values[i] = shape[i];
  return t;
}

// U[p*4+q, k, c] = sum_{r,s} G[p,r] w[k,c,r,s] G[q,s], rounded to float32.
TensorData TransformWeights(const TensorData& w) {
  const int64_t k_count = w.shape[0], c_count = w.shape[1];
  TensorData u(DType::Float32(), {kTile * kTile, k_count, c_count});
  for (int64_t k = 0; k < k_count; ++k) {
    for (int64_t c = 0; c < c_count; ++c) {
      const double* g = &w.values[(k * c_count + c) * 9];
      for (int64_t p = 0; p < kTile; ++p) {
        for (int64_t q = 0; q < kTile; ++q) {
          double acc = 0;
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) {
              acc += kG[p][r] * g[r * 3 + s] * kG[q][s];
            }
          }
          u.values[((p * kTile + q) * k_count + k) * c_count + c] = acc;
        }
      }
    }
  }
  RoundValues(u);
  return u;
}

// Whether `conv` is a Conv this pass splits (see the header).
bool Eligible(const Graph& graph, const Node& conv) {
  if (conv.dead || conv.op != "Conv" || conv.outputs.size() != 1 ||
      conv.inputs.size() < 2 || !graph.IsConstant(conv.inputs[1])) {
    return false;
  }
  if (HasInput(conv, 2) && !graph.IsConstant(conv.inputs[2])) return false;
  const TensorType& x = graph.value(conv.inputs[0]).type;
  const TensorType& w = graph.value(conv.inputs[1]).type;
  if (!graph.value(conv.inputs[0]).typed || x.dtype != DType::Float32() ||
      w.dtype != DType::Float32() || x.shape.size() != 4 ||
      w.shape.size() != 4 || w.shape[1] != x.shape[1] || w.shape[2] != 3 ||
      w.shape[3] != 3 || IntAttr(conv, "group", 1) != 1) {
    return false;
  }
  if (x.shape[1] < kWinogradMinInputChannels ||
      w.shape[0] < kWinogradMinOutputChannels || x.shape[2] % kOutput != 0 ||
      x.shape[3] % kOutput != 0) {
    return false;
  }
  absl::StatusOr<Window> window =
      ComputeWindow(conv, {x.shape[2], x.shape[3]}, {3, 3}, false);
  if (!window.ok()) return false;
  for (size_t a = 0; a < 2; ++a) {
    if (window->strides[a] != 1 || window->dilations[a] != 1 ||
        window->pads_begin[a] != 1 || window->pads_end[a] != 1) {
      return false;
    }
  }
  return true;
}

class Splitter {
 public:
  explicit Splitter(Graph& graph)
      : graph_(graph), consumers_(graph.Consumers()) {
    is_output_.assign(graph.values().size(), false);
    for (int v : graph.outputs()) is_output_[v] = true;
  }

  int Run() {
    int count = 0;
    const size_t num_nodes = graph_.nodes().size();
    for (size_t i = 0; i < num_nodes; ++i) {
      if (!Eligible(graph_, graph_.nodes()[i])) continue;
      Split(static_cast<int>(i));
      ++count;
    }
    if (count > 0) Rebuild();
    return count;
  }

 private:
  int Value(const std::string& name, std::vector<int64_t> shape) {
    return graph_.AddValue(name,
                           TensorType{DType::Float32(), std::move(shape)});
  }

  Node MakeNode(const std::string& op, const std::string& name,
                std::vector<int> inputs, int output) {
    Node node;
    node.op = op;
    node.name = name;
    node.inputs = std::move(inputs);
    node.outputs = {output};
    return node;
  }

  // A Reshape of `in` to `shape` writing the new value `out`.
  Node Reshape(const std::string& name, int in,
               const std::vector<int64_t>& shape, int out) {
    const int s = graph_.AddConstant(name + "_shape", ShapeConstant(shape));
    return MakeNode("Reshape", name, {in, s}, out);
  }

  void Split(int index) {
    const Node conv = graph_.nodes()[index];
    const std::string& base = conv.name;
    const std::vector<int64_t> x = graph_.value(conv.inputs[0]).type.shape;
    // (Computed before any value is added: that may move the constants.)
    TensorData u_data =
        TransformWeights(*graph_.value(conv.inputs[1]).constant);
    const int64_t n = x[0], c = x[1], k = u_data.shape[1];
    const int64_t th = x[2] / kOutput, tw = x[3] / kOutput;
    const int64_t tiles = n * th * tw;
    const std::vector<int64_t> full = {n, k, x[2], x[3]};
    const std::vector<int64_t> tiled = {n, k, th, kOutput, tw, kOutput};
    // 1. The constants: the tables (one pair for the graph) and the
    //    transformed weights.
    if (bt_ == kNoValue) {
      bt_ = graph_.AddConstant("winograd_bt", WinogradInputTable());
      at_ = graph_.AddConstant("winograd_at", WinogradOutputTable());
    }
    const int u =
        graph_.AddConstant(base + "_winograd_weight", std::move(u_data));
    // 2. The kernels in the conv's place.
    std::vector<Node>& nodes = replacement_[index];
    const int v6 =
        Value(base + "_winograd_input", {kTile, kTile, c, n, th, tw});
    nodes.push_back(MakeNode("WinogradInputTransform", base + "_winograd_input",
                             {conv.inputs[0], bt_}, v6));
    const int v3 =
        Value(base + "_winograd_input_rows", {kTile * kTile, c, tiles});
    nodes.push_back(Reshape(base + "_winograd_input_rows", v6,
                            {kTile * kTile, c, tiles}, v3));
    const int m3 = Value(base + "_winograd_product", {kTile * kTile, k, tiles});
    nodes.push_back(
        MakeNode("MatMul", base + "_winograd_product", {u, v3}, m3));
    const int m6 =
        Value(base + "_winograd_product_tiles", {kTile, kTile, k, n, th, tw});
    nodes.push_back(Reshape(base + "_winograd_product_tiles", m3,
                            {kTile, kTile, k, n, th, tw}, m6));
    std::vector<int> out_inputs = {m6, at_};
    if (HasInput(conv, 2)) out_inputs.push_back(conv.inputs[2]);
    int current = Value(base + "_winograd_output", tiled);
    nodes.push_back(MakeNode("WinogradOutputTransform",
                             base + "_winograd_output", out_inputs, current));
    // 3. The elementwise chain moved ahead of the last Reshape.
    int original = conv.outputs[0];
    // The node after which the last Reshape goes (Rebuild puts after_[index]
    // after the conv's replacement).
    int tail = index;
    for (;;) {
      if (is_output_[original] || consumers_[original].size() != 1) break;
      const int next = consumers_[original][0];
      Node& node = graph_.nodes()[next];
      const OpDef* def = FindOpDef(node.op);
      if (node.dead || def == nullptr ||
          def->role != FusionRole::kElementwise || node.outputs.size() != 1 ||
          !(graph_.value(node.outputs[0]).type ==
            TensorType{DType::Float32(), full}) ||
          !Sinkable(node, original, full, index)) {
        break;
      }
      for (int& in : node.inputs) {
        if (in == original) {
          in = current;
        } else if (in != kNoValue && graph_.value(in).type.shape == full) {
          in = TiledOperand(in, tiled, index);
        }
      }
      original = node.outputs[0];
      current = Value(graph_.value(original).name + "_tiles", tiled);
      node.outputs[0] = current;
      tail = next;
    }
    after_[tail].push_back(Reshape(graph_.value(original).name + "_untile",
                                   current, full, original));
  }

  // Whether every operand of `node` besides `value` is the convolution's
  // shape (read through a Reshape) or a single element (broadcast as is),
  // and written ahead of the conv `conv`. (An operand written later, such
  // as a downsampling branch's, leaves the operator where it is: it fuses
  // into that operand's kernel instead.)
  bool Sinkable(const Node& node, int value, const std::vector<int64_t>& full,
                int conv) {
    for (int in : node.inputs) {
      if (in == kNoValue || in == value) continue;
      const TensorType& type = graph_.value(in).type;
      if (type.dtype != DType::Float32() || !graph_.value(in).typed ||
          graph_.value(in).producer > conv) {
        return false;
      }
      if (type.shape != full && NumElements(type.shape) != 1) return false;
      if (NumElements(type.shape) == 1 && type.shape.size() > full.size() + 2) {
        return false;
      }
    }
    return true;
  }

  // `in` under the tiled shape: a constant reshaped here, else a Reshape (a
  // view) right after the node that writes `in` (ahead of the conv `conv`
  // for a graph input), so that it is ready when the output transform's
  // kernel forms and the operator fuses there.
  int TiledOperand(int in, const std::vector<int64_t>& tiled, int conv) {
    const std::string name = graph_.value(in).name + "_tiles";
    if (graph_.IsConstant(in)) {
      TensorData data = *graph_.value(in).constant;
      data.shape = tiled;
      return graph_.AddConstant(name, std::move(data));
    }
    const int out = Value(name, tiled);
    const int producer = graph_.value(in).producer;
    if (producer == kNoValue) {
      before_[conv].push_back(Reshape(name, in, tiled, out));
    } else {
      after_[producer].push_back(Reshape(name, in, tiled, out));
    }
    return out;
  }

  // Puts the new nodes in their places (the graph's order is topological)
  // and sets every output's producer.
  void Rebuild() {
    std::vector<Node> old = std::move(graph_.nodes());
    std::vector<Node> nodes;
    for (size_t i = 0; i < old.size(); ++i) {
      const int id = static_cast<int>(i);
      for (Node& node : before_[id]) nodes.push_back(std::move(node));
      auto replaced = replacement_.find(id);
      if (replaced != replacement_.end()) {
        for (Node& node : replaced->second) nodes.push_back(std::move(node));
      } else {
        nodes.push_back(std::move(old[i]));
      }
      for (Node& node : after_[id]) nodes.push_back(std::move(node));
    }
    graph_.nodes() = std::move(nodes);
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      if (graph_.nodes()[i].dead) continue;
      for (int out : graph_.nodes()[i].outputs) {
        graph_.value(out).producer = static_cast<int>(i);
      }
    }
  }

  Graph& graph_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> is_output_;
  int bt_ = kNoValue, at_ = kNoValue;             // the transforms' tables
  std::map<int, std::vector<Node>> replacement_;  // conv -> its kernels
  std::map<int, std::vector<Node>> before_;  // node -> Reshapes ahead of it
  std::map<int, std::vector<Node>> after_;   // node -> Reshapes after it
};

}  // namespace

TensorData WinogradInputTable() { return ProductTable(&kBt[0][0], kTile); }

TensorData WinogradOutputTable() { return ProductTable(&kAt[0][0], kOutput); }

absl::Status SplitWinogradConvs(Graph& graph, int* split) {
  const int count = Splitter(graph).Run();
  if (split != nullptr) *split = count;
  return absl::OkStatus();
}

}  // namespace lathe::graph
