#ifndef ZEROGRAPH_FUZZ_FUZZ_TARGET_H_
#define ZEROGRAPH_FUZZ_FUZZ_TARGET_H_

#include <cstdint>
#include <span>
#include <string>

#include "zerograph/core/status.h"

namespace zerograph::fuzz {

// One fuzz target: feeds `input` to one loader, as a user's file would reach it, and returns the
// loader's verdict. Each fuzz/<target>_fuzzer.cc defines it once; libfuzzer_main.cc turns it into
// a libFuzzer program (clang, ZG_FUZZ=ON) and replay_main.cc into a program that replays files
// (every build), so a crash found by the fuzzer is replayed by a normal test. A loader that
// accepts its input must also keep what it promises (a round trip, bytes inside the file):
// a broken promise aborts, which both programs report as a crash.
Status RunOne(std::span<const uint8_t> input);

// Writes `input` to this process's scratch file named `name` (in a folder of its own under the
// temporary directory) and returns its path, for loaders that read files.
std::string WriteScratchFile(const std::string& name, std::span<const uint8_t> input);

// This process's scratch folder (WriteScratchFile's), for loaders that read a folder.
std::string ScratchFolder();

// Reads every byte of `bytes`, so that a span pointing outside its file faults under ASan.
void TouchBytes(std::span<const std::byte> bytes);

}  // namespace zerograph::fuzz

#endif  // ZEROGRAPH_FUZZ_FUZZ_TARGET_H_
