#include "cli/args.h"

#include <cstdio>
#include <utility>

#include "common/file_util.h"

namespace stepscope {

ArgParser::ArgParser(std::string command, std::string usage, std::string description)
    : command_name_(std::move(command)),
      usage_(std::move(usage)),
      description_(std::move(description)) {
  Switch("--help", "show this help and exit", "-h");
}

void ArgParser::Flag(const std::string& name, const std::string& metavar, const std::string& help,
                     const std::string& default_value, const std::string& short_name,
                     bool repeatable) {
  specs_.push_back({name, short_name, metavar, help, default_value, true, repeatable});
}

void ArgParser::Switch(const std::string& name, const std::string& help,
                       const std::string& short_name) {
  specs_.push_back({name, short_name, "", help, "", false, false});
}

const ArgParser::Spec* ArgParser::Find(const std::string& arg) const {
  for (const Spec& s : specs_) {
    if (arg == s.name || (!s.short_name.empty() && arg == s.short_name)) return &s;
  }
  return nullptr;
}

Status ArgParser::Parse(int argc, char** argv) {
  const std::string hint = "; see 'stepscope " + command_name_ + " --help'";
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      for (int j = i + 1; j < argc; ++j) {
        (accept_command_ ? command_ : positionals_).push_back(argv[j]);
      }
      break;
    }
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (isdigit(a[1]) || a[1] == '.'))) {
      std::string name = a, value;
      bool has_inline = false;
      size_t eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        has_inline = true;
      }
      const Spec* spec = Find(name);
      if (!spec) return InvalidInput("unknown option '" + name + "'" + hint);
      if (spec->name == "--help") {
        help_ = true;
        continue;
      }
      if (spec->takes_value) {
        if (!has_inline) {
          if (i + 1 >= argc)
            return InvalidInput("option " + spec->name + " needs a value (" + spec->metavar + ")" +
                                hint);
          value = argv[++i];
        }
        auto& v = values_[spec->name];
        if (!spec->repeatable) v.clear();
        // Repeatable flags also accept comma-separated lists.
        if (spec->repeatable) {
          size_t b = 0;
          while (true) {
            size_t c = value.find(',', b);
            std::string part = value.substr(b, c == std::string::npos ? std::string::npos : c - b);
            if (!part.empty()) v.push_back(part);
            if (c == std::string::npos) break;
            b = c + 1;
          }
        } else {
          v.push_back(value);
        }
      } else {
        if (has_inline) return InvalidInput("option " + spec->name + " takes no value" + hint);
        values_[spec->name].push_back("1");
      }
      continue;
    }
    if (accept_command_ && !positionals_.empty() && false) {
      // unreachable: commands only after "--"
    }
    positionals_.push_back(a);
  }
  return OkStatus();
}

int ArgParser::ParseOrExit(int argc, char** argv) {
  Status st = Parse(argc, argv);
  if (help_) {
    std::fputs(Help().c_str(), stdout);
    return 0;
  }
  if (!st.ok()) return ReportError(command_name_, st);
  // Every command: an output that is one of the inputs would be replaced
  // (report -o x.sqlite x.sqlite) before or while it is read.
  std::vector<std::pair<std::string, std::string>> inputs;  // flag ("" positional), path
  for (const std::string& in : positionals_) inputs.emplace_back("", in);
  for (const char* flag : {"--torch-memory", "--from"}) {
    if (Has(flag)) inputs.emplace_back(flag, Get(flag));
  }
  for (const char* out_flag : {"--output", "--svg", "--results"}) {
    if (!Has(out_flag)) continue;
    const std::string out = Get(out_flag);
    for (const auto& [in_flag, in] : inputs) {
      // roofline: --output names the survey trace, unused with --from.
      if (std::string(out_flag) == "--output" && in_flag == "--from") continue;
      if (!SameFile(out, in)) continue;
      const std::string shown = std::string(out_flag) == "--output" ? "-o" : out_flag;
      return ReportError(command_name_,
                         InvalidInput(shown + " " + out + " is the input " + in +
                                      "; writing it would destroy the input: choose another "
                                      "output name"));
    }
  }
  return -1;
}

bool ArgParser::Has(const std::string& name) const {
  auto it = values_.find(name);
  return it != values_.end() && !it->second.empty();
}

std::string ArgParser::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end() && !it->second.empty()) return it->second.back();
  for (const Spec& s : specs_) {
    if (s.name == name) return s.default_value;
  }
  return "";
}

std::vector<std::string> ArgParser::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return {};
  return it->second;
}

std::string ArgParser::Help() const {
  std::string h =
      "usage: stepscope " + command_name_ + " " + usage_ + "\n\n" + description_ + "\n\noptions:\n";
  for (const Spec& s : specs_) {
    std::string left = "  ";
    if (!s.short_name.empty()) left += s.short_name + ", ";
    left += s.name;
    if (s.takes_value) left += " " + s.metavar;
    if (left.size() < 30) {
      left.append(30 - left.size(), ' ');
    } else {
      left += "\n" + std::string(30, ' ');
    }
    std::string help = s.help;
    if (!s.default_value.empty()) help += " (default: " + s.default_value + ")";
    if (s.repeatable) help += " [repeatable]";
    h += left + help + "\n";
  }
  if (!epilog_.empty()) h += "\n" + epilog_ + "\n";
  return h;
}

int ReportError(const std::string& command, const Status& status) {
  std::fprintf(stderr, "stepscope %s: error: %s\n", command.c_str(), status.message().c_str());
  return status.code() == StatusCode::kInvalidInput ? 2 : 1;
}

}  // namespace stepscope
