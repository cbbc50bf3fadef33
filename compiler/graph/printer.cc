#include "compiler/graph/printer.h"

#include <cstdio>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::graph {
namespace {

std::string Number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}

std::string AttrText(const Attr& attr) {
  if (const auto* i = std::get_if<int64_t>(&attr)) return absl::StrCat(*i);
  if (const auto* f = std::get_if<double>(&attr)) return Number(*f);
  if (const auto* s = std::get_if<std::string>(&attr)) {
    return absl::StrCat("\"", *s, "\"");
  }
  if (const auto* is = std::get_if<std::vector<int64_t>>(&attr)) {
    return absl::StrCat("[", absl::StrJoin(*is, ","), "]");
  }
  const auto& fs = std::get<std::vector<double>>(attr);
  std::vector<std::string> parts;
  for (double f : fs) parts.push_back(Number(f));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::string TypeText(const Value& value) {
  return value.typed ? TensorTypeText(value.type) : "?";
}

std::string Ref(const Graph& graph, int id) {
  return id == kNoValue ? "_" : absl::StrCat("%", graph.value(id).name);
}

}  // namespace

std::string PrintGraph(const Graph& graph) {
  std::string text = "graph {\n";
  for (int in : graph.inputs()) {
    absl::StrAppend(&text, "  input ", Ref(graph, in), ": ",
                    TypeText(graph.value(in)), "\n");
  }
  // Constants that a live node or an output reads.
  std::set<int> read;
  for (const Node& node : graph.nodes()) {
    if (node.dead) continue;
    for (int in : node.inputs) {
      if (in != kNoValue) read.insert(in);
    }
  }
  for (int out : graph.outputs()) read.insert(out);
  for (size_t v = 0; v < graph.values().size(); ++v) {
    const Value& value = graph.values()[v];
    if (!value.constant || value.dead || !read.count(static_cast<int>(v))) {
      continue;
    }
    absl::StrAppend(&text, "  const ", Ref(graph, static_cast<int>(v)), ": ",
                    TensorTypeText(value.type));
    const TensorData& data = *value.constant;
    if (data.size() <= 8) {
      std::vector<std::string> parts;
      for (double d : data.values) parts.push_back(Number(d));
      absl::StrAppend(&text, " = [", absl::StrJoin(parts, ", "), "]\n");
    } else {
      absl::StrAppend(&text, " (", data.size(), " values)\n");
    }
  }
  for (const Node& node : graph.nodes()) {
    if (node.dead) continue;
    std::vector<std::string> outs, ins, attrs;
    for (int out : node.outputs) {
      outs.push_back(
          absl::StrCat(Ref(graph, out), ": ", TypeText(graph.value(out))));
    }
    for (int in : node.inputs) ins.push_back(Ref(graph, in));
    for (const auto& [key, attr] : node.attrs) {
      attrs.push_back(absl::StrCat(key, "=", AttrText(attr)));
    }
    absl::StrAppend(&text, "  ", absl::StrJoin(outs, ", "), " = ", node.op, "(",
                    absl::StrJoin(ins, ", "), ")");
    if (!attrs.empty()) {
      absl::StrAppend(&text, " {", absl::StrJoin(attrs, ", "), "}");
    }
    absl::StrAppend(&text, "  # ", node.name, "\n");
  }
  for (int out : graph.outputs()) {
    absl::StrAppend(&text, "  output ", Ref(graph, out), "\n");
  }
  text += "}\n";
  return text;
}

}  // namespace lathe::graph
