#include "compiler/workload/custom_workload.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
#include "base/untrusted_text.h"
#include "compiler/workload/expr_parser.h"
#include "compiler/workload/registry.h"

namespace lathe {

bool CustomTensor::IsPadded() const {
  for (size_t d = 0; d < pad_before.size(); ++d) {
    if (pad_before[d] > 0 || pad_after[d] > 0) return true;
  }
  return false;
}

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
                                    EscapedPrefix(value), "\""));
    }
    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
    int64_t v = 0;
    if (digits.size() > 12 || !absl::SimpleAtoi(digits, &v) ||
        v > kMaxParamValue) {
      return DimsError(absl::StrCat(name, "=", EscapedPrefix(value),
                                    " is too large (at most ", kMaxParamValue,
                                    ")"));
    }
    if (v == 0) {
      return DimsError(absl::StrCat(name, " must be a positive integer, got \"",
                                    EscapedPrefix(value), "\""));
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
    if (def_.parsed.inputs.size() >
        static_cast<size_t>(kMaxInputDeclarations)) {
      return absl::InvalidArgumentError(
          absl::StrCat("custom expression: more than ", kMaxInputDeclarations,
                       " input declarations"));
    }
    if (def_.parsed.statements.empty()) {
      return absl::InvalidArgumentError(
          "custom expression: no statement defines an output");
    }
    for (const InputDeclaration& d : def_.parsed.inputs) {
      LATHE_RETURN_IF_ERROR(CheckDeclaration(d));
    }
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
    // 4. Declared inputs are read.
    for (const InputDeclaration& d : def_.parsed.inputs) {
      if (!read_.count(d.name)) {
        return ErrorAt(d.column,
                       absl::StrCat("input ", d.name,
                                    " is declared but no statement reads it"));
      }
    }
    // 5. Tensors in order: inputs (declared ones first), then defined ones;
    // sizes within bounds.
    for (const std::string& name : input_order_) {
      CustomTensor t;
      t.name = name;
      t.shape = shapes_.at(name);
      t.role = CustomTensor::Role::kInput;
      if (auto d = declared_.find(name); d != declared_.end()) {
        t.declared = true;
        t.pad_value = d->second->pad_value;
        t.constant = d->second->constant;
        const Padding& padding = padding_[name];
        t.pad_before = padding.before;
        t.pad_after = padding.after;
        std::vector<int64_t> padded = t.shape;
        for (size_t i = 0; i < padded.size(); ++i) {
          padded[i] += t.pad_before[i] + t.pad_after[i];
        }
        absl::StatusOr<int64_t> n = CheckedNumElements(
            absl::StrCat("custom expression: input ", name,
                         " with the padding its padded reads reach"),
            padded);
        if (!n.ok()) return n.status();
      }
      def_.tensors.push_back(std::move(t));
    }
    for (size_t i = 0; i < statements.size(); ++i) {
      CustomTensor t;
      t.name = statements[i].output;
      t.shape = shapes_.at(t.name);
      t.role = i + 1 == statements.size() ? CustomTensor::Role::kOutput
                                          : CustomTensor::Role::kIntermediate;
      def_.tensors.push_back(std::move(t));
    }
    for (const CustomTensor& t : def_.tensors) {
      absl::StatusOr<int64_t> n = CheckedNumElements(
          absl::StrCat("custom expression: tensor ", t.name), t.shape);
      if (!n.ok()) return n.status();
    }
    return std::move(def_);
  }

 private:
  absl::Status CheckDeclaration(const InputDeclaration& d) {
    if (d.name == "root") {
      return ErrorAt(
          d.column,
          "the tensor name root is reserved for the program's root block");
    }
    if (declared_.count(d.name)) {
      return ErrorAt(d.column,
                     absl::StrCat("input ", d.name, " is declared twice"));
    }
    if (d.shape.empty() ||
        d.shape.size() > static_cast<size_t>(kMaxDeclaredRank)) {
      return ErrorAt(d.column,
                     absl::StrCat("input ", d.name, " must have 1 to ",
                                  kMaxDeclaredRank, " dimensions"));
    }
    for (int64_t extent : d.shape) {
      if (extent < 1 || extent > kMaxParamValue) {
        return ErrorAt(d.column,
                       absl::StrCat("extent ", extent, " of input ", d.name,
                                    " must be in [1, ", kMaxParamValue, "]"));
      }
    }
    absl::StatusOr<int64_t> n = CheckedNumElements(
        absl::StrCat("custom expression: input ", d.name), d.shape);
    if (!n.ok()) return n.status();
    if (!(std::fabs(d.pad_value) <= std::numeric_limits<float>::max())) {
      return ErrorAt(d.column, absl::StrCat("the pad value of input ", d.name,
                                            " is not a finite float32"));
    }
    declared_[d.name] = &d;
    shapes_[d.name] = d.shape;
    input_order_.push_back(d.name);
    padding_[d.name] = {std::vector<int64_t>(d.shape.size(), 0),
                        std::vector<int64_t>(d.shape.size(), 0)};
    return absl::OkStatus();
  }

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
    if (declared_.count(s.output)) {
      return ErrorAt(s.column,
                     absl::StrCat("tensor ", s.output,
                                  " is declared as an input; a statement "
                                  "cannot define it"));
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
    if (auto d = declared_.find(a.name); d != declared_.end()) {
      return CheckDeclaredAccess(a, d->second->shape);
    }
    if (a.padded) {
      return ErrorAt(
          a.column,
          defined_.count(a.name)
              ? absl::StrCat(a.name, "?[...] pads ", a.name,
                             ", which a statement defines; only declared "
                             "inputs take padded reads")
              : absl::StrCat(a.name,
                             "?[...] pads an undeclared input; "
                             "declare it first: input ",
                             a.name, "[extents];"));
    }
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

  // A read of a declared input: its rank, and its indices within the
  // declared extents, or (padded) within the padding it grows.
  absl::Status CheckDeclaredAccess(const ParsedExpr& a,
                                   const std::vector<int64_t>& shape) {
    if (shape.size() != a.indices.size()) {
      return ErrorAt(a.column,
                     absl::StrCat("input ", a.name, " is declared with ",
                                  shape.size(), " dimensions but read with ",
                                  a.indices.size(), " indices here"));
    }
    Padding& padding = padding_.at(a.name);
    for (size_t d = 0; d < a.indices.size(); ++d) {
      const IndexRange r = RangeOf(a.indices[d], def_.dims);
      const std::string where =
          absl::StrCat("index ", a.indices[d].ToString(), " of input ", a.name,
                       " in dimension ", d, " (extent ", shape[d], ")");
      if (a.padded) {
        // The padding becomes a tensor: keep it within the tensor bounds.
        if (r.min < -kMaxTensorElements || r.max >= kMaxTensorElements) {
          return ErrorAt(
              a.column,
              absl::StrCat(where, " spans ", Int128Text(r.min), " to ",
                           Int128Text(r.max), ", too far to pad (at most ",
                           kMaxTensorElements, " elements)"));
        }
        padding.before[d] =
            std::max<int64_t>(padding.before[d], static_cast<int64_t>(-r.min));
        padding.after[d] = std::max<int64_t>(
            padding.after[d], static_cast<int64_t>(r.max) - (shape[d] - 1));
        continue;
      }
      if (r.min < 0) {
        return ErrorAt(a.column,
                       absl::StrCat(where, " can be negative (down to ",
                                    Int128Text(r.min), "); read ", a.name,
                                    "?[...] for the pad value outside it"));
      }
      if (r.max >= shape[d]) {
        return ErrorAt(a.column,
                       absl::StrCat(where, " reaches ", Int128Text(r.max),
                                    ", past the declared extent; read ", a.name,
                                    "?[...] for the pad value outside it"));
      }
    }
    return absl::OkStatus();
  }

  CustomDefinition def_;
  std::set<std::string> used_vars_;
  std::set<std::string> defined_;
  std::set<std::string> read_;
  std::map<std::string, std::vector<int64_t>> shapes_;  // inputs and defined
  std::vector<std::string> input_order_;                // declared ones first
  std::map<std::string, const InputDeclaration*> declared_;
  struct Padding {
    std::vector<int64_t> before, after;  // per dimension
  };
  std::map<std::string, Padding> padding_;  // of declared inputs
};

// The padding stage of a declared input with padded reads that leave it,
// and how far it reaches before index 0 in each dimension.
struct PaddedInput {
  te::Tensor tensor;
  std::vector<int64_t> before;
};

// Lowers a checked expression to the loop IR's expressions.
class Lowering {
 public:
  Lowering(const std::map<std::string, te::Tensor>& tensors,
           const std::map<std::string, PaddedInput>& padded,
           const std::map<std::string, Expr>& vars)
      : tensors_(tensors), padded_(padded), vars_(vars) {}

  Expr Lower(const ParsedExpr& e) const {
    const DType f32 = DType::Float32();
    switch (e.kind) {
      case ParsedExprKind::kLiteral:
        return FloatImm(e.literal, f32);
      case ParsedExprKind::kAccess: {
        auto padded = padded_.find(e.name);
        if (e.padded && padded != padded_.end()) {
          std::vector<Expr> indices;
          for (size_t d = 0; d < e.indices.size(); ++d) {
            AffineIndex shifted = e.indices[d];
            shifted.constant += padded->second.before[d];
            indices.push_back(Index(shifted));
          }
          return padded->second.tensor(indices);
        }
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
        if (e.name == "select") {
          // select(lt(a, b), ...) selects on a < b itself.
          Expr condition = e.operands[0].kind == ParsedExprKind::kCall
                               ? Comparison(e.operands[0])
                               : Expr();
          if (!condition.defined()) {
            condition = Lower(e.operands[0]) != Zero(f32);
          }
          return Select(condition, Lower(e.operands[1]), Lower(e.operands[2]));
        }
        if (Expr compared = Comparison(e); compared.defined()) {
          return Select(compared, FloatImm(1.0, f32), Zero(f32));
        }
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
  // lt(a, b) -> a < b, ...; undefined for other calls.
  Expr Comparison(const ParsedExpr& e) const {
    if (e.name == "lt") return Lower(e.operands[0]) < Lower(e.operands[1]);
    if (e.name == "le") return Lower(e.operands[0]) <= Lower(e.operands[1]);
    if (e.name == "gt") return Lower(e.operands[0]) > Lower(e.operands[1]);
    if (e.name == "ge") return Lower(e.operands[0]) >= Lower(e.operands[1]);
    if (e.name == "eq") return Lower(e.operands[0]) == Lower(e.operands[1]);
    return Expr();
  }

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
  const std::map<std::string, PaddedInput>& padded_;
  const std::map<std::string, Expr>& vars_;
};

// A stage name not taken by a tensor or an index variable: NAME_pad, else
// NAME_pad2, NAME_pad3, ...
std::string PaddingStageName(const CustomDefinition& def,
                             const std::string& input,
                             const std::set<std::string>& taken) {
  const std::string base = input + "_pad";
  std::string name = base;
  for (int n = 2; def.FindTensor(name) != nullptr || def.dims.count(name) ||
                  taken.count(name);
       ++n) {
    name = absl::StrCat(base, n);
  }
  return name;
}

// X with t.pad_before / t.pad_after elements of the pad value around it:
// a select on the bounds that compute_inline can fold into the readers.
// Where the condition is false the select's load of X is out of bounds and
// must not be performed (Select's semantics, compiler/ir/expr.h).
te::Tensor PaddingStage(const std::string& name, const te::Tensor& x,
                        const CustomTensor& t) {
  std::vector<int64_t> shape = t.shape;
  std::vector<std::string> axis_names;
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] += t.pad_before[d] + t.pad_after[d];
    axis_names.push_back(absl::StrCat("i", d));
  }
  return te::Compute(
      name, shape, std::move(axis_names), [&](const std::vector<Expr>& ax) {
        Expr inside;
        std::vector<Expr> indices;
        for (size_t d = 0; d < ax.size(); ++d) {
          const int64_t before = t.pad_before[d];
          indices.push_back(before > 0 ? ax[d] - Expr(before) : ax[d]);
          std::vector<Expr> bounds;
          if (before > 0) bounds.push_back(ax[d] >= Expr(before));
          if (t.pad_after[d] > 0)
            bounds.push_back(ax[d] < Expr(before + t.shape[d]));
          for (Expr& bound : bounds) {
            inside = inside.defined() ? inside && bound : bound;
          }
        }
        return Select(inside, x(indices),
                      FloatImm(t.pad_value, DType::Float32()));
      });
}

}  // namespace

absl::StatusOr<CustomDefinition> CheckCustomDefinition(
    ParsedDefinition parsed, std::map<std::string, int64_t> dims) {
  return Checker(std::move(parsed), std::move(dims)).Run();
}

absl::StatusOr<Workload> MakeCustomWorkload(CustomDefinition definition) {
  auto def = std::make_shared<const CustomDefinition>(std::move(definition));
  std::map<std::string, te::Tensor> tensors;
  std::vector<te::Tensor> inputs, outputs;
  std::map<std::string, PaddedInput> padded;
  std::set<std::string> stage_names;
  for (const CustomTensor& t : def->tensors) {
    if (t.role != CustomTensor::Role::kInput) continue;
    tensors[t.name] = te::Placeholder(t.name, t.shape, DType::Float32());
    inputs.push_back(tensors[t.name]);
    if (t.IsPadded()) {
      const std::string name = PaddingStageName(*def, t.name, stage_names);
      stage_names.insert(name);
      padded[t.name] = {PaddingStage(name, tensors[t.name], t), t.pad_before};
    }
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
                        return Lowering(tensors, padded, vars).Lower(s.value);
                      });
    } else {
      t = te::ComputeReduction(
          s.output, shape, s.output_indices, [&](const std::vector<Expr>& ax) {
            std::map<std::string, Expr> vars = var_map(ax);
            Expr value = Lowering(tensors, padded, vars).Lower(s.value);
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

absl::StatusOr<CustomDefinition> ParseCustomDefinition(absl::string_view expr,
                                                       absl::string_view dims) {
  absl::StatusOr<ParsedDefinition> parsed = ParseCustomExpr(expr);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<std::map<std::string, int64_t>> dim_map = ParseDims(dims);
  if (!dim_map.ok()) return dim_map.status();
  return CheckCustomDefinition(std::move(*parsed), std::move(*dim_map));
}

absl::StatusOr<Workload> ParseCustomWorkload(absl::string_view expr,
                                             absl::string_view dims) {
  absl::StatusOr<CustomDefinition> checked = ParseCustomDefinition(expr, dims);
  if (!checked.ok()) return checked.status();
  return MakeCustomWorkload(std::move(*checked));
}

absl::StatusOr<CustomDefinition> ParseCustomSpec(absl::string_view spec) {
  const absl::string_view whole = spec;
  absl::ConsumePrefix(&spec, "custom:");
  const size_t bar = spec.rfind('|');
  if (bar == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "workload spec \"", EscapedPrefix(whole),
        "\": no '|' before the dims; a custom workload is custom:EXPR|DIMS, "
        "such as custom:C[i,j] += A[i,k] * B[k,j]|i=64,j=64,k=64"));
  }
  return ParseCustomDefinition(spec.substr(0, bar), spec.substr(bar + 1));
}

}  // namespace lathe
