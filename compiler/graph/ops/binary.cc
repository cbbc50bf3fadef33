// The binary and variadic elementwise operators with numpy broadcasting:
// arithmetic (Add, Sub, Mul, Div, Pow), Max/Min/Sum/Mean over any number of
// inputs, comparisons (bool results) and the logical And/Or/Xor.
#include <algorithm>
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

enum class Kind { kArith, kVariadic, kCompare, kLogic };

struct BinaryOp {
  const char* op;
  Kind kind;
  double (*host)(double a, double b, DType dtype);
  // The expression of the operands' reads; empty: no kernel form.
  std::string (*kernel)(const std::vector<std::string>& x);
};

std::string Fold(const std::vector<std::string>& x, const char* fn) {
  std::string text = x.back();
  for (size_t i = x.size() - 1; i-- > 0;) {
    text = absl::StrCat(fn, "(", x[i], ", ", text, ")");
  }
  return text;
}

std::string Join(const std::vector<std::string>& x, const char* op) {
  std::string text = x[0];
  for (size_t i = 1; i < x.size(); ++i) absl::StrAppend(&text, op, x[i]);
  return text;
}

const BinaryOp kBinaryOps[] = {
    {"Add", Kind::kArith, [](double a, double b, DType) { return a + b; },
     [](const std::vector<std::string>& x) { return Join(x, " + "); }},
    {"Sub", Kind::kArith, [](double a, double b, DType) { return a - b; },
     [](const std::vector<std::string>& x) { return Join(x, " - "); }},
    {"Mul", Kind::kArith, [](double a, double b, DType) { return a * b; },
     [](const std::vector<std::string>& x) { return Join(x, " * "); }},
    {"Div", Kind::kArith,
     [](double a, double b, DType t) {
       if (t.is_int()) return b == 0 ? 0.0 : std::trunc(a / b);
       return a / b;
     },
     [](const std::vector<std::string>& x) { return Join(x, " / "); }},
    {"Pow", Kind::kArith,
     [](double a, double b, DType) { return std::pow(a, b); },
     [](const std::vector<std::string>& x) {
       return absl::StrCat("pow(", x[0], ", ", x[1], ")");
     }},
    {"PRelu", Kind::kArith,
     [](double a, double b, DType) { return a < 0 ? a * b : a; },
     [](const std::vector<std::string>& x) {
       return absl::StrCat("max(", x[0], ", 0) + ", x[1], " * min(", x[0],
                           ", 0)");
     }},
    {"Max", Kind::kVariadic,
     [](double a, double b, DType) { return std::isnan(a) || a > b ? a : b; },
     [](const std::vector<std::string>& x) { return Fold(x, "max"); }},
    {"Min", Kind::kVariadic,
     [](double a, double b, DType) { return std::isnan(a) || a < b ? a : b; },
     [](const std::vector<std::string>& x) { return Fold(x, "min"); }},
    {"Sum", Kind::kVariadic, [](double a, double b, DType) { return a + b; },
     [](const std::vector<std::string>& x) { return Join(x, " + "); }},
    {"Mean", Kind::kVariadic, [](double a, double b, DType) { return a + b; },
     [](const std::vector<std::string>& x) {
       if (x.size() == 1) return x[0];
       return absl::StrCat("(", Join(x, " + "), ") / ", x.size());
     }},
    {"Equal", Kind::kCompare,
     [](double a, double b, DType) { return a == b ? 1.0 : 0.0; }, nullptr},
    {"Less", Kind::kCompare,
     [](double a, double b, DType) { return a < b ? 1.0 : 0.0; }, nullptr},
    {"Greater", Kind::kCompare,
     [](double a, double b, DType) { return a > b ? 1.0 : 0.0; }, nullptr},
    {"LessOrEqual", Kind::kCompare,
     [](double a, double b, DType) { return a <= b ? 1.0 : 0.0; }, nullptr},
    {"GreaterOrEqual", Kind::kCompare,
     [](double a, double b, DType) { return a >= b ? 1.0 : 0.0; }, nullptr},
    {"And", Kind::kLogic,
     [](double a, double b, DType) { return a != 0 && b != 0 ? 1.0 : 0.0; },
     nullptr},
    {"Or", Kind::kLogic,
     [](double a, double b, DType) { return a != 0 || b != 0 ? 1.0 : 0.0; },
     nullptr},
    {"Xor", Kind::kLogic,
     [](double a, double b, DType) { return (a != 0) != (b != 0) ? 1.0 : 0.0; },
     nullptr},
};

OpDef MakeBinary(const BinaryOp& row) {
  OpDef def;
  def.op = row.op;
  def.role = row.kernel ? FusionRole::kElementwise : FusionRole::kHost;
  def.infer = [row](
                  const Graph& graph,
                  const Node& node) -> absl::StatusOr<std::vector<TensorType>> {
    const size_t max_inputs = row.kind == Kind::kVariadic ? 1u << 16 : 2;
    absl::Status count =
        CheckInputCount(node, row.kind == Kind::kVariadic ? 1 : 2, max_inputs);
    if (!count.ok()) return count;
    // Pow's exponent may have another numeric type than its base.
    if (row.kind != Kind::kArith || std::string(row.op) != "Pow") {
      absl::Status same = CheckSameDType(graph, node);
      if (!same.ok()) return same;
    }
    const DType dtype = InputType(graph, node, 0).dtype;
    if (row.kind == Kind::kLogic && !dtype.is_bool()) {
      return NodeError(node, "inputs must be bool");
    }
    if (row.kind != Kind::kLogic && dtype.is_bool() &&
        std::string(row.op) != "Equal") {
      return NodeError(node, "bool inputs are not supported");
    }
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      shapes.push_back(InputType(graph, node, i).shape);
    }
    absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(node, shapes);
    if (!shape.ok()) return shape.status();
    const bool to_bool = row.kind == Kind::kCompare || row.kind == Kind::kLogic;
    return std::vector<TensorType>{
        TensorType{to_bool ? DType::Bool() : dtype, *shape}};
  };
  def.eval = [row](const Node& node, const std::vector<const TensorData*>& in)
      -> absl::StatusOr<std::vector<TensorData>> {
    std::vector<std::vector<int64_t>> shapes;
    for (const TensorData* t : in) shapes.push_back(t->shape);
    absl::StatusOr<std::vector<int64_t>> shape = BroadcastShapes(node, shapes);
    if (!shape.ok()) return shape.status();
    const bool to_bool = row.kind == Kind::kCompare || row.kind == Kind::kLogic;
    const DType dtype = in[0]->dtype;
    TensorData out(to_bool ? DType::Bool() : dtype, *shape);
    std::vector<int64_t> first = BroadcastOffsets(in[0]->shape, *shape);
    for (size_t e = 0; e < out.values.size(); ++e) {
      out.values[e] = in[0]->values[first[e]];
    }
    for (size_t i = 1; i < in.size(); ++i) {
      std::vector<int64_t> offsets = BroadcastOffsets(in[i]->shape, *shape);
      for (size_t e = 0; e < out.values.size(); ++e) {
        out.values[e] =
            row.host(out.values[e], in[i]->values[offsets[e]], dtype);
        if (!to_bool) out.values[e] = RoundToDType(out.values[e], dtype);
      }
    }
    if (std::string(row.op) == "Mean") {
      for (double& v : out.values) v /= static_cast<double>(in.size());
    }
    RoundValues(out);
    return std::vector<TensorData>{std::move(out)};
  };
  if (row.kernel) {
    def.emit = [row](const Node&, KernelEmitter& e) -> absl::Status {
      const std::vector<int64_t>& shape = e.output_type().shape;
      std::vector<std::string> vars = e.NewVars(shape);
      std::vector<std::string> reads;
      for (size_t i = 0; i < e.num_inputs(); ++i) {
        absl::StatusOr<std::string> x = e.ReadBroadcast(i, vars, shape);
        if (!x.ok()) return x.status();
        reads.push_back(*x);
      }
      e.Add(e.output_name(), vars, "=", row.kernel(reads));
      return absl::OkStatus();
    };
  }
  return def;
}

}  // namespace

std::vector<OpDef> BinaryOps() {
  std::vector<OpDef> defs;
  for (const BinaryOp& row : kBinaryOps) defs.push_back(MakeBinary(row));
  return defs;
}

}  // namespace lathe::graph
