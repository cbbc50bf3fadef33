#include "compiler/workload/custom_workload.h"

#include <algorithm>
#include <memory>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/workload/expr_parser.h"
#include "compiler/workload/registry.h"

namespace lathe {

const CustomTensor* CustomDefinition::FindTensor(
    const std::string& name) const {
  for (const CustomTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

bool IsName(absl::string_view s) {
  if (s.empty() || !(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

absl::Status DimsError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("dims: ", message));
}

}  // namespace

absl::StatusOr<std::map<std::string, int64_t>> ParseDims(
    absl::string_view text) {
  std::map<std::string, int64_t> dims;
  if (absl::StripAsciiWhitespace(text).empty()) return dims;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return DimsError("empty entry (a stray ','); expected name=extent,...");
    }
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return DimsError(absl::StrCat("\"", item, "\" is not name=extent"));
    }
    const std::string name(absl::StripAsciiWhitespace(item.substr(0, eq)));
    const absl::string_view value =
        absl::StripAsciiWhitespace(item.substr(eq + 1));
    if (!IsName(name)) {
      return DimsError(absl::StrCat("\"", name, "\" is not an index name"));
    }
    if (dims.count(name))
      return DimsError(absl::StrCat(name, " is given twice"));
    absl::string_view digits = value;
    if (digits.empty() ||
        digits.find_first_not_of("0123456789") != absl::string_view::npos) {
      return DimsError(absl::StrCat(name, " must be a positive integer, got \"",
                                    value, "\""));
    }
    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
    int64_t v = 0;
    if (digits.size() > 12 || !absl::SimpleAtoi(digits, &v) ||
        v > kMaxParamValue) {
      return DimsError(absl::StrCat(name, "=", value, " is too large (at most ",
                                    kMaxParamValue, ")"));
    }
    if (v == 0) {
      return DimsError(absl::StrCat(name, " must be a positive integer, got \"",
                                    value, "\""));
    }
    dims[name] = v;
  }
  return dims;
}

namespace {

absl::Status ErrorAt(int column, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("custom expression, column ", column, ": ", message));
}

// Walks the accesses of an expression in source order.
template <typename Fn>
absl::Status ForEachAccess(const ParsedExpr& e, Fn&& fn) {
  if (e.kind == ParsedExprKind::kAccess) LATHE_RETURN_IF_ERROR(fn(e));
  for (const ParsedExpr& operand : e.operands) {
    LATHE_RETURN_IF_ERROR(ForEachAccess(operand, fn));
  }
  return absl::OkStatus();
}

// The smallest and largest value of an index over the dims (as wide
// integers: with coefficients and extents up to 2^31 the products need it).
struct IndexRange {
  __int128 min = 0, max = 0;
};

IndexRange RangeOf(const AffineIndex& index,
                   const std::map<std::string, int64_t>& dims) {
  IndexRange r{index.constant, index.constant};
  for (const auto& [var, coef] : index.coefs) {
    const __int128 span = static_cast<__int128>(coef) * (dims.at(var) - 1);
    (coef < 0 ? r.min : r.max) += span;
  }
  return r;
}

std::string Int128Text(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX)
    return absl::StrCat(static_cast<int64_t>(v));
  return v < 0 ? "a huge negative number" : "a huge number";
}

// Step-by-step checking of one definition; see CheckCustomDefinition.
class Checker {
 public:
  Checker(ParsedDefinition parsed, std::map<std::string, int64_t> dims) {
    def_.parsed = std::move(parsed);
    def_.dims = std::move(dims);
  }

  absl::StatusOr<CustomDefinition> Run() {
    const std::vector<ParsedStatement>& statements = def_.parsed.statements;
    for (size_t i = 0; i < statements.size(); ++i) {
      LATHE_RETURN_IF_ERROR(CheckStatement(statements[i]));
    }
    // 1. Every dim indexes something.
    for (const auto& [name, extent] : def_.dims) {
      if (!used_vars_.count(name)) {
        return DimsError(absl::StrCat(
            name, " is not an index of the expression; its indices: ",
            absl::StrJoin(used_vars_, ", ")));
      }
    }
    // 2. Names are either tensors or variables.
    for (const std::string& var : used_vars_) {
      if (shapes_.count(var)) {
        return absl::InvalidArgumentError(
            absl::StrCat("custom expression: ", var,
                         " is used both as a tensor and as an index variable"));
      }
    }
    // 3. Intermediates feed the output.
    for (size_t i = 0; i + 1 < statements.size(); ++i) {
      if (!read_.count(statements[i].output)) {
        return ErrorAt(statements[i].column,
                       absl::StrCat(statements[i].output,
                                    " is defined but never read; only the last "
                                    "statement defines an output"));
      }
    }
    // 4. Tensors in order: inputs, then defined ones; sizes within bounds.
    for (const std::string& name : input_order_) {
      def_.tensors.push_back(
          {name, shapes_.at(name), CustomTensor::Role::kInput});
    }
    for (size_t i = 0; i < statements.size(); ++i) {
      const std::string& name = statements[i].output;
      def_.tensors.push_back({name, shapes_.at(name),
                              i + 1 == statements.size()
                                  ? CustomTensor::Role::kOutput
                                  : CustomTensor::Role::kIntermediate});
    }
    for (const CustomTensor& t : def_.tensors) {
      absl::StatusOr<int64_t> n = CheckedNumElements(
          absl::StrCat("custom expression: tensor ", t.name), t.shape);
      if (!n.ok()) return n.status();
    }
    return std::move(def_);
  }

 private:
  absl::Status CheckVar(const std::string& var, int column) {
    if (!def_.dims.count(var)) {
      std::vector<std::string> given;
      for (const auto& [name, extent] : def_.dims) given.push_back(name);
      return ErrorAt(
          column,
          absl::StrCat("index ", var, " has no extent in the dims (given: ",
                       given.empty() ? "none" : absl::StrJoin(given, ", "),
                       "); add ", var, "=EXTENT"));
    }
    used_vars_.insert(var);
    return absl::OkStatus();
  }

  absl::Status CheckStatement(const ParsedStatement& s) {
    if (s.output == "root") {
      return ErrorAt(
          s.column,
          "the tensor name root is reserved for the program's root block");
    }
    if (defined_.count(s.output)) {
      return ErrorAt(s.column,
                     absl::StrCat("tensor ", s.output, " is defined twice"));
    }
    if (shapes_.count(s.output)) {
      return ErrorAt(
          s.column,
          absl::StrCat("tensor ", s.output,
                       " is read before the statement that defines it"));
    }
    // The left side: distinct variables, each with a dim.
    std::vector<int64_t> shape;
    std::set<std::string> lhs;
    for (const std::string& var : s.output_indices) {
      if (!lhs.insert(var).second) {
        return ErrorAt(
            s.column,
            absl::StrCat("index ", var, " appears twice on the left side of ",
                         s.output));
      }
      LATHE_RETURN_IF_ERROR(CheckVar(var, s.column));
      shape.push_back(def_.dims.at(var));
    }
    // The right side: accesses, their variables, input shapes, bounds.
    std::vector<std::string> rhs_only;  // in order of first appearance
    LATHE_RETURN_IF_ERROR(
        ForEachAccess(s.value, [&](const ParsedExpr& a) -> absl::Status {
          if (a.name == s.output) {
            return ErrorAt(
                a.column,
                absl::StrCat(
                    s.output,
                    " is read on the right side of its own definition"));
          }
          for (const AffineIndex& index : a.indices) {
            for (const auto& [var, coef] : index.coefs) {
              LATHE_RETURN_IF_ERROR(CheckVar(var, a.column));
              if (!lhs.count(var) && std::find(rhs_only.begin(), rhs_only.end(),
                                               var) == rhs_only.end()) {
                rhs_only.push_back(var);
              }
            }
          }
          return CheckAccess(a);
        }));
    if (s.assign == AssignKind::kAssign && !rhs_only.empty()) {
      return ErrorAt(s.column,
                     absl::StrCat("index ", rhs_only[0],
                                  " appears on the right side of ", s.output,
                                  " = ... but not on the left; use +=, max= "
                                  "or min= to reduce over it"));
    }
    if (s.assign != AssignKind::kAssign && rhs_only.empty()) {
      return ErrorAt(
          s.column,
          absl::StrCat(AssignKindText(s.assign),
                       " reduces over the indices found only "
                       "on the right side, but every index of ",
                       s.output, "'s right side is on its left; use ="));
    }
    defined_.insert(s.output);
    shapes_[s.output] = shape;
    return absl::OkStatus();
  }

  absl::Status CheckAccess(const ParsedExpr& a) {
    read_.insert(a.name);
    auto it = shapes_.find(a.name);
    if (it != shapes_.end() && it->second.size() != a.indices.size()) {
      return ErrorAt(a.column,
                     absl::StrCat(a.name, " is read with ", a.indices.size(),
                                  " indices here but has ", it->second.size(),
                                  " dimensions"));
    }
    const bool is_input = !defined_.count(a.name);
    if (it == shapes_.end()) {
      input_order_.push_back(a.name);
      it = shapes_.emplace(a.name, std::vector<int64_t>(a.indices.size(), 1))
               .first;
    }
    for (size_t d = 0; d < a.indices.size(); ++d) {
      const IndexRange r = RangeOf(a.indices[d], def_.dims);
      if (r.min < 0) {
        return ErrorAt(
            a.column,
            absl::StrCat("index ", a.indices[d].ToString(), " of ", a.name,
                         " can be negative (down to ", Int128Text(r.min), ")"));
      }
      if (is_input) {
        if (r.max + 1 > kMaxTensorElements) {
          return ErrorAt(a.column,
                         absl::StrCat("index ", a.indices[d].ToString(), " of ",
                                      a.name, " reaches ", Int128Text(r.max),
                                      ", too large (at most ",
                                      kMaxTensorElements, " elements)"));
        }
        it->second[d] =
            std::max<int64_t>(it->second[d], static_cast<int64_t>(r.max) + 1);
      } else if (r.max >= it->second[d]) {
        return ErrorAt(a.column,
                       absl::StrCat("index ", a.indices[d].ToString(), " of ",
                                    a.name, " reaches ", Int128Text(r.max),
                                    ", past its extent ", it->second[d]));
      }
    }
    return absl::OkStatus();
  }

  CustomDefinition def_;
  std::set<std::string> used_vars_;
  std::set<std::string> defined_;
  std::set<std::string> read_;
  std::map<std::string, std::vector<int64_t>> shapes_;  // inputs and defined
  std::vector<std::string> input_order_;
};

// Lowers a checked expression to the loop IR's expressions.
class Lowering {
 public:
  Lowering(const std::map<std::string, te::Tensor>& tensors,
           const std::map<std::string, Expr>& vars)
      : tensors_(tensors), vars_(vars) {}

  Expr Lower(const ParsedExpr& e) const {
    const DType f32 = DType::Float32();
    switch (e.kind) {
      case ParsedExprKind::kLiteral:
        return FloatImm(e.literal, f32);
      case ParsedExprKind::kAccess: {
        std::vector<Expr> indices;
        for (const AffineIndex& index : e.indices)
          indices.push_back(Index(index));
        return tensors_.at(e.name)(indices);
      }
      case ParsedExprKind::kNeg:
        return Zero(f32) - Lower(e.operands[0]);
      case ParsedExprKind::kAdd:
        return Lower(e.operands[0]) + Lower(e.operands[1]);
      case ParsedExprKind::kSub:
        return Lower(e.operands[0]) - Lower(e.operands[1]);
      case ParsedExprKind::kMul:
        return Lower(e.operands[0]) * Lower(e.operands[1]);
      case ParsedExprKind::kDiv:
        return Lower(e.operands[0]) / Lower(e.operands[1]);
      case ParsedExprKind::kCall: {
        if (e.name == "max")
          return Max(Lower(e.operands[0]), Lower(e.operands[1]));
        if (e.name == "min")
          return Min(Lower(e.operands[0]), Lower(e.operands[1]));
        std::vector<Expr> args;
        for (const ParsedExpr& operand : e.operands)
          args.push_back(Lower(operand));
        return Call(e.name, std::move(args), f32);
      }
    }
    LATHE_CHECK(false, "unhandled custom expression kind");
    return Expr();
  }

 private:
  // coef*var terms in name order, then the constant: 2*p+r-1 -> p*2 + r - 1.
  Expr Index(const AffineIndex& index) const {
    Expr e;
    for (const auto& [var, coef] : index.coefs) {
      Expr term = vars_.at(var) * Expr(coef < 0 ? -coef : coef);
      if (!e.defined()) {
        e = coef < 0 ? Expr(0) - term : term;
      } else {
        e = coef < 0 ? e - term : e + term;
      }
    }
    if (!e.defined()) return Expr(index.constant);
    if (index.constant > 0) return e + Expr(index.constant);
    if (index.constant < 0) return e - Expr(-index.constant);
    return e;
  }

  const std::map<std::string, te::Tensor>& tensors_;
  const std::map<std::string, Expr>& vars_;
};

}  // namespace

absl::StatusOr<CustomDefinition> CheckCustomDefinition(
    ParsedDefinition parsed, std::map<std::string, int64_t> dims) {
  return Checker(std::move(parsed), std::move(dims)).Run();
}

absl::StatusOr<Workload> MakeCustomWorkload(CustomDefinition definition) {
  auto def = std::make_shared<const CustomDefinition>(std::move(definition));
  std::map<std::string, te::Tensor> tensors;
  std::vector<te::Tensor> inputs, outputs;
  for (const CustomTensor& t : def->tensors) {
    if (t.role != CustomTensor::Role::kInput) continue;
    tensors[t.name] = te::Placeholder(t.name, t.shape, DType::Float32());
    inputs.push_back(tensors[t.name]);
  }
  for (const ParsedStatement& s : def->parsed.statements) {
    const std::vector<int64_t>& shape = def->FindTensor(s.output)->shape;
    // The reduction axes: variables of the right side not on the left, in
    // order of first appearance.
    std::vector<te::ReduceAxis> axes;
    std::map<std::string, Expr> reduce_vars;
    LATHE_RETURN_IF_ERROR(ForEachAccess(s.value, [&](const ParsedExpr& a) {
      for (const AffineIndex& index : a.indices) {
        for (const auto& [var, coef] : index.coefs) {
          if (std::count(s.output_indices.begin(), s.output_indices.end(),
                         var) ||
              reduce_vars.count(var)) {
            continue;
          }
          axes.push_back(te::MakeReduceAxis(def->dims.at(var), var));
          reduce_vars[var] = axes.back().var;
        }
      }
      return absl::OkStatus();
    }));
    auto var_map = [&](const std::vector<Expr>& ax) {
      std::map<std::string, Expr> vars = reduce_vars;
      for (size_t i = 0; i < ax.size(); ++i) vars[s.output_indices[i]] = ax[i];
      return vars;
    };
    te::Tensor t;
    if (s.assign == AssignKind::kAssign) {
      t = te::Compute(s.output, shape, s.output_indices,
                      [&](const std::vector<Expr>& ax) {
                        std::map<std::string, Expr> vars = var_map(ax);
                        return Lowering(tensors, vars).Lower(s.value);
                      });
    } else {
      t = te::ComputeReduction(
          s.output, shape, s.output_indices, [&](const std::vector<Expr>& ax) {
            std::map<std::string, Expr> vars = var_map(ax);
            Expr value = Lowering(tensors, vars).Lower(s.value);
            switch (s.assign) {
              case AssignKind::kMax:
                return te::MaxOver(value, axes);
              case AssignKind::kMin:
                return te::MinOver(value, axes);
              default:
                return te::Sum(value, axes);
            }
          });
    }
    tensors[s.output] = t;
  }
  outputs.push_back(tensors.at(def->parsed.statements.back().output));

  std::map<std::string, std::string> params;
  std::vector<std::string> dim_texts;
  for (const auto& [name, extent] : def->dims) {
    params[name] = absl::StrCat(extent);
    dim_texts.push_back(absl::StrCat(name, "=", extent));
  }
  std::string canonical =
      absl::StrCat("custom:", PrintParsedDefinition(def->parsed), "|",
                   absl::StrJoin(dim_texts, ","));
  return Workload("custom", std::move(params), std::move(inputs),
                  std::move(outputs), std::move(canonical), std::move(def));
}

absl::StatusOr<Workload> ParseCustomWorkload(absl::string_view expr,
                                             absl::string_view dims) {
  absl::StatusOr<ParsedDefinition> parsed = ParseCustomExpr(expr);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<std::map<std::string, int64_t>> dim_map = ParseDims(dims);
  if (!dim_map.ok()) return dim_map.status();
  absl::StatusOr<CustomDefinition> checked =
      CheckCustomDefinition(std::move(*parsed), std::move(*dim_map));
  if (!checked.ok()) return checked.status();
  return MakeCustomWorkload(std::move(*checked));
}

}  // namespace lathe
