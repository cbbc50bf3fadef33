#include "compiler/workload/spec.h"

#include <functional>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/untrusted_text.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/registry.h"

namespace lathe {
namespace {

absl::Status SpecError(absl::string_view spec, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("workload spec \"", EscapedPrefix(spec), "\": ", message));
}

// Every tensor of the definition, intermediates (such as "pad") included,
// must stay within kMaxTensorElements.
absl::Status CheckTensorSizes(const std::string& op,
                              const std::vector<te::Tensor>& inputs,
                              const std::vector<te::Tensor>& outputs) {
  std::set<const Buffer*> seen;
  std::function<absl::Status(const te::Tensor&)> check =
      [&](const te::Tensor& t) -> absl::Status {
    if (!seen.insert(t.buffer().get()).second) return absl::OkStatus();
    absl::StatusOr<int64_t> n =
        CheckedNumElements(absl::StrCat(op, ": tensor ", t.name()), t.shape());
    if (!n.ok()) return n.status();
    if (t.def() != nullptr) {
      for (const te::Tensor& in : t.def()->inputs)
        LATHE_RETURN_IF_ERROR(check(in));
    }
    return absl::OkStatus();
  };
  for (const te::Tensor& t : inputs) LATHE_RETURN_IF_ERROR(check(t));
  for (const te::Tensor& t : outputs) LATHE_RETURN_IF_ERROR(check(t));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Workload> MakeWorkload(
    absl::string_view op_name,
    const std::vector<std::pair<std::string, std::string>>& given) {
  const OperatorDef* op = FindOperator(op_name);
  if (op == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown operator \"", EscapedPrefix(op_name), "\"; known operators: ",
        OperatorNames(), " (or custom:EXPR|DIMS for an expression)"));
  }
  // 1. Each given parameter: declared, given once, valid on its own.
  std::map<std::string, std::string> params;
  for (const auto& [key, value] : given) {
    const ParamSpec* param = op->FindParam(key);
    if (param == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(op->name, ": unknown parameter \"", EscapedPrefix(key),
                       "\"; accepted: ", op->ParamNames()));
    }
    if (params.count(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat(op->name, ": parameter ", key, " is given twice"));
    }
    absl::StatusOr<std::string> canonical =
        CanonicalParamValue(*op, *param, value);
    if (!canonical.ok()) return canonical.status();
    params[key] = *canonical;
  }
  // 2. Required ones present, defaults filled in.
  std::vector<std::string> missing;
  for (const ParamSpec& p : op->params) {
    if (params.count(p.name)) continue;
    if (p.required()) {
      missing.push_back(p.name);
    } else {
      params[p.name] = *p.default_value;
    }
  }
  if (!missing.empty()) {
    std::vector<std::string> required;
    for (const ParamSpec& p : op->params) {
      if (p.required()) required.push_back(p.name);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        op->name, ": missing parameter", missing.size() > 1 ? "s " : " ",
        absl::StrJoin(missing, ", "),
        "; required: ", absl::StrJoin(required, ", ")));
  }
  // 3. Build (which checks the parameters together) and bound the sizes.
  absl::StatusOr<OpTensors> tensors =
      op->build(OpParamsFromCanonical(*op, params));
  if (!tensors.ok()) return tensors.status();
  LATHE_RETURN_IF_ERROR(
      CheckTensorSizes(op->name, tensors->inputs, tensors->outputs));

  std::vector<std::string> entries;
  for (const auto& [key, value] : params)
    entries.push_back(absl::StrCat(key, "=", value));
  std::string canonical =
      absl::StrCat(op->name, ":", absl::StrJoin(entries, ","));
  return Workload(op->name, std::move(params), std::move(tensors->inputs),
                  std::move(tensors->outputs), std::move(canonical));
}

absl::StatusOr<Workload> ParseWorkloadSpec(absl::string_view spec) {
  const absl::string_view text = absl::StripAsciiWhitespace(spec);
  if (text.empty()) {
    return SpecError(
        spec,
        "empty; expected NAME:key=value,... such as matmul:M=512,N=512,K=512");
  }
  const size_t colon = text.find(':');
  const absl::string_view name =
      absl::StripAsciiWhitespace(text.substr(0, colon));
  const absl::string_view rest = colon == absl::string_view::npos
                                     ? absl::string_view()
                                     : text.substr(colon + 1);
  if (name.empty()) {
    return SpecError(
        spec, "no operator name before ':'; expected NAME:key=value,...");
  }
  if (name == "custom") {
    absl::StatusOr<CustomDefinition> definition = ParseCustomSpec(rest);
    if (!definition.ok()) return definition.status();
    return MakeCustomWorkload(*std::move(definition));
  }
  std::vector<std::pair<std::string, std::string>> params;
  if (!absl::StripAsciiWhitespace(rest).empty()) {
    for (absl::string_view item : absl::StrSplit(rest, ',')) {
      item = absl::StripAsciiWhitespace(item);
      if (item.empty()) {
        return SpecError(
            spec, "empty parameter (a stray ','); expected key=value,...");
      }
      const size_t eq = item.find('=');
      if (eq == absl::string_view::npos) {
        return SpecError(spec, absl::StrCat("\"", EscapedPrefix(item),
                                            "\" is not key=value"));
      }
      const absl::string_view key =
          absl::StripAsciiWhitespace(item.substr(0, eq));
      if (key.empty()) {
        return SpecError(spec, absl::StrCat("\"", EscapedPrefix(item),
                                            "\" has no parameter name"));
      }
      params.emplace_back(
          std::string(key),
          std::string(absl::StripAsciiWhitespace(item.substr(eq + 1))));
    }
  }
  return MakeWorkload(name, params);
}

}  // namespace lathe
