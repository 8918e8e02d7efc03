// What the three programs share: parsing with our exit codes, number validators, and turning a
// Status into the process exit code.
#ifndef ZEROGRAPH_APPS_CLI_MAIN_H_
#define ZEROGRAPH_APPS_CLI_MAIN_H_

#include <charconv>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"

namespace zerograph::cli {

// Sets what every program shares: `--version` printing "<prog> <version>", and errors printed as
// "error: <message>" followed by a pointer to --help.
inline void SetUpCommon(CLI::App& app) {
  app.set_version_flag("--version", StrCat(app.get_name(), " ", ZG_VERSION),
                       "Print the program's name and version and exit");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return StrCat("error: ", e.what(), "\nRun with --help for more information.\n");
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
    if (app.exit(e) == 0) return kExitOk;  // app.exit prints the help, the version or the error
    return dynamic_cast<const CLI::ValidationError*>(&e) != nullptr ? kExitBadInput : kExitUsage;
  }
}

// Runs the program's body and maps its status to the exit code, printing the error. The library
// does not throw; what still escapes (out of memory) is reported here, as a runtime failure.
inline int RunAndExit(const std::function<Status()>& run) {
  Status status;
  try {
    status = run();
  } catch (const std::exception& e) {
    status = InternalError(StrCat("uncaught exception: ", e.what()));
  }
  if (!status.ok()) {
    // One write, so that the messages of several ranks sharing a terminal do not interleave.
    const std::string line = StrCat("error: ", status.message(), "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  return status.ExitCode();
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
