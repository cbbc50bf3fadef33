#include "cli/model_args.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/frontend/onnx/onnx_importer.h"

namespace lathe::cli {
namespace {

constexpr int64_t kMaxShapeDim = int64_t{1} << 31;

absl::Status BadShape(const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "--shape \"", text, "\": ", why, " (the form is NAME=1,3,224,224)"));
}

}  // namespace

void ModelArgs::AddTo(CLI::App* command) {
  command->add_option("model", path, "the model (an ONNX file)")->required();
  AddShapeOption(command);
}

void ModelArgs::AddShapeOption(CLI::App* command) {
  command->add_option("--shape", shapes,
                      "NAME=D0,D1,...: the shape of an input whose "
                      "dimensions the model leaves symbolic (repeatable)");
}

absl::StatusOr<std::map<std::string, std::vector<int64_t>>>
ModelArgs::InputShapes() const {
  std::map<std::string, std::vector<int64_t>> result;
  for (const std::string& text : shapes) {
    size_t equals = text.rfind('=');
    if (equals == std::string::npos) return BadShape(text, "no '='");
    std::string name(absl::StripAsciiWhitespace(text.substr(0, equals)));
    if (name.empty()) return BadShape(text, "no input name");
    std::vector<int64_t> dims;
    std::string dims_text = text.substr(equals + 1);
    if (!absl::StripAsciiWhitespace(dims_text).empty()) {
      for (absl::string_view part : absl::StrSplit(dims_text, ',')) {
        int64_t dim = 0;
        if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &dim) ||
            dim < 1 || dim >= kMaxShapeDim) {
          return BadShape(text, absl::StrCat("dimension \"", part,
                                             "\" is not a whole number in "
                                             "[1, ",
                                             kMaxShapeDim, ")"));
        }
        dims.push_back(dim);
      }
    }
    if (!result.emplace(name, std::move(dims)).second) {
      return BadShape(text, absl::StrCat("input \"", name, "\" given twice"));
    }
  }
  return result;
}

absl::StatusOr<graph::Graph> ModelArgs::Import() const {
  absl::StatusOr<std::map<std::string, std::vector<int64_t>>> input_shapes =
      InputShapes();
  if (!input_shapes.ok()) return input_shapes.status();
  lathe::OnnxImportOptions options;
  options.input_shapes = *std::move(input_shapes);
  return lathe::ImportOnnxModel(path, options);
}

}  // namespace lathe::cli
