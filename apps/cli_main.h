// What the three programs share: parsing with our exit codes, number validators, and turning a
// Status into the process exit code.
#ifndef ZEROGRAPH_APPS_CLI_MAIN_H_
#define ZEROGRAPH_APPS_CLI_MAIN_H_

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"

namespace zerograph::cli {

// Edit distance between two option names (insertions, deletions, substitutions).
inline size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substituted = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substituted});
    }
  }
  return row[b.size()];
}

// The long option of `app` nearest to a mistyped `--word[=value]` (within two edits), or "".
inline std::string NearestOption(const CLI::App& app, const std::string& typed) {
  if (!typed.starts_with("--")) return "";
  const std::string name = typed.substr(0, typed.find('='));
  std::string best;
  size_t best_distance = 3;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& long_name : option->get_lnames()) {
      const size_t distance = EditDistance(name, "--" + long_name);
      if (distance < best_distance) {
        best_distance = distance;
        best = "--" + long_name;
      }
    }
  }
  return best;
}

// A number option's validator: the value must be at least 0 (CLI11's own prints the whole range of
// a double).
inline CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end) return StrCat("'", text, "' is not a number");
        if (!(value >= 0)) return StrCat("must be at least 0, got ", text);
        return std::string();
      },
      "NUMBER>=0");
}

// This process's rank as an MPI launcher (mpirun, srun) told it in the environment, before MPI
// starts; 0 when not launched by one.
inline int LauncherRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

// Sets what every program shares: `--version` printing "<prog> <version>", and errors printed as
// "error: <message>" followed by a pointer to --help.
inline void SetUpCommon(CLI::App& app) {
  app.set_version_flag("--version", StrCat(app.get_name(), " ", ZG_VERSION),
                       "Print the program's name and version and exit");
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    // A value the validators refused (exit 2) is explained by the message itself; only a command
    // line that does not parse (exit 1) points to --help, with the option meant when one was
    // mistyped.
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
      return StrCat("error: ", e.what(), "\n");
    }
    std::string hint;
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      for (const std::string& extra : failed->remaining()) {
        if (std::string near = NearestOption(*failed, extra); !near.empty()) {
          hint += StrCat("Did you mean ", near, " (not ", extra, ")?\n");
        }
      }
    }
    return StrCat("error: ", e.what(), "\n", hint, "Run with --help for more information.\n");
  });
}

// Parses the command line. Returns the exit code to leave with when the program stops here: 0
// after --help or --version; 2 when a validator rejected a value (a number out of range, a file
// that does not exist: the command is well formed, its input is not); 1 for anything else CLI11
// rejects (an unknown option, a missing argument, a value of the wrong kind). This is CLI11_PARSE
// with our exit codes instead of CLI11's 100-odd ones.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    // Under mpirun every rank parses the same command line: rank 0 alone says what is wrong.
    std::ostringstream quiet;
    const bool other_rank = LauncherRank() > 0;
    const int code = other_rank ? app.exit(e, quiet, quiet) : app.exit(e);
    if (code == 0) return kExitOk;  // app.exit prints the help, the version or the error
    return dynamic_cast<const CLI::ValidationError*>(&e) != nullptr ? kExitBadInput : kExitUsage;
  }
}

// Runs the program's body and maps its status to the exit code, printing the error. The library
// does not throw; what still escapes (out of memory) is reported here, as a runtime failure.
inline int RunAndExit(const std::function<Status()>& run) {
  // A file-size limit (ulimit -f) then makes a write fail with EFBIG, reported and cleaned up like
  // a full disk, instead of killing the process with SIGXFSZ halfway through a file.
  std::signal(SIGXFSZ, SIG_IGN);
  Status status;
  try {
    status = run();
  } catch (const std::exception& e) {
    status = InternalError(StrCat("uncaught exception: ", e.what()));
  }
  // An error without a message was printed by another rank of the same job (graph-exec).
  if (!status.ok() && !status.message().empty()) {
    // One write, so that the messages of several ranks sharing a terminal do not interleave.
    const std::string line = StrCat("error: ", status.message(), "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  return status.ExitCode();
}

// RunAndExit for a body that chooses its exit code when it succeeds (graph-exec stopped by a
// signal exits 128 + its number, as a shell reports a process the signal ended).
inline int RunAndExitWithCode(const std::function<StatusOr<int>()>& run) {
  int code = kExitOk;
  const int failed = RunAndExit([&]() -> Status {
    ZG_ASSIGN_OR_RETURN(code, run());
    return Status::Ok();
  });
  return failed != kExitOk ? failed : code;
}

// An integer option's validator: the value must be at least `min`.
inline CLI::Validator AtLeast(long long min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end) return StrCat("'", text, "' is not an integer");
        if (value < min) return StrCat("must be at least ", min, ", got ", text);
        return std::string();
      },
      StrCat("INT>=", min));
}

// A number option's validator: the value must be greater than zero.
inline CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || ptr != end) return StrCat("'", text, "' is not a number");
        if (!(value > 0)) return StrCat("must be greater than 0, got ", text);
        return std::string();
      },
      "NUMBER>0");
}

}  // namespace zerograph::cli

#endif  // ZEROGRAPH_APPS_CLI_MAIN_H_
