#ifndef ZEROGRAPH_TESTS_ORT_IMPORT_CHECKPOINT_BUILDER_H_
#define ZEROGRAPH_TESTS_ORT_IMPORT_CHECKPOINT_BUILDER_H_

// Writes ONNX Runtime checkpoints with the generated flatbuffers builders, for tests that need
// one the reference artifacts lack (optimizer states, bad tensors).

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "ort_checkpoint_generated.h"

namespace zerograph::testing {

inline std::vector<uint8_t> FloatBytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A float tensor; its raw bytes may be given instead (a size that does not match the shape).
struct TestTensor {
  TestTensor(std::string tensor_name, std::vector<int64_t> tensor_dims, std::vector<float> values)
      : name(std::move(tensor_name)), dims(std::move(tensor_dims)), raw(FloatBytes(values)) {}
  static TestTensor WithBytes(std::string name, std::vector<int64_t> dims,
                              std::vector<uint8_t> bytes) {
    TestTensor tensor(std::move(name), std::move(dims), {});
    tensor.raw = std::move(bytes);
    return tensor;
  }

  std::string name;
  std::vector<int64_t> dims;
  std::vector<uint8_t> raw;
};

struct TestOptimizerGroup {
  int64_t step = 0;
  float learning_rate = 1e-3f;
  // Per parameter, its states ("momentum0", ...).
  std::map<std::string, std::vector<TestTensor>> states;
};

struct TestCheckpoint {
  std::vector<TestTensor> trainable;
  std::vector<TestTensor> frozen;
  std::optional<TestOptimizerGroup> group;
  bool nominal = false;
};

inline std::string CheckpointBytes(const TestCheckpoint& checkpoint) {
  namespace fbs = ort::fbs;
  flatbuffers::FlatBufferBuilder b;
  auto tensors = [&](const std::vector<TestTensor>& list) {
    std::vector<flatbuffers::Offset<fbs::Tensor>> out;
    for (const TestTensor& t : list) {
      out.push_back(fbs::CreateTensorDirect(b, t.name.c_str(), nullptr, &t.dims,
                                            fbs::TensorDataType::FLOAT, &t.raw));
    }
    return out;
  };
  const auto trainable = tensors(checkpoint.trainable);
  const auto frozen = tensors(checkpoint.frozen);
  const auto module = fbs::CreateModuleStateDirect(b, &trainable, &frozen, checkpoint.nominal);
  std::vector<flatbuffers::Offset<fbs::OptimizerGroup>> groups;
  if (checkpoint.group) {
    std::vector<flatbuffers::Offset<fbs::ParameterOptimizerState>> states;
    for (const auto& [param, momentums] : checkpoint.group->states) {
      const auto written = tensors(momentums);
      states.push_back(fbs::CreateParameterOptimizerStateDirect(b, param.c_str(), &written));
    }
    groups.push_back(fbs::CreateOptimizerGroupDirect(b, "group0", checkpoint.group->step,
                                                     checkpoint.group->learning_rate, &states));
  }
  fbs::FinishCheckpointBuffer(b, fbs::CreateCheckpointDirect(b, 2, module, &groups));
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

inline void WriteCheckpoint(const std::string& path, const TestCheckpoint& checkpoint) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << CheckpointBytes(checkpoint);
}

}  // namespace zerograph::testing

#endif  // ZEROGRAPH_TESTS_ORT_IMPORT_CHECKPOINT_BUILDER_H_
