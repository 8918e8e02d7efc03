// Fuzz target: a safetensors file, through SafetensorsFile::Open (header length, JSON header,
// dtypes, shapes and byte ranges); every tensor it accepts is read to its last byte.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "fuzz_target.h"
#include "zerograph/ckpt/safetensors.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  const std::string path = WriteScratchFile("tensors.safetensors", input);
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file, SafetensorsFile::Open(path));
  for (const SafetensorsFile::TensorInfo& tensor : file->tensors()) {
    ZG_CHECK(file->Find(tensor.name) == &tensor, "fuzz: Find does not find ", tensor.name);
    TouchBytes(tensor.bytes);
  }
  return Status();
}

}  // namespace zerograph::fuzz
