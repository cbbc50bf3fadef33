// Small ONNX models built in tests with the protobuf API (no binaries in the
// repository), written to the test's temporary folder for ImportOnnxModel.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace lathe::onnx_test {

// A dimension below zero is symbolic, named "N<index>" unless given.
inline void SetShape(onnx::TypeProto* type, int32_t elem_type,
                     const std::vector<int64_t>& dims,
                     const std::vector<std::string>& symbols = {}) {
  auto* tensor = type->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* dim = shape->add_dim();
    if (dims[i] >= 0) {
      dim->set_dim_value(dims[i]);
    } else {
      dim->set_dim_param(i < symbols.size() ? symbols[i]
                                            : "N" + std::to_string(i));
    }
  }
}

class TestModel {
 public:
  explicit TestModel(int64_t opset) {
    model_.set_ir_version(8);
    model_.set_producer_name("lathe-test");
    auto* import = model_.add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  void Input(const std::string& name, const std::vector<int64_t>& dims,
             int32_t elem_type = onnx::TensorProto::FLOAT,
             const std::vector<std::string>& symbols = {}) {
    auto* input = graph().add_input();
    input->set_name(name);
    SetShape(input->mutable_type(), elem_type, dims, symbols);
  }
  // The checker wants every graph output to declare a shape (dims below
  // zero are symbolic).
  void Output(const std::string& name, const std::vector<int64_t>& dims,
              int32_t elem_type = onnx::TensorProto::FLOAT) {
    auto* output = graph().add_output();
    output->set_name(name);
    SetShape(output->mutable_type(), elem_type, dims);
  }
  // A float32 initializer in raw_data.
  onnx::TensorProto& Weight(const std::string& name,
                            const std::vector<int64_t>& dims,
                            const std::vector<float>& values) {
    auto* tensor = graph().add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tensor->add_dims(d);
    tensor->set_raw_data(std::string(
        reinterpret_cast<const char*>(values.data()), values.size() * 4));
    return *tensor;
  }
  // An int64 initializer in int64_data.
  onnx::TensorProto& Int64s(const std::string& name,
                            const std::vector<int64_t>& values) {
    auto* tensor = graph().add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::INT64);
    tensor->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) tensor->add_int64_data(v);
    return *tensor;
  }
  onnx::NodeProto& Node(const std::string& op,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs,
                        const std::string& name = "") {
    auto* node = graph().add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (const auto& in : inputs) node->add_input(in);
    for (const auto& out : outputs) node->add_output(out);
    return *node;
  }

  // Writes the model to the test's temporary folder; returns the path.
  std::string Write(const std::string& file) const {
    std::string path = ::testing::TempDir() + file;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    model_.SerializeToOstream(&out);
    return path;
  }

 private:
  onnx::ModelProto model_;
};

inline void SetInt(onnx::NodeProto& node, const std::string& name,
                   int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}
inline void SetFloat(onnx::NodeProto& node, const std::string& name,
                     float value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}
inline void SetString(onnx::NodeProto& node, const std::string& name,
                      const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}
inline void SetInts(onnx::NodeProto& node, const std::string& name,
                    const std::vector<int64_t>& values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
inline onnx::TensorProto* SetTensor(onnx::NodeProto& node,
                                    const std::string& name) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  return a->mutable_t();
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace lathe::onnx_test
