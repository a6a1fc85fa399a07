// ArgParser: the one flag parser every stepscope command uses, so that flags,
// errors and --help look the same everywhere.
//
//   ArgParser p("stats", "[options] TRACE...", "Summary tables ...");
//   p.Flag("--format", "FMT", "text (default), csv or json", "text");
//   p.Switch("--quiet", "print nothing but errors");
//   if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
//
// Flags take "--name value" or "--name=value"; repeatable flags collect every
// value; a bare "--" ends the options and the rest is kept verbatim (profile's
// command line). An unknown flag or a missing value is a one-line error and
// exit code 2.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace stepscope {

class ArgParser {
 public:
  ArgParser(std::string command, std::string usage, std::string description);

  // A flag that takes a value (metavar names it in --help).
  void Flag(const std::string& name, const std::string& metavar, const std::string& help,
            const std::string& default_value = "", const std::string& short_name = "",
            bool repeatable = false);
  // A boolean flag.
  void Switch(const std::string& name, const std::string& help, const std::string& short_name = "");
  // Free text appended to --help (examples, notes).
  void Epilog(const std::string& text) { epilog_ = text; }
  // Whether positional arguments after "--" are kept as a command (profile).
  void AcceptCommand() { accept_command_ = true; }

  Status Parse(int argc, char** argv);
  // Parses; on --help prints help and returns 0; on error prints the one-line
  // error and returns 2; returns -1 when the command should proceed.
  int ParseOrExit(int argc, char** argv);

  bool Has(const std::string& name) const;
  std::string Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  const std::vector<std::string>& command() const { return command_; }
  std::string Help() const;
  const std::string& name() const { return command_name_; }

 private:
  struct Spec {
    std::string name, short_name, metavar, help, default_value;
    bool takes_value = false;
    bool repeatable = false;
  };
  const Spec* Find(const std::string& arg) const;

  std::string command_name_, usage_, description_, epilog_;
  bool accept_command_ = false;
  std::vector<Spec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
  std::vector<std::string> command_;
  bool help_ = false;
};

// Prints "stepscope <command>: error: <message>" and returns the exit code for
// the status (2 for invalid input, 1 otherwise).
int ReportError(const std::string& command, const Status& status);

}  // namespace stepscope
