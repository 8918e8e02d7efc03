// libFuzzer's entry point for one target (fuzz_target.h): every input is a file a user might
// pass; an error is the expected outcome, only a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  zerograph::Status status = zerograph::fuzz::RunOne(std::span<const uint8_t>(data, size));
  (void)status;
  return 0;
}
