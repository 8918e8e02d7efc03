#include "fuzz_target.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace zerograph::fuzz {

std::string ScratchFolder() {
  // One folder per process: libFuzzer's -jobs/-workers run several at once.
  // In memory where there is /dev/shm: on a disk the write and the mapping cost 10x the parse.
  static const std::filesystem::path folder = [] {
    std::error_code error;
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", error)
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    std::filesystem::path path = base / ("zg-fuzz-" + std::to_string(static_cast<long>(getpid())));
    std::filesystem::create_directories(path);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(folder, ignored);
    });
    return path;
  }();
  return folder.string();
}

std::string WriteScratchFile(const std::string& name, std::span<const uint8_t> input) {
  const std::string path = ScratchFolder() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(input.data()),
            static_cast<std::streamsize>(input.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write the scratch file %s\n", path.c_str());
    std::abort();
  }
  return path;
}

void TouchBytes(std::span<const std::byte> bytes) {
  // volatile: the sum must be computed, not optimized away with the reads.
  volatile unsigned sum = 0;
  for (std::byte b : bytes) sum = sum + static_cast<unsigned>(b);
}

}  // namespace zerograph::fuzz
