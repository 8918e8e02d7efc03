#ifndef ZEROGRAPH_SRC_ONNX_WIRE_FORMAT_H_
#define ZEROGRAPH_SRC_ONNX_WIRE_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>

namespace zerograph {

// Just enough of protobuf's wire format to split a model into independent messages, for the
// parser and the writer that parse and serialize them on several threads.

// ONNX's field numbers for the fields split out of a model: the main graph, and its repeated
// fields of independent messages.
inline constexpr uint32_t kModelGraph = 7;
inline constexpr uint32_t kGraphNode = 1;
inline constexpr uint32_t kGraphInitializer = 5;
inline constexpr uint32_t kGraphInput = 11;
inline constexpr uint32_t kGraphOutput = 12;
inline constexpr uint32_t kGraphValueInfo = 13;
// NodeProto's fields the graph holds instead of the message (its inputs, outputs and name), and
// its attribute list, after which the writer puts a role set in the IR.
inline constexpr uint32_t kNodeInput = 1;
inline constexpr uint32_t kNodeOutput = 2;
inline constexpr uint32_t kNodeName = 3;
inline constexpr uint32_t kNodeAttribute = 5;
// TensorProto's raw data, which the graph makes for a fused initializer (FusedBytes).
inline constexpr uint32_t kTensorRawData = 9;

inline constexpr int kWireVarint = 0;
inline constexpr int kWireFixed64 = 1;
inline constexpr int kWireLengthDelimited = 2;
inline constexpr int kWireFixed32 = 5;
inline constexpr uint64_t kMaxFieldNumber = (uint64_t{1} << 29) - 1;

// One field as it lies in the wire format: [begin, end) is the whole field, tag included;
// [payload, end) is what a length-delimited field holds.
struct WireField {
  uint32_t number = 0;
  int wire_type = 0;
  const uint8_t* begin = nullptr;
  const uint8_t* payload = nullptr;
  const uint8_t* end = nullptr;
};

// Reads a message's top-level fields in order, without parsing what they hold.
class WireScanner {
 public:
  WireScanner(const uint8_t* begin, const uint8_t* end) : at_(begin), end_(end) {}

  bool done() const { return at_ == end_; }

  // The next field, or nullopt when the bytes are not one the scan can skip (malformed, or a
  // group, which ONNX never uses).
  std::optional<WireField> Next() {
    WireField field;
    field.begin = at_;
    const std::optional<uint64_t> tag = ReadVarint();
    if (!tag.has_value() || (*tag >> 3) == 0 || (*tag >> 3) > kMaxFieldNumber) return std::nullopt;
    field.number = static_cast<uint32_t>(*tag >> 3);
    field.wire_type = static_cast<int>(*tag & 7);
    bool ok = false;
    switch (field.wire_type) {
      case kWireVarint:
        ok = ReadVarint().has_value();
        break;
      case kWireFixed64:
        ok = Skip(8);
        break;
      case kWireFixed32:
        ok = Skip(4);
        break;
      case kWireLengthDelimited: {
        const std::optional<uint64_t> length = ReadVarint();
        field.payload = at_;
        ok = length.has_value() && Skip(*length);
        break;
      }
      default:
        break;
    }
    if (!ok) return std::nullopt;
    field.end = at_;
    return field;
  }

 private:
  std::optional<uint64_t> ReadVarint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && at_ < end_; shift += 7) {
      const uint8_t byte = *at_++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }

  bool Skip(uint64_t count) {
    if (count > static_cast<uint64_t>(end_ - at_)) return false;
    at_ += count;
    return true;
  }

  const uint8_t* at_;
  const uint8_t* end_;
};

// Appends `value` as a varint.
inline void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// The tag of length-delimited field `number`.
inline uint64_t LengthDelimitedTag(uint32_t number) {
  return (uint64_t{number} << 3) | kWireLengthDelimited;
}

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_ONNX_WIRE_FORMAT_H_
