#include "compiler/schedule/trace.h"

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/bounded_read.h"
#include "base/untrusted_text.h"
#include "google/protobuf/util/json_util.h"
#include "proto/trace.pb.h"
#include "proto/trace_limits.h"

namespace lathe {

namespace {

// A double in the shortest form that reads back as the same double, with a
// point when it would otherwise read as an integer ("1.0", not "1"), so that
// the text form reads back (trace_text.h).
std::string DoubleText(double v) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string AttrText(const AttrValue& value) {
  struct {
    std::string operator()(int64_t v) const { return absl::StrCat(v); }
    std::string operator()(double v) const { return DoubleText(v); }
    std::string operator()(const std::string& v) const {
      return absl::StrCat("\"", absl::CEscape(v), "\"");
    }
    std::string operator()(const std::vector<int64_t>& v) const {
      return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
    }
    std::string operator()(const std::vector<double>& v) const {
      std::vector<std::string> texts;
      for (double d : v) texts.push_back(DoubleText(d));
      return absl::StrCat("[", absl::StrJoin(texts, ", "), "]");
    }
  } visitor;
  return std::visit(visitor, value);
}

template <typename T>
absl::StatusOr<T> TypedAttr(const Instruction& inst, const std::string& name,
                            const char* type_name) {
  absl::StatusOr<AttrValue> value = inst.Attr(name);
  if (!value.ok()) return value.status();
  if (const T* typed = std::get_if<T>(&*value)) return *typed;
  return absl::InvalidArgumentError(
      absl::StrCat(inst.kind, ": attribute ", name, " is not ", type_name));
}

}  // namespace

absl::StatusOr<AttrValue> Instruction::Attr(const std::string& name) const {
  for (const auto& [key, value] : attrs) {
    if (key == name) return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(kind, ": missing attribute ", name));
}

absl::StatusOr<int64_t> Instruction::IntAttr(const std::string& name) const {
  return TypedAttr<int64_t>(*this, name, "an integer");
}
absl::StatusOr<std::string> Instruction::StringAttr(
    const std::string& name) const {
  return TypedAttr<std::string>(*this, name, "a string");
}
absl::StatusOr<std::vector<int64_t>> Instruction::IntsAttr(
    const std::string& name) const {
  return TypedAttr<std::vector<int64_t>>(*this, name, "a list of integers");
}
absl::StatusOr<std::vector<double>> Instruction::FloatsAttr(
    const std::string& name) const {
  return TypedAttr<std::vector<double>>(*this, name, "a list of numbers");
}

std::string Trace::ToText() const {
  std::string out;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& inst = instructions[i];
    std::vector<std::string> outs, args;
    for (int64_t o : inst.outputs) outs.push_back(absl::StrCat("r", o));
    for (const TraceInput& in : inst.inputs) {
      switch (in.kind) {
        case TraceInput::Kind::kRV:
          args.push_back(absl::StrCat("r", in.value));
          break;
        case TraceInput::Kind::kInt:
          args.push_back(absl::StrCat(in.value));
          break;
        case TraceInput::Kind::kNone:
          args.push_back("None");
          break;
      }
    }
    for (const auto& [key, value] : inst.attrs) {
      args.push_back(absl::StrCat(key, "=", AttrText(value)));
    }
    if (!outs.empty()) absl::StrAppend(&out, absl::StrJoin(outs, ", "), " = ");
    absl::StrAppend(&out, inst.kind, "(", absl::StrJoin(args, ", "), ")");
    auto it = decisions.find(static_cast<int64_t>(i));
    if (it != decisions.end()) {
      absl::StrAppend(&out, "  # decision: [", absl::StrJoin(it->second, ", "),
                      "]");
    }
    out.push_back('\n');
  }
  return out;
}

void Trace::ToProto(proto::Trace* out) const {
  out->Clear();
  out->set_format_version(kTraceFormatVersion);
  out->set_workload(workload);
  for (const Instruction& inst : instructions) {
    proto::TraceInstruction* p = out->add_instructions();
    p->set_kind(inst.kind);
    for (const TraceInput& in : inst.inputs) {
      proto::TraceInput* pi = p->add_inputs();
      switch (in.kind) {
        case TraceInput::Kind::kRV:
          pi->set_rv(static_cast<int32_t>(in.value));
          break;
        case TraceInput::Kind::kInt:
          pi->set_int_value(in.value);
          break;
        case TraceInput::Kind::kNone:
          pi->set_none(true);
          break;
      }
    }
    for (const auto& [key, value] : inst.attrs) {
      proto::TraceAttr* pa = p->add_attrs();
      pa->set_name(key);
      if (const auto* i = std::get_if<int64_t>(&value)) {
        pa->set_int_value(*i);
      } else if (const auto* d = std::get_if<double>(&value)) {
        pa->set_float_value(*d);
      } else if (const auto* s = std::get_if<std::string>(&value)) {
        pa->set_string_value(*s);
      } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
        for (int64_t v : *is) pa->mutable_ints()->add_values(v);
      } else if (const auto* fs = std::get_if<std::vector<double>>(&value)) {
        for (double v : *fs) pa->mutable_floats()->add_values(v);
      }
    }
    for (int64_t o : inst.outputs) p->add_outputs(static_cast<int32_t>(o));
  }
  for (const auto& [index, values] : decisions) {
    proto::TraceDecision* d = out->add_decisions();
    d->set_instruction(static_cast<int32_t>(index));
    for (int64_t v : values) d->add_values(v);
  }
}

absl::StatusOr<Trace> Trace::FromProto(const proto::Trace& message) {
  if (message.format_version() != kTraceFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace: format version ", message.format_version(),
                     " is not supported (this build reads version ",
                     kTraceFormatVersion, ")"));
  }
  if (absl::Status st = CheckTraceLimits(message); !st.ok()) return st;
  Trace trace;
  trace.workload = message.workload();
  std::set<int64_t> defined;
  for (int i = 0; i < message.instructions_size(); ++i) {
    const proto::TraceInstruction& p = message.instructions(i);
    Instruction inst;
    inst.kind = p.kind();
    if (inst.kind.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace: instruction ", i, " has no kind"));
    }
    for (const proto::TraceInput& pi : p.inputs()) {
      switch (pi.value_case()) {
        case proto::TraceInput::kRv:
          if (!defined.count(pi.rv())) {
            return absl::InvalidArgumentError(
                absl::StrCat("trace: instruction ", i, " (", inst.kind,
                             ") uses r", pi.rv(), " before it is defined"));
          }
          inst.inputs.push_back(TraceInput::RV(pi.rv()));
          break;
        case proto::TraceInput::kIntValue:
          inst.inputs.push_back(TraceInput::Int(pi.int_value()));
          break;
        default:
          inst.inputs.push_back(TraceInput::None());
          break;
      }
    }
    for (const proto::TraceAttr& pa : p.attrs()) {
      AttrValue value;
      switch (pa.value_case()) {
        case proto::TraceAttr::kIntValue:
          value = pa.int_value();
          break;
        case proto::TraceAttr::kFloatValue:
          value = pa.float_value();
          break;
        case proto::TraceAttr::kStringValue:
          value = pa.string_value();
          break;
        case proto::TraceAttr::kInts:
          value = std::vector<int64_t>(pa.ints().values().begin(),
                                       pa.ints().values().end());
          break;
        case proto::TraceAttr::kFloats:
          value = std::vector<double>(pa.floats().values().begin(),
                                      pa.floats().values().end());
          break;
        default:
          // An empty list serializes as an unset oneof in JSON.
          value = std::vector<int64_t>{};
          break;
      }
      inst.attrs.emplace_back(pa.name(), std::move(value));
    }
    for (int32_t o : p.outputs()) {
      if (!defined.insert(o).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "trace: instruction ", i, " (", inst.kind, ") redefines r", o));
      }
      inst.outputs.push_back(o);
    }
    trace.instructions.push_back(std::move(inst));
  }
  for (const proto::TraceDecision& d : message.decisions()) {
    if (d.instruction() < 0 || d.instruction() >= message.instructions_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace: decision for instruction ", d.instruction(),
                       ", but the trace has ", message.instructions_size(),
                       " instructions"));
    }
    // A decision belongs to a sampling instruction, one per instruction: a
    // second one (which replay would have taken over the first) or one on
    // another kind of instruction is a damaged trace.
    const std::string& kind = trace.instructions[d.instruction()].kind;
    if (!absl::StartsWith(kind, "sample_")) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace: decision for instruction ", d.instruction(),
                       " (", kind, "), which samples nothing"));
    }
    if (!trace.decisions
             .emplace(d.instruction(), std::vector<int64_t>(d.values().begin(),
                                                            d.values().end()))
             .second) {
      return absl::InvalidArgumentError(
          absl::StrCat("trace: two decisions for instruction ", d.instruction(),
                       " (", kind, ")"));
    }
  }
  return trace;
}

std::string Trace::ToJson() const {
  proto::Trace message;
  ToProto(&message);
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  auto status =
      google::protobuf::util::MessageToJsonString(message, &json, options);
  (void)status;  // serializing a well-formed message cannot fail
  return json;
}

absl::StatusOr<Trace> Trace::FromJson(const std::string& json) {
  if (json.size() > kMaxTraceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace: ", json.size(), " bytes of JSON, more than ",
                     "kMaxTraceBytes (", kMaxTraceBytes, ")"));
  }
  proto::Trace message;
  google::protobuf::util::JsonParseOptions options;
  auto status =
      google::protobuf::util::JsonStringToMessage(json, &message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace: not a valid trace JSON: ",
                     EscapedPrefix(status.message().as_string())));
  }
  return FromProto(message);
}

absl::StatusOr<Trace> Trace::Load(const std::string& path) {
  absl::StatusOr<std::string> json =
      ReadBoundedFile(path, "trace file", kMaxTraceBytes, "kMaxTraceBytes");
  if (!json.ok()) return json.status();
  absl::StatusOr<Trace> trace = FromJson(*json);
  if (!trace.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace file ", EscapedPrefix(path), ": ", trace.status().message()));
  }
  return trace;
}

absl::Status Trace::Save(const std::string& path) const {
  std::ofstream out(path);
  out << ToJson();
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("trace file ", path, ": cannot be written"));
  }
  return absl::OkStatus();
}

absl::Status CheckTraceLimits(const Trace& trace) {
  // Outside the limits, converting first would copy an unbounded trace.
  if (trace.instructions.size() > kMaxTraceInstructions) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace: the number of instructions is ", trace.instructions.size(),
        ", more than kMaxTraceInstructions (", kMaxTraceInstructions, ")"));
  }
  proto::Trace message;
  trace.ToProto(&message);
  return CheckTraceLimits(message);
}

bool operator==(const Trace& a, const Trace& b) {
  proto::Trace pa, pb;
  a.ToProto(&pa);
  b.ToProto(&pb);
  return pa.SerializeAsString() == pb.SerializeAsString();
}

}  // namespace lathe
