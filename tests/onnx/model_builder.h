// Builds small ONNX models in memory for the importer tests (ONNX's protobuf
// classes; nothing binary is committed): inputs, outputs, initializers,
// nodes with attributes of every kind, and subgraphs.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

namespace graphvet::onnximport::test {

using Dim = std::variant<int64_t, std::string>;

inline void setType(onnx::ValueInfoProto *vi, int32_t elem, const std::vector<Dim> &dims) {
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto *shape = tt->mutable_shape();
  for (const Dim &d : dims) {
    auto *dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d))
      dim->set_dim_value(std::get<int64_t>(d));
    else
      dim->set_dim_param(std::get<std::string>(d));
  }
}

inline onnx::TensorProto floatTensor(const std::string &name, const std::vector<int64_t> &dims,
                                     const std::vector<float> &values, bool raw = true) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t.add_dims(d);
  if (raw) {
    std::string bytes(values.size() * 4, '\0');
    if (!values.empty())
      std::memcpy(bytes.data(), values.data(), bytes.size());
    t.set_raw_data(bytes);
  } else {
    for (float v : values)
      t.add_float_data(v);
  }
  return t;
}

inline onnx::TensorProto int64Tensor(const std::string &name, const std::vector<int64_t> &dims,
                                     const std::vector<int64_t> &values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims)
    t.add_dims(d);
  for (int64_t v : values)
    t.add_int64_data(v);
  return t;
}

/// A graph (the model's, or a subgraph) under construction.
class GraphBuilder {
public:
  explicit GraphBuilder(onnx::GraphProto *g) : g_(g) {}

  GraphBuilder &input(const std::string &name, int32_t elem, const std::vector<Dim> &dims) {
    setType(g_->add_input(), elem, dims);
    g_->mutable_input(g_->input_size() - 1)->set_name(name);
    return *this;
  }
  /// An input without a type (loop-carried values may leave it to inference).
  GraphBuilder &untypedInput(const std::string &name) {
    g_->add_input()->set_name(name);
    return *this;
  }
  /// An output without a type (graphvet's inference types it).
  GraphBuilder &untypedOutput(const std::string &name) {
    g_->add_output()->set_name(name);
    return *this;
  }
  GraphBuilder &output(const std::string &name, int32_t elem, const std::vector<Dim> &dims) {
    setType(g_->add_output(), elem, dims);
    g_->mutable_output(g_->output_size() - 1)->set_name(name);
    return *this;
  }
  GraphBuilder &initializer(const onnx::TensorProto &t) {
    *g_->add_initializer() = t;
    return *this;
  }
  onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs,
                        const std::vector<std::string> &outputs, const std::string &name = "") {
    onnx::NodeProto *n = g_->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto &i : inputs)
      n->add_input(i);
    for (const auto &o : outputs)
      n->add_output(o);
    return *n;
  }
  onnx::GraphProto *proto() { return g_; }

private:
  onnx::GraphProto *g_;
};

inline onnx::AttributeProto *attr(onnx::NodeProto &n, const std::string &name,
                                  onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void attrInt(onnx::NodeProto &n, const std::string &name, int64_t v) {
  attr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void attrFloat(onnx::NodeProto &n, const std::string &name, float v) {
  attr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void attrString(onnx::NodeProto &n, const std::string &name, const std::string &v) {
  attr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void attrInts(onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v) {
  auto *a = attr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}
inline void attrFloats(onnx::NodeProto &n, const std::string &name, const std::vector<float> &v) {
  auto *a = attr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v)
    a->add_floats(x);
}
inline void attrStrings(onnx::NodeProto &n, const std::string &name,
                        const std::vector<std::string> &v) {
  auto *a = attr(n, name, onnx::AttributeProto::STRINGS);
  for (const auto &x : v)
    a->add_strings(x);
}
inline void attrTensor(onnx::NodeProto &n, const std::string &name, const onnx::TensorProto &t) {
  *attr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() = t;
}
/// Adds a graph attribute and returns a builder for it.
inline GraphBuilder attrGraph(onnx::NodeProto &n, const std::string &name,
                              const std::string &graphName) {
  auto *g = attr(n, name, onnx::AttributeProto::GRAPH)->mutable_g();
  g->set_name(graphName);
  return GraphBuilder(g);
}

/// A model with the default-domain opset `opset`.
class ModelBuilder : public GraphBuilder {
public:
  explicit ModelBuilder(int64_t opset = 13) : GraphBuilder(nullptr) {
    model_.set_ir_version(8);
    model_.set_producer_name("graphvet-tests");
    auto *o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("main");
    static_cast<GraphBuilder &>(*this) = GraphBuilder(model_.mutable_graph());
  }
  ModelBuilder(const ModelBuilder &) = delete;
  ModelBuilder &operator=(const ModelBuilder &) = delete;

  void addOpset(const std::string &domain, int64_t version) {
    auto *o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  std::string bytes() const { return model_.SerializeAsString(); }
  onnx::ModelProto &model() { return model_; }

private:
  onnx::ModelProto model_;
};

} // namespace graphvet::onnximport::test
