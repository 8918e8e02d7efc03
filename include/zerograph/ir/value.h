#ifndef ZEROGRAPH_IR_VALUE_H_
#define ZEROGRAPH_IR_VALUE_H_

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/ir/graph_key.h"
#include "zerograph/ir/tensor_type.h"

namespace onnx {
class ValueInfoProto;
}  // namespace onnx

namespace zerograph {

class Graph;
class Node;
class Tensor;

// One use of a value: `node` reads it as input number `input_index`.
struct Use {
  Node* node;
  int input_index;
  friend bool operator==(const Use&, const Use&) = default;
};

// An SSA value: defined once (by a node, as a graph input, or as an initializer) and read by any
// number of nodes. Values are owned by their Graph and edited only through it.
class Value {
 public:
  Value(GraphKey, std::pmr::memory_resource* memory) : users_(memory) {}
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  // Dense id, stable for the value's life; indexes side tables (`Graph::value_id_bound()`).
  int64_t id() const { return id_; }
  std::string_view name() const { return name_; }

  // The node that defines this value, or null for graph inputs and initializers.
  Node* producer() const { return producer_; }
  // Which output of `producer()` this is.
  int producer_output_index() const { return producer_output_index_; }
  std::span<const Use> users() const { return users_; }

  bool is_graph_input() const { return is_graph_input_; }
  bool is_graph_output() const { return graph_output_count_ > 0; }
  // The initializer's data, or null when this is not an initializer.
  Tensor* initializer() const { return initializer_; }
  // True for values whose data exists before the graph runs: initializers and graph inputs.
  bool is_source() const { return producer_ == nullptr; }

  // The static type recorded for this value (value_info, graph input/output, or initializer), if
  // any.
  std::optional<TensorType> type() const;
  // type()'s element type, or kUndefined when no type is recorded; cheaper (no dims are copied).
  DataType dtype() const;
  // The names of the recorded type's symbolic dims (ONNX's dim_param, such as "batch"), one per
  // dim: "" where the dim has a value or no name. Empty when no shape is recorded.
  std::vector<std::string_view> dim_params() const;

 private:
  friend class Graph;

  template <typename>
  friend class NameIndex;

  int64_t id_ = -1;
  // The name's hash, kept by NameIndex while the value is in one.
  uint64_t name_hash_ = 0;
  std::string_view name_;
  Node* producer_ = nullptr;
  int producer_output_index_ = -1;
  // Counts the times Graph::AdoptAsOutput redefined the value; value_info entries made before the
  // last time are not written.
  uint32_t info_epoch_ = 0;
  std::pmr::vector<Use> users_;
  bool is_graph_input_ = false;
  bool erased_ = false;
  int graph_output_count_ = 0;
  Tensor* initializer_ = nullptr;
  // Type and shape as ONNX records them (kept as is so that saving reproduces them); may be null.
  onnx::ValueInfoProto* info_ = nullptr;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_VALUE_H_
