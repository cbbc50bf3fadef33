// The unary elementwise operators, table-driven: each row gives the host
// function and the expression a kernel computes.
#include <algorithm>
#include <cmath>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

enum class Types { kFloat, kNumeric, kBool };

struct UnaryOp {
  const char* op;
  Types types;
  double (*host)(double x, const Node& node);
  // The expression of x (the text of a read); empty: no kernel form.
  std::string (*kernel)(const std::string& x, const Node& node);
};

std::string L(double v) { return KernelEmitter::Literal(v); }

const UnaryOp kUnaryOps[] = {
    {"Relu", Types::kNumeric,
     [](double x, const Node&) { return x > 0 ? x : 0.0; },
     [](const std::string& x, const Node&) {
       return absl::StrCat("max(", x, ", 0)");
     }},
    {"Sigmoid", Types::kFloat,
     [](double x, const Node&) { return 1.0 / (1.0 + std::exp(-x)); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("1 / (1 + exp(-", x, "))");
     }},
    {"Tanh", Types::kFloat, [](double x, const Node&) { return std::tanh(x); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("tanh(", x, ")");
     }},
    {"Exp", Types::kFloat, [](double x, const Node&) { return std::exp(x); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("exp(", x, ")");
     }},
    {"Log", Types::kFloat, [](double x, const Node&) { return std::log(x); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("log(", x, ")");
     }},
    {"Sqrt", Types::kFloat, [](double x, const Node&) { return std::sqrt(x); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("sqrt(", x, ")");
     }},
    {"Erf", Types::kFloat, [](double x, const Node&) { return std::erf(x); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("erf(", x, ")");
     }},
    {"Abs", Types::kNumeric, [](double x, const Node&) { return std::fabs(x); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("abs(", x, ")");
     }},
    {"Neg", Types::kNumeric, [](double x, const Node&) { return -x; },
     [](const std::string& x, const Node&) { return absl::StrCat("-", x); }},
    {"Reciprocal", Types::kFloat, [](double x, const Node&) { return 1.0 / x; },
     [](const std::string& x, const Node&) { return absl::StrCat("1 / ", x); }},
    {"LeakyRelu", Types::kFloat,
     [](double x, const Node& n) {
       return x < 0 ? FloatAttr(n, "alpha", 0.01) * x : x;
     },
     [](const std::string& x, const Node& n) {
       return absl::StrCat("max(", x, ", 0) + ", L(FloatAttr(n, "alpha", 0.01)),
                           " * min(", x, ", 0)");
     }},
    {"HardSigmoid", Types::kFloat,
     [](double x, const Node& n) {
       double y = FloatAttr(n, "alpha", 0.2) * x + FloatAttr(n, "beta", 0.5);
       return std::max(0.0, std::min(1.0, y));
     },
     [](const std::string& x, const Node& n) {
       return absl::StrCat("max(min(", L(FloatAttr(n, "alpha", 0.2)), " * ", x,
                           " + ", L(FloatAttr(n, "beta", 0.5)), ", 1), 0)");
     }},
    {"HardSwish", Types::kFloat,
     [](double x, const Node&) {
       return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
     },
     [](const std::string& x, const Node&) {
       return absl::StrCat(x, " * max(min(", x, " / 6 + 0.5, 1), 0)");
     }},
    {"Elu", Types::kFloat,
     [](double x, const Node& n) {
       return x < 0 ? FloatAttr(n, "alpha", 1.0) * (std::exp(x) - 1) : x;
     },
     [](const std::string& x, const Node& n) {
       return absl::StrCat("select(lt(", x, ", 0), ",
                           L(FloatAttr(n, "alpha", 1.0)), " * (exp(", x,
                           ") - 1), ", x, ")");
     }},
    {"Softplus", Types::kFloat,
     [](double x, const Node&) { return std::log(std::exp(x) + 1); },
     [](const std::string& x, const Node&) {
       return absl::StrCat("log(exp(", x, ") + 1)");
     }},
    {"Softsign", Types::kFloat,
     [](double x, const Node&) { return x / (1 + std::fabs(x)); },
     [](const std::string& x, const Node&) {
       return absl::StrCat(x, " / (1 + abs(", x, "))");
     }},
    {"ThresholdedRelu", Types::kFloat,
     [](double x, const Node& n) {
       return x > FloatAttr(n, "alpha", 1.0) ? x : 0.0;
     },
     [](const std::string& x, const Node& n) {
       return absl::StrCat("select(gt(", x, ", ", L(FloatAttr(n, "alpha", 1.0)),
                           "), ", x, ", 0)");
     }},
    {"Selu", Types::kFloat,
     [](double x, const Node& n) {
       const double alpha = FloatAttr(n, "alpha", 1.67326319217681884765625);
       const double gamma = FloatAttr(n, "gamma", 1.05070102214813232421875);
       return gamma * (x > 0 ? x : alpha * (std::exp(x) - 1));
     },
     [](const std::string& x, const Node& n) {
       const double alpha = FloatAttr(n, "alpha", 1.67326319217681884765625);
       const double gamma = FloatAttr(n, "gamma", 1.05070102214813232421875);
       return absl::StrCat(L(gamma), " * select(gt(", x, ", 0), ", x, ", ",
                           L(alpha), " * (exp(", x, ") - 1))");
     }},
    {"Celu", Types::kFloat,
     [](double x, const Node& n) {
       const double alpha = FloatAttr(n, "alpha", 1.0);
       return std::max(0.0, x) +
              std::min(0.0, alpha * (std::exp(x / alpha) - 1));
     },
     [](const std::string& x, const Node& n) {
       const double alpha = FloatAttr(n, "alpha", 1.0);
       return absl::StrCat("max(", x, ", 0) + min(", L(alpha), " * (exp(", x,
                           " / ", L(alpha), ") - 1), 0)");
     }},
    {"Shrink", Types::kFloat,
     [](double x, const Node& n) {
       const double lambd = FloatAttr(n, "lambd", 0.5);
       const double bias = FloatAttr(n, "bias", 0.0);
       return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0;
     },
     [](const std::string& x, const Node& n) {
       const double lambd = FloatAttr(n, "lambd", 0.5);
       const double bias = FloatAttr(n, "bias", 0.0);
       return absl::StrCat("select(lt(", x, ", ", L(-lambd), "), ", x, " + ",
                           L(bias), ", select(gt(", x, ", ", L(lambd), "), ", x,
                           " - ", L(bias), ", 0))");
     }},
    {"Sin", Types::kFloat, [](double x, const Node&) { return std::sin(x); },
     nullptr},
    {"Cos", Types::kFloat, [](double x, const Node&) { return std::cos(x); },
     nullptr},
    {"Tan", Types::kFloat, [](double x, const Node&) { return std::tan(x); },
     nullptr},
    {"Asin", Types::kFloat, [](double x, const Node&) { return std::asin(x); },
     nullptr},
    {"Acos", Types::kFloat, [](double x, const Node&) { return std::acos(x); },
     nullptr},
    {"Atan", Types::kFloat, [](double x, const Node&) { return std::atan(x); },
     nullptr},
    {"Sinh", Types::kFloat, [](double x, const Node&) { return std::sinh(x); },
     nullptr},
    {"Cosh", Types::kFloat, [](double x, const Node&) { return std::cosh(x); },
     nullptr},
    {"Asinh", Types::kFloat,
     [](double x, const Node&) { return std::asinh(x); }, nullptr},
    {"Acosh", Types::kFloat,
     [](double x, const Node&) { return std::acosh(x); }, nullptr},
    {"Atanh", Types::kFloat,
     [](double x, const Node&) { return std::atanh(x); }, nullptr},
    {"Round", Types::kFloat,
     [](double x, const Node&) { return std::nearbyint(x); }, nullptr},
    {"Sign", Types::kNumeric,
     [](double x, const Node&) { return x > 0   ? 1.0
                                        : x < 0 ? -1.0
                                                : 0.0; },
     nullptr},
    {"Floor", Types::kFloat,
     [](double x, const Node&) { return std::floor(x); }, nullptr},
    {"Ceil", Types::kFloat, [](double x, const Node&) { return std::ceil(x); },
     nullptr},
    {"Not", Types::kBool,
     [](double x, const Node&) { return x != 0 ? 0.0 : 1.0; }, nullptr},
};

bool Accepts(Types types, DType dtype) {
  switch (types) {
    case Types::kFloat:
      return dtype.is_float();
    case Types::kNumeric:
      return dtype.is_float() || dtype.is_int();
    case Types::kBool:
      return dtype.is_bool();
  }
  return false;
}

OpDef MakeUnary(const UnaryOp& row) {
  OpDef def;
  def.op = row.op;
  def.role = row.kernel ? FusionRole::kElementwise : FusionRole::kHost;
  def.infer = [row](
                  const Graph& graph,
                  const Node& node) -> absl::StatusOr<std::vector<TensorType>> {
    absl::Status count = CheckInputCount(node, 1, 1);
    if (!count.ok()) return count;
    const TensorType& in = InputType(graph, node, 0);
    if (!Accepts(row.types, in.dtype)) {
      return NodeError(node, absl::StrCat("input type ", in.dtype.ToString(),
                                          " is not supported"));
    }
    return std::vector<TensorType>{in};
  };
  def.eval = [row](const Node& node, const std::vector<const TensorData*>& in)
      -> absl::StatusOr<std::vector<TensorData>> {
    TensorData out(in[0]->dtype, in[0]->shape);
    for (size_t i = 0; i < out.values.size(); ++i) {
      out.values[i] = row.host(in[0]->values[i], node);
    }
    RoundValues(out);
    return std::vector<TensorData>{std::move(out)};
  };
  if (row.kernel) {
    def.emit = [row](const Node& node, KernelEmitter& e) -> absl::Status {
      const std::vector<int64_t>& shape = e.output_type().shape;
      std::vector<std::string> vars = e.NewVars(shape);
      absl::StatusOr<std::string> x = e.ReadBroadcast(0, vars, shape);
      if (!x.ok()) return x.status();
      e.Add(e.output_name(), vars, "=", row.kernel(*x, node));
      return absl::OkStatus();
    };
  }
  return def;
}

}  // namespace

std::vector<OpDef> UnaryOps() {
  std::vector<OpDef> defs;
  for (const UnaryOp& row : kUnaryOps) defs.push_back(MakeUnary(row));
  return defs;
}

}  // namespace lathe::graph
