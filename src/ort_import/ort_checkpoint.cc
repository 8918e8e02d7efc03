#include "ort_import/ort_checkpoint.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include <flatbuffers/flatbuffers.h>

#include "ort_checkpoint_generated.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fbs = ort::fbs;

// A tensor with its bytes checked against its type and shape.
StatusOr<OrtTensor> ReadTensor(const fbs::Tensor* tensor) {
  ZG_RETURN_IF_NOT(tensor != nullptr && tensor->name() != nullptr, "a tensor has no name");
  OrtTensor out;
  out.name = tensor->name()->str();
  const std::optional<DataType> dtype = DataTypeFromOnnx(static_cast<int32_t>(tensor->data_type()));
  ZG_RETURN_IF_NOT(dtype.has_value() && ElementSize(*dtype) > 0, "tensor '", out.name,
                   "' has element type ", static_cast<int32_t>(tensor->data_type()),
                   ", which zerograph cannot hold");
  out.dtype = *dtype;
  uint64_t expected = ElementSize(out.dtype);
  if (const auto* dims = tensor->dims(); dims != nullptr) {
    // Copied out byte by byte: the verifier does not check that the vector is 8-byte aligned,
    // and a crafted file puts it 4 bytes off (reading it as int64 would be undefined).
    for (uint32_t i = 0; i < dims->size(); ++i) {
      int64_t dim;
      std::memcpy(&dim, dims->Data() + i * sizeof(int64_t), sizeof(dim));
      ZG_RETURN_IF_NOT(dim >= 0 && (dim == 0 || expected <= UINT64_MAX / dim), "tensor '", out.name,
                       "' has a bad shape");
      out.dims.push_back(dim);
      expected *= static_cast<uint64_t>(dim);
    }
  }
  const auto* raw = tensor->raw_data();
  const uint64_t size = raw != nullptr ? raw->size() : 0;
  if (size != expected) {
    return DataLossError(StrCat("tensor '", out.name, "' holds ", size,
                                " bytes, its type and shape need ", expected));
  }
  if (raw != nullptr) out.bytes = std::as_bytes(std::span(raw->data(), raw->size()));
  return out;
}

StatusOr<std::vector<OrtTensor>> ReadTensors(
    const flatbuffers::Vector<flatbuffers::Offset<fbs::Tensor>>* tensors) {
  std::vector<OrtTensor> out;
  if (tensors == nullptr) return out;
  for (const fbs::Tensor* tensor : *tensors) {
    ZG_ASSIGN_OR_RETURN(OrtTensor read, ReadTensor(tensor));
    out.push_back(std::move(read));
  }
  return out;
}

StatusOr<OrtOptimizerGroup> ReadGroup(const fbs::OptimizerGroup* group) {
  ZG_RETURN_IF_NOT(group != nullptr, "an optimizer group is empty");
  OrtOptimizerGroup out;
  if (group->group_name() != nullptr) out.name = group->group_name()->str();
  out.step = group->step();
  out.initial_learning_rate = group->initial_learning_rate();
  if (group->optimizer_states() == nullptr) return out;
  for (const fbs::ParameterOptimizerState* state : *group->optimizer_states()) {
    ZG_RETURN_IF_NOT(state != nullptr && state->param_name() != nullptr, "optimizer group '",
                     out.name, "' has a state without a parameter name");
    ZG_ASSIGN_OR_RETURN(std::vector<OrtTensor> momentums, ReadTensors(state->momentums()));
    std::map<std::string, OrtTensor>& by_name = out.states[state->param_name()->str()];
    for (OrtTensor& momentum : momentums) by_name.emplace(momentum.name, std::move(momentum));
  }
  return out;
}

StatusOr<OrtCheckpoint> Parse(std::shared_ptr<const MappedFile> file) {
  OrtCheckpoint checkpoint;
  checkpoint.file = std::move(file);
  const std::span<const std::byte> bytes = checkpoint.file->bytes();
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 8 || !fbs::CheckpointBufferHasIdentifier(data)) {
    return InvalidArgumentError(
        "not an ONNX Runtime training checkpoint (no \"ODTC\" flatbuffers identifier)");
  }
  // Every offset and length is checked here, so the reads below stay inside the file.
  flatbuffers::Verifier verifier(data, bytes.size());
  if (!fbs::VerifyCheckpointBuffer(verifier)) {
    return DataLossError(
        "the checkpoint is truncated or corrupt (flatbuffers verification failed)");
  }
  const fbs::Checkpoint* root = fbs::GetCheckpoint(data);
  const fbs::ModuleState* module = root->module_state();
  ZG_RETURN_IF_NOT(module != nullptr, "the checkpoint has no module state");
  ZG_RETURN_IF_NOT(!module->is_nominal_state(),
                   "the checkpoint is nominal: it names the parameters but holds no values");
  ZG_RETURN_IF_NOT(!module->has_external_data(),
                   "the checkpoint keeps its tensors in an external data file, which zerograph "
                   "does not read");
  ZG_ASSIGN_OR_RETURN(checkpoint.trainable, ReadTensors(module->requires_grad_params()));
  ZG_ASSIGN_OR_RETURN(checkpoint.frozen, ReadTensors(module->frozen_params()));
  if (root->optimizer_groups() != nullptr) {
    for (const fbs::OptimizerGroup* group : *root->optimizer_groups()) {
      ZG_ASSIGN_OR_RETURN(OrtOptimizerGroup read, ReadGroup(group));
      checkpoint.optimizer_groups.push_back(std::move(read));
    }
  }
  return checkpoint;
}

}  // namespace

StatusOr<OrtCheckpoint> ReadOrtCheckpoint(const std::string& path) {
  // The file's own errors name it.
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                      MappedFile::Open(path, MappedFile::Pages::kUpFront));
  StatusOr<OrtCheckpoint> checkpoint = Parse(std::move(file));
  if (!checkpoint.ok()) return std::move(checkpoint).status().WithContext(StrCat("'", path, "'"));
  return checkpoint;
}

}  // namespace zerograph
