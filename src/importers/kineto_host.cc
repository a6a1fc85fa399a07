#include "importers/kineto_host.h"

#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/callsite_interner.h"
#include "store/import_rows.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

struct Span {
  int64_t start, end;
  StringId name;
};

// "dir/train.py(152): train_step" -> a Python frame; else a native one named
// by the text ("<built-in method item of Tensor object at 0x...>" loses its
// address, so every call of it is one frame).
FrameKey ParseFrame(TraceWriter* w, const std::string& name) {
  FrameKey f;
  const size_t colon = name.find("): ");
  const size_t open = colon == std::string::npos ? std::string::npos : name.rfind('(', colon);
  if (open != std::string::npos && open > 0 && colon > open + 1) {
    bool digits = true;
    for (size_t i = open + 1; i < colon; ++i)
      digits &= std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    if (digits && colon - open - 1 <= 9) {
      f.kind = FrameKind::kPython;
      f.file = w->Intern(name.substr(0, open));
      // Not the executing line: torch names a frame by its code object's first
      // line (or, for frames already on the stack when profiling started, the
      // line they were at then). A real torch 2.11 trace put every sync of a
      // loop at the line of its prof.step() call; so the line is left unknown
      // (0) and the frame is named by file and function.
      f.line = 0;
      f.function = w->Intern(name.substr(colon + 3));
      return f;
    }
  }
  std::string fn = name;
  if (const size_t at = fn.find(" object at 0x"); at != std::string::npos) {
    const size_t of = fn.rfind(" of ", at);
    fn = fn.substr(0, of != std::string::npos ? of : at) + (fn.back() == '>' ? ">" : "");
  }
  f.kind = FrameKind::kNative;
  f.function = w->Intern(fn);
  return f;
}

}  // namespace

Status ImportKinetoPythonStacks(TraceWriter* w, StringId python_domain, ImportStats* stats) {
  if (python_domain == kNoString) return OkStatus();  // no python_function events
  const size_t with_stack = stats->Add(
      "kineto_api_with_python_stack",
      "CUDA API calls inside python_function ranges of their thread: their stack is api_callsite");
  sqlite3* db = w->db();
  std::unordered_map<uint32_t, std::vector<Span>> spans;
  {
    ASSIGN_OR_RETURN(std::vector<NvtxSpanRow> rows, LoadNvtxSpansInDomain(db, python_domain));
    for (const NvtxSpanRow& r : rows) {
      spans[static_cast<uint32_t>(r.tid)].push_back(
          {r.start_ns, r.end_ns, static_cast<StringId>(r.name_id)});
    }
  }
  if (spans.empty()) return OkStatus();
  std::unordered_map<StringId, FrameKey> frames;
  auto frame = [&](StringId name) -> StatusOr<FrameKey> {
    auto it = frames.find(name);
    if (it != frames.end()) return it->second;
    ASSIGN_OR_RETURN(std::string text, LoadStringValue(db, name));
    FrameKey f = ParseFrame(w, text);
    frames.emplace(name, f);
    return f;
  };
  struct Call {
    uint32_t tid;
    int64_t start;
    uint32_t correlation;
  };
  std::vector<Call> calls;
  {
    ASSIGN_OR_RETURN(std::vector<ApiCallRow> rows, LoadApiCallsByThread(db));
    calls.reserve(rows.size());
    for (const ApiCallRow& r : rows) {
      calls.push_back(
          {static_cast<uint32_t>(r.tid), r.start_ns, static_cast<uint32_t>(r.correlation)});
    }
  }
  CallsiteInterner interner(w);
  {
    // Number after any rows already written (a writer reused for a second import).
    ASSIGN_OR_RETURN(auto max_ids, MaxFrameAndCallsiteIds(db));
    interner.StartAfter(static_cast<uint32_t>(max_ids.first),
                        static_cast<uint32_t>(max_ids.second));
  }
  uint32_t cur_tid = UINT32_MAX;
  const std::vector<Span>* v = nullptr;
  size_t next = 0;
  std::vector<const Span*> open;
  for (const Call& c : calls) {
    if (c.tid != cur_tid) {
      cur_tid = c.tid;
      auto it = spans.find(c.tid);
      v = it == spans.end() ? nullptr : &it->second;
      next = 0;
      open.clear();
    }
    if (v == nullptr) continue;
    // Open every span that starts by the call; close the ones that ended.
    while (next < v->size() && (*v)[next].start <= c.start) {
      const Span* s = &(*v)[next++];
      while (!open.empty() && open.back()->end <= s->start) open.pop_back();
      open.push_back(s);
    }
    while (!open.empty() && open.back()->end <= c.start) open.pop_back();
    // A span that ended before an enclosing one may still sit below the top.
    std::vector<FrameKey> stack;
    for (const Span* s : open) {
      if (s->end <= c.start) continue;
      ASSIGN_OR_RETURN(FrameKey f, frame(s->name));
      stack.push_back(f);
    }
    if (stack.empty()) continue;
    w->AddApiCallsite({c.correlation, interner.Intern(stack)});
    stats->Bump(with_stack);
  }
  return w->status();
}

}  // namespace stepscope
