// Replays files through one fuzz target (fuzz_target.h), built by any compiler: the regression
// test of every crash the fuzzer found. Prints each file's verdict; exits 1 when a file given
// after --expect-error loads, 2 when a path cannot be read. A crash fails the test by itself.
//
// Usage: replay-<target> [PATH...] [--expect-error PATH...]   (a folder: every file in it)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.h"

namespace {

namespace fs = std::filesystem;

// The files of `path`, sorted; a folder's README is documentation, not an input.
std::vector<fs::path> FilesOf(const fs::path& path) {
  std::vector<fs::path> files;
  if (!fs::is_directory(path)) return {path};
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(path)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  bool expect_error = false;
  int failures = 0;
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--expect-error") {
      expect_error = true;
      continue;
    }
    if (!fs::exists(arg)) {
      std::fprintf(stderr, "replay: no such file or folder: %s\n", arg.c_str());
      return 2;
    }
    for (const fs::path& file : FilesOf(arg)) {
      std::ifstream in(file, std::ios::binary);
      const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                       std::istreambuf_iterator<char>()};
      const zerograph::Status status = zerograph::fuzz::RunOne(bytes);
      ++replayed;
      const std::string verdict = status.ok() ? "loads" : status.ToString();
      std::printf("%s: %s\n", file.c_str(), verdict.substr(0, verdict.find('\n')).c_str());
      if (expect_error && status.ok()) {
        std::printf("  FAIL: expected an error\n");
        ++failures;
      }
    }
  }
  std::printf("replay: %d files, %d failures\n", replayed, failures);
  return failures == 0 ? 0 : 1;
}
