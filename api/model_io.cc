#include "api/model_io.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::api {

absl::Status CheckModelInputs(const std::vector<ModelTensor>& expected,
                              const std::vector<TensorData>& given) {
  if (given.size() != expected.size()) {
    std::string message = absl::StrCat("the model takes ", expected.size(),
                                       " input(s), got ", given.size());
    if (given.size() < expected.size()) {
      absl::StrAppend(&message, ": missing \"", expected[given.size()].name,
                      "\" (", TensorTypeText(expected[given.size()].type), ")");
    }
    return absl::InvalidArgumentError(message);
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const std::string shape =
        absl::StrCat("[", absl::StrJoin(given[i].shape, ","), "]");
    if (given[i].dtype != expected[i].type.dtype ||
        given[i].shape != expected[i].type.shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " \"", expected[i].name, "\": expected ",
                       TensorTypeText(expected[i].type), ", got ",
                       given[i].dtype.ToString(), shape));
    }
    if (given[i].size() != expected[i].type.NumElements()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " \"", expected[i].name, "\": has ",
                       given[i].size(), " values for shape ", shape));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::api
