// ArgParser: the one flag parser every stepscope command uses, so that flags,
// errors and --help look the same everywhere (docs/cli.md, "The convention").
//
//   ArgParser p("stats", "[options] TRACE...", "Summary tables ...");
//   p.Flag("--buckets", "N", "number of time buckets", "20");
//   p.TableOutput();  // -o/--output FILE, -f, --format text|csv|json, --timeunit
//   p.Epilog("examples:\n  stepscope stats run.sqlite");
//   if (int rc = p.ParseOrExit(argc, argv); rc >= 0) return rc;
//
// Every command has -h/--help, -q/--quiet (nothing on stderr but errors) and
// -v/--verbose (timings and what was read, on stderr). --help is wrapped to
// the terminal ($COLUMNS, else the terminal's width, at most 100 columns).
//
// Flags take "--name value" or "--name=value"; repeatable flags collect every
// value; a bare "--" ends the options and the rest is kept verbatim (profile's
// command line). An unknown flag or a missing value is a one-line error and
// exit code 2.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/output.h"
#include "common/status.h"

namespace stepscope {

// -q and -v of the running command (set by ParseOrExit).
bool CliQuiet();
bool CliVerbose();
// "stepscope CMD: MESSAGE" on stderr unless -q.
void CliNote(const std::string& command, const std::string& message);
// The width --help is wrapped to.
size_t HelpWidth();

class ArgParser {
 public:
  ArgParser(std::string command, std::string usage, std::string description);

  // A flag that takes a value (metavar names it in --help).
  void Flag(const std::string& name, const std::string& metavar, const std::string& help,
            const std::string& default_value = "", const std::string& short_name = "",
            bool repeatable = false);
  // A boolean flag.
  void Switch(const std::string& name, const std::string& help, const std::string& short_name = "");
  // A boolean flag that also takes nsys's spelling of a boolean: `-f true`,
  // `--stats=false` (the word after it is consumed only when it is true or
  // false). Has() is false after `false`.
  void BoolSwitch(const std::string& name, const std::string& help,
                  const std::string& short_name = "");
  // Free text appended to --help: "examples:" and one indented command per
  // line ("  # comment" after it), then notes. Shown under "Examples:".
  void Epilog(const std::string& text) { epilog_ = text; }
  // The output convention for a command that prints tables: -o/--output FILE,
  // -f/--force-overwrite, --format text|csv|json, --timeunit ns|us|ms|s.
  void TableOutput(const std::string& output_help = "");
  // -o/--output FILE and -f/--force-overwrite for a command that writes one
  // file; ParseOrExit refuses an existing FILE without -f.
  void FileOutput(const std::string& metavar, const std::string& help);
  // Reads the flags of TableOutput (format, unit, path, force).
  Status ParseTableOutput(OutputSpec* spec) const;
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
    bool bool_word = false;  // BoolSwitch: takes an optional true|false
  };
  const Spec* Find(const std::string& arg) const;

  std::string command_name_, usage_, description_, epilog_;
  bool accept_command_ = false;
  bool check_output_ = false;  // FileOutput: refuse an existing -o without -f
  std::vector<Spec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
  std::vector<std::string> command_;
  bool help_ = false;
};

// Prints "stepscope <command>: error: <message>" and returns the exit code for
// the status (2 for invalid input, 1 otherwise).
int ReportError(const std::string& command, const Status& status);

// Writes tables the way TableOutput's flags say: to stdout, or to -o (with
// "wrote PATH" on stderr unless -q). `prefix` is text printed before the
// tables (text format only). Returns the exit code.
int EmitTables(const std::string& command, const ArgParser& p,
               const std::vector<NamedTable>& tables, const OutputSpec& spec,
               const std::string& prefix = "");
// Prints `text` to stdout, or writes it to -o FILE atomically. Returns the
// exit code.
int EmitText(const std::string& command, const ArgParser& p, const std::string& text);

}  // namespace stepscope
