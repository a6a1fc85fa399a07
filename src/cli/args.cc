#include "cli/args.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/file_util.h"
#include "common/log.h"
#include "common/strings.h"

namespace stepscope {

namespace {
bool g_quiet = false;
bool g_verbose = false;
}  // namespace

bool CliQuiet() { return g_quiet; }
bool CliVerbose() { return g_verbose; }

void CliNote(const std::string& command, const std::string& message) {
  if (!g_quiet) std::fprintf(stderr, "stepscope %s: %s\n", command.c_str(), message.c_str());
}

size_t HelpWidth() {
  size_t w = 0;
  if (const char* c = std::getenv("COLUMNS")) w = static_cast<size_t>(std::atoi(c));
  if (w == 0) {
    winsize ws{};
    if (::isatty(1) && ::ioctl(1, TIOCGWINSZ, &ws) == 0) w = ws.ws_col;
  }
  if (w == 0) w = 80;
  return std::clamp<size_t>(w, 40, 100);
}

ArgParser::ArgParser(std::string command, std::string usage, std::string description)
    : command_name_(std::move(command)),
      usage_(std::move(usage)),
      description_(std::move(description)) {
  Switch("--help", "show this help and exit", "-h");
  Switch("--quiet", "print nothing on stderr but errors", "-q");
  Switch("--verbose", "also print timings and what was read, on stderr", "-v");
}

void ArgParser::TableOutput(const std::string& output_help) {
  Flag("--format", "FMT", "table format: text, csv or json (one object of named tables)", "text");
  Flag("--timeunit", "UNIT", "unit of durations in text tables: ns, us, ms or s", "ns");
  Flag("--output", "FILE",
       output_help.empty() ? "write to FILE instead of stdout (several CSV tables, or FILE "
                             "ending in '/': one file per table, BASE_<table>.csv)"
                           : output_help,
       "", "-o");
  Switch("--force-overwrite", "replace existing output files", "-f");
}

void ArgParser::FileOutput(const std::string& metavar, const std::string& help) {
  Flag("--output", metavar, help, "", "-o");
  Switch("--force-overwrite", "replace an existing output file", "-f");
  check_output_ = true;
}

Status ArgParser::ParseTableOutput(OutputSpec* spec) const {
  if (!ParseOutputFormat(Get("--format"), &spec->format)) {
    return InvalidInput("--format '" + Get("--format") + "': expected text, csv or json");
  }
  if (!ParseTimeUnit(Get("--timeunit"), &spec->unit)) {
    return InvalidInput("--timeunit '" + Get("--timeunit") + "': expected ns, us, ms or s");
  }
  spec->path = Get("--output");
  if (spec->path == "-") spec->path.clear();
  spec->force = Has("--force-overwrite");
  return OkStatus();
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

void ArgParser::BoolSwitch(const std::string& name, const std::string& help,
                           const std::string& short_name) {
  specs_.push_back({name, short_name, "", help, "", false, false, true});
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
      } else if (spec->bool_word) {
        if (!has_inline && i + 1 < argc &&
            (std::string(argv[i + 1]) == "true" || std::string(argv[i + 1]) == "false")) {
          value = argv[++i];
          has_inline = true;
        }
        if (has_inline && value != "true" && value != "false") {
          return InvalidInput("option " + spec->name + " takes true or false, not '" + value + "'" +
                              hint);
        }
        if (has_inline && value == "false") {
          values_.erase(spec->name);
        } else {
          values_[spec->name] = {"1"};
        }
      } else {
        if (has_inline) return InvalidInput("option " + spec->name + " takes no value" + hint);
        values_[spec->name].push_back("1");
      }
      continue;
    }
    if (accept_command_) {
      // The first word that is not an option starts the command, as nsys
      // and time(1) read it: `stepscope profile python3 -c 'print(1)'`.
      for (int j = i; j < argc; ++j) command_.push_back(argv[j]);
      break;
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
  g_quiet = Has("--quiet");
  g_verbose = Has("--verbose") && !g_quiet;
  SetLogLevel(g_quiet ? -1 : g_verbose ? 1 : 0);
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
  if (check_output_ && Has("--output") && Get("--output") != "-") {
    if (Status c = CheckOverwrite(Get("--output"), Has("--force-overwrite")); !c.ok())
      return ReportError(command_name_, c);
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

namespace {

size_t Indent(const std::string& line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

// The width of a list marker at the start of `rest` ("* ", "- ", "1. "), or 0.
size_t BulletWidth(const std::string& rest) {
  if (rest.rfind("* ", 0) == 0 || rest.rfind("- ", 0) == 0) return 2;
  size_t d = 0;
  while (d < rest.size() && isdigit(static_cast<unsigned char>(rest[d]))) ++d;
  if (d > 0 && d + 1 < rest.size() && rest[d] == '.' && rest[d + 1] == ' ') return d + 2;
  return 0;
}

// Words of `text` filled into lines of at most `width` columns: the first
// line indented by `first`, the others by `rest`. A word longer than a line
// gets a line of its own.
std::string Fill(const std::string& text, size_t width, size_t first, size_t rest) {
  std::string out, line(first, ' ');
  bool empty = true;
  for (const std::string& w : Split(text, ' ')) {
    if (w.empty()) continue;
    if (!empty && line.size() + 1 + w.size() > width) {
      out += line + "\n";
      line = std::string(rest, ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + w;
    empty = false;
  }
  return out + line + "\n";
}

// Prose reflowed to `width`: paragraphs split at blank lines; within one, a
// line joins the previous one unless it starts a list item or changes the
// indentation (list items keep a hanging indent).
std::string Reflow(const std::string& text, size_t width) {
  std::string out;
  std::string item;
  size_t first = 0, cont = 0;
  auto flush = [&] {
    if (!item.empty()) out += Fill(item, width, first, cont);
    item.clear();
  };
  for (const std::string& line : Split(text, '\n')) {
    if (Trim(line).empty()) {
      flush();
      out += "\n";
      continue;
    }
    const size_t in = Indent(line);
    const std::string body = line.substr(in);
    const size_t bullet = BulletWidth(body);
    if (!item.empty() && bullet == 0 && in == cont) {
      item += " " + body;
      continue;
    }
    flush();
    item = body;
    first = in;
    cont = in + bullet;
  }
  flush();
  return out;
}

// An example command that does not fit: its "# comment" on a line above it,
// then the command broken at spaces with " \" continuations.
std::string ExampleLine(const std::string& line, size_t width) {
  if (line.size() <= width) return line + "\n";
  const size_t in = Indent(line);
  std::string cmd = line, out;
  const size_t hash = line.find("  #");
  if (hash != std::string::npos) {
    out += Fill(Trim(line.substr(hash)), width, in, in + 2);
    cmd = line.substr(0, hash);
    while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
    if (cmd.size() <= width) return out + cmd + "\n";
  }
  const std::string body = Trim(cmd);
  if (body.empty() || body[0] == '(') return out + Fill(body, width, in, in + 1);
  std::string cur(in, ' ');
  bool empty = true;
  for (const std::string& w : Split(body, ' ')) {
    if (w.empty()) continue;
    if (!empty && cur.size() + 1 + w.size() + 2 > width) {
      out += cur + " \\\n";
      cur = std::string(in + 4, ' ');
      empty = true;
    }
    cur += (empty ? "" : " ") + w;
    empty = false;
  }
  return out + cur + "\n";
}

}  // namespace

std::string ArgParser::Help() const {
  const size_t width = HelpWidth();
  std::string h = Fill("usage: stepscope " + command_name_ + " " + usage_, width, 0, 6) + "\n" +
                  Reflow(description_, width) + "\noptions:\n";
  const size_t col = width >= 72 ? 30 : 8;
  for (const Spec& s : specs_) {
    std::string left = "  ";
    if (!s.short_name.empty()) left += s.short_name + ", ";
    left += s.name;
    if (s.takes_value) left += " " + s.metavar;
    std::string help = s.help;
    if (!s.default_value.empty() && help.find("(default") == std::string::npos)
      help += " (default: " + s.default_value + ")";
    if (s.repeatable) help += " [repeatable]";
    if (left.size() + 2 <= col) {
      std::string text = Fill(help, width, col, col);
      h += left + text.substr(left.size());
    } else {
      h += left + "\n" + Fill(help, width, col, col);
    }
  }
  if (!epilog_.empty()) {
    // "examples:" and the indented lines under it, then prose.
    std::vector<std::string> lines = Split(epilog_, '\n');
    size_t k = 0;
    std::string prose;
    h += "\nExamples:\n";
    if (!lines.empty() && (Trim(lines[0]) == "examples:" || Trim(lines[0]) == "Examples:")) k = 1;
    for (; k < lines.size() && Indent(lines[k]) > 0; ++k) h += ExampleLine(lines[k], width);
    for (; k < lines.size(); ++k) prose += lines[k] + "\n";
    if (!Trim(prose).empty()) h += "\n" + Reflow(Trim(prose), width);
  }
  return h;
}

int ReportError(const std::string& command, const Status& status) {
  // One line, always: a message can quote the input (SQLite's "malformed database
  // schema" quotes the damaged CREATE statement, newlines and all: fuzz campaign,
  // issue 36). Line breaks and tabs become spaces, runs of them one.
  std::string msg;
  msg.reserve(status.message().size());
  for (char ch : status.message()) {
    const bool space = ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ';
    if (space && !msg.empty() && msg.back() == ' ') continue;
    msg += space ? ' ' : ch;
  }
  while (!msg.empty() && msg.back() == ' ') msg.pop_back();
  std::fprintf(stderr, "stepscope %s: error: %s\n", command.c_str(), msg.c_str());
  return status.code() == StatusCode::kInvalidInput ? 2 : 1;
}

}  // namespace stepscope

namespace stepscope {

int EmitTables(const std::string& command, const ArgParser& p,
               const std::vector<NamedTable>& tables, const OutputSpec& spec,
               const std::string& prefix) {
  (void)p;
  if (spec.path.empty()) {
    if (spec.format == OutputFormat::kText) std::fputs(prefix.c_str(), stdout);
    std::fputs(RenderTables(tables, spec.format, spec.unit).c_str(), stdout);
    return 0;
  }
  auto paths =
      WriteTables(tables, spec, spec.format == OutputFormat::kText ? prefix : std::string());
  if (!paths.ok()) return ReportError(command, paths.status());
  for (const std::string& path : *paths) CliNote(command, "wrote " + path);
  return 0;
}

int EmitText(const std::string& command, const ArgParser& p, const std::string& text) {
  if (!p.Has("--output") || p.Get("--output") == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  const std::string path = p.Get("--output");
  if (Status st = CheckOverwrite(path, p.Has("--force-overwrite")); !st.ok())
    return ReportError(command, st);
  if (Status st = WriteFileAtomic(path, text); !st.ok()) return ReportError(command, st);
  CliNote(command, "wrote " + path);
  return 0;
}

}  // namespace stepscope
