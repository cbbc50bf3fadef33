#include "compiler/workload/custom_eval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/check.h"

namespace lathe {
namespace {

// An expression resolved for fast evaluation: tensor accesses become a flat
// offset that is affine in the statement's variable slots, so evaluating an
// element allocates nothing.
struct EvalNode {
  ParsedExprKind kind;
  double literal = 0;
  std::string function;          // kCall
  const double* data = nullptr;  // kAccess
  int64_t base = 0;              // kAccess: offset at all-zero slots
  std::vector<std::pair<int, int64_t>> strides;  // kAccess: (slot, stride)
  // kAccess, padded: each index (constant, (slot, coefficient) terms), the
  // tensor's shape, and the value outside it.
  bool padded = false;
  std::vector<std::pair<int64_t, std::vector<std::pair<int, int64_t>>>> indices;
  std::vector<int64_t> shape;
  double pad_value = 0;
  std::vector<EvalNode> operands;
};

double EvalPadded(const EvalNode& n, const std::vector<int64_t>& slots) {
  int64_t offset = 0;
  for (size_t d = 0; d < n.indices.size(); ++d) {
    int64_t index = n.indices[d].first;
    for (const auto& [slot, coef] : n.indices[d].second)
      index += slots[slot] * coef;
    if (index < 0 || index >= n.shape[d]) return n.pad_value;
    offset = offset * n.shape[d] + index;
  }
  return n.data[offset];
}

double Eval(const EvalNode& n, const std::vector<int64_t>& slots) {
  switch (n.kind) {
    case ParsedExprKind::kLiteral:
      return n.literal;
    case ParsedExprKind::kAccess: {
      if (n.padded) return EvalPadded(n, slots);
      int64_t offset = n.base;
      for (const auto& [slot, stride] : n.strides)
        offset += slots[slot] * stride;
      return n.data[offset];
    }
    case ParsedExprKind::kNeg:
      return -Eval(n.operands[0], slots);
    case ParsedExprKind::kAdd:
      return Eval(n.operands[0], slots) + Eval(n.operands[1], slots);
    case ParsedExprKind::kSub:
      return Eval(n.operands[0], slots) - Eval(n.operands[1], slots);
    case ParsedExprKind::kMul:
      return Eval(n.operands[0], slots) * Eval(n.operands[1], slots);
    case ParsedExprKind::kDiv:
      return Eval(n.operands[0], slots) / Eval(n.operands[1], slots);
    case ParsedExprKind::kCall: {
      const double a = Eval(n.operands[0], slots);
      if (n.function == "select") {
        return Eval(n.operands[a != 0 ? 1 : 2], slots);
      }
      if (n.operands.size() == 2) {
        const double b = Eval(n.operands[1], slots);
        if (n.function == "max") return std::max(a, b);
        if (n.function == "min") return std::min(a, b);
        if (n.function == "pow") return std::pow(a, b);
        if (n.function == "lt") return a < b ? 1.0 : 0.0;
        if (n.function == "le") return a <= b ? 1.0 : 0.0;
        if (n.function == "gt") return a > b ? 1.0 : 0.0;
        if (n.function == "ge") return a >= b ? 1.0 : 0.0;
        if (n.function == "eq") return a == b ? 1.0 : 0.0;
      }
      if (n.function == "erf") return std::erf(a);
      if (n.function == "exp") return std::exp(a);
      if (n.function == "log") return std::log(a);
      if (n.function == "sqrt") return std::sqrt(a);
      if (n.function == "tanh") return std::tanh(a);
      if (n.function == "abs") return std::fabs(a);
      LATHE_CHECK(false, "custom evaluation: unknown function ", n.function);
      return 0;
    }
  }
  LATHE_CHECK(false, "custom evaluation: unhandled expression kind");
  return 0;
}

struct TensorStore {
  const double* data;
  std::vector<int64_t> shape;
  double pad_value = 0;
};

EvalNode Resolve(const ParsedExpr& e,
                 const std::map<std::string, TensorStore>& tensors,
                 const std::map<std::string, int>& slot_of) {
  EvalNode n;
  n.kind = e.kind;
  n.literal = e.literal;
  n.function = e.name;
  if (e.kind == ParsedExprKind::kAccess && e.padded) {
    const TensorStore& t = tensors.at(e.name);
    n.data = t.data;
    n.padded = true;
    n.shape = t.shape;
    n.pad_value = t.pad_value;
    for (const AffineIndex& index : e.indices) {
      std::vector<std::pair<int, int64_t>> terms;
      for (const auto& [var, coef] : index.coefs)
        terms.emplace_back(slot_of.at(var), coef);
      n.indices.emplace_back(index.constant, std::move(terms));
    }
  } else if (e.kind == ParsedExprKind::kAccess) {
    const TensorStore& t = tensors.at(e.name);
    n.data = t.data;
    std::map<int, int64_t> strides;
    int64_t stride = 1;
    for (size_t d = e.indices.size(); d-- > 0;) {
      n.base += e.indices[d].constant * stride;
      for (const auto& [var, coef] : e.indices[d].coefs)
        strides[slot_of.at(var)] += coef * stride;
      stride *= t.shape[d];
    }
    n.strides.assign(strides.begin(), strides.end());
  }
  for (const ParsedExpr& operand : e.operands) {
    n.operands.push_back(Resolve(operand, tensors, slot_of));
  }
  return n;
}

// Advances an odometer over slots [first, last) with the given extents;
// false when it wraps around.
bool Advance(std::vector<int64_t>& slots, const std::vector<int64_t>& extents,
             size_t first, size_t last) {
  for (size_t i = last; i-- > first;) {
    if (++slots[i] < extents[i]) return true;
    slots[i] = 0;
  }
  return false;
}

void Collect(const ParsedExpr& e, std::vector<std::string>* vars) {
  for (const AffineIndex& index : e.indices) {
    for (const auto& [var, coef] : index.coefs) {
      if (std::find(vars->begin(), vars->end(), var) == vars->end())
        vars->push_back(var);
    }
  }
  for (const ParsedExpr& operand : e.operands) Collect(operand, vars);
}

}  // namespace

void EvaluateCustomDefinition(const CustomDefinition& def,
                              const std::vector<const TensorData*>& inputs,
                              const std::vector<TensorData*>& outputs) {
  std::map<std::string, TensorStore> tensors;
  std::map<std::string, std::vector<double>> computed;  // defined tensors
  size_t next_input = 0;
  for (const CustomTensor& t : def.tensors) {
    if (t.role == CustomTensor::Role::kInput) {
      tensors[t.name] = {inputs[next_input++]->values.data(), t.shape,
                         t.pad_value};
    }
  }
  for (const ParsedStatement& s : def.parsed.statements) {
    // Slots: the left-side variables, then the reduced ones.
    std::vector<std::string> vars = s.output_indices;
    const size_t num_spatial = vars.size();
    Collect(s.value, &vars);
    std::map<std::string, int> slot_of;
    std::vector<int64_t> extents;
    for (size_t i = 0; i < vars.size(); ++i) {
      slot_of[vars[i]] = static_cast<int>(i);
      extents.push_back(def.dims.at(vars[i]));
    }
    const EvalNode value = Resolve(s.value, tensors, slot_of);
    const std::vector<int64_t>& shape = def.FindTensor(s.output)->shape;
    int64_t size = 1;
    for (int64_t e : shape) size *= e;
    std::vector<double>& out = computed[s.output];
    out.assign(static_cast<size_t>(size), 0.0);

    double init = 0;
    if (s.assign == AssignKind::kMax)
      init = -std::numeric_limits<double>::infinity();
    if (s.assign == AssignKind::kMin)
      init = std::numeric_limits<double>::infinity();
    std::vector<int64_t> slots(vars.size(), 0);
    int64_t flat = 0;  // the left-side odometer runs in row-major order
    do {
      std::fill(slots.begin() + num_spatial, slots.end(), 0);
      double acc = init;
      do {
        const double v = Eval(value, slots);
        switch (s.assign) {
          case AssignKind::kAssign:
            acc = v;
            break;
          case AssignKind::kSum:
            acc += v;
            break;
          case AssignKind::kMax:
            acc = std::max(acc, v);
            break;
          case AssignKind::kMin:
            acc = std::min(acc, v);
            break;
        }
      } while (Advance(slots, extents, num_spatial, vars.size()));
      out[flat++] = acc;
    } while (Advance(slots, extents, 0, num_spatial));
    tensors[s.output] = {out.data(), shape, 0.0};
  }
  const std::vector<double>& result =
      computed.at(def.parsed.statements.back().output);
  TensorData& output = *outputs[0];
  for (size_t i = 0; i < result.size(); ++i) {
    output.values[i] = RoundToDType(result[i], output.dtype);
  }
}

}  // namespace lathe
