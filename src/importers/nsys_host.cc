#include "importers/nsys_host.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "importers/nsys_importer.h"
#include "store/callsite_interner.h"
#include "store/sqlite_util.h"
#include "store/trace_writer.h"

namespace stepscope {
namespace {

StatusOr<Statement> SelectColumns(sqlite3* db, const std::string& table,
                                  const std::vector<const char*>& cols, const std::string& tail) {
  ASSIGN_OR_RETURN(Statement info, Prepare(db, "PRAGMA table_info(\"" + table + "\")"));
  std::vector<std::string> have;
  while (info.Step()) have.emplace_back(info.Text(1));
  RETURN_IF_ERROR(info.status());
  std::string sql = "SELECT ";
  for (size_t i = 0; i < cols.size(); ++i) {
    const bool present = std::find(have.begin(), have.end(), cols[i]) != have.end();
    sql += (i ? ", " : "") + (present ? "\"" + std::string(cols[i]) + "\"" : std::string("NULL"));
  }
  return Prepare(db, sql + " FROM \"" + table + "\" " + tail);
}

// Names of an nsys ENUM_* table, upper-cased: id -> NAME.
std::map<int64_t, std::string> EnumNames(sqlite3* db, const char* table) {
  std::map<int64_t, std::string> out;
  if (!TableExists(db, table)) return out;
  auto st = Prepare(db, std::string("SELECT id, name FROM ") + table);
  if (!st.ok()) return out;
  while (st->Step()) {
    std::string n(st->Text(1));
    for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out[st->Int(0)] = n;
  }
  return out;
}

// A scheduler block reason (ENUM_SCHEDULING_THREAD_BLOCK) as a thread state;
// kUnknown when it says nothing.
ThreadState BlockState(const std::string& n) {
  static const char* kLock[] = {
      "MUTEX",           "CONDVAR",      "SEM",        "JOIN",       "PUSHLOCK",
      "FASTMUTEX",       "GUARDEDMUTEX", "KEYEDEVENT", "WAITTHREAD", "WINDOWSMUTEX",
      "ALERTBYTHREADID", "EVENTPAIR",    "QUEUE",      "RENDEZVOUS"};
  static const char* kIo[] = {"SEND",     "RECEIVE",    "REPLY",    "NETSEND",
                              "NETREPLY", "LPCRECEIVE", "LPCREPLY", "PAGEIN"};
  static const char* kRun[] = {"PREEMPTED",  "QUANTUMEND",      "YIELDEXECUTION",
                               "READYTORUN", "DEFERREDPREEMPT", "DISPATCHINT"};
  auto in = [&](const auto& set) {
    return std::any_of(std::begin(set), std::end(set), [&](const char* s) { return n == s; });
  };
  if (n.empty() || n == "NONBLOCKED" || n == "UNKNOWN") return ThreadState::kUnknown;
  if (in(kLock)) return ThreadState::kBlockedLock;
  if (in(kIo)) return ThreadState::kBlockedIo;
  if (in(kRun)) return ThreadState::kRunning;
  if (n == "NANOSLEEP" || n == "DELAYEXECUTION") return ThreadState::kSleep;
  return ThreadState::kBlockedOther;
}

// A sampled/scheduled thread state (ENUM_SAMPLING_THREAD_STATE).
ThreadState SampledState(const std::string& n) {
  if (n == "RUNNING") return ThreadState::kRunning;
  if (n == "INTERRUPTIBLE" || n == "UNINTERRUPTIBLE" || n == "STOPPED" || n == "WAITING" ||
      n == "OSRUNTIME")
    return ThreadState::kBlockedOther;
  return ThreadState::kUnknown;
}

class HostImporter {
 public:
  HostImporter(sqlite3* src, TraceWriter* w, ImportStats* stats, std::set<uint32_t>* pids,
               std::set<uint32_t>* tids)
      : src_(src), w_(w), stats_(stats), interner_(w), pids_(pids), tids_(tids) {}

  Status Run() {
    block_names_ = EnumNames(src_, "ENUM_SCHEDULING_THREAD_BLOCK");
    state_names_ = EnumNames(src_, "ENUM_SAMPLING_THREAD_STATE");
    if (state_names_.empty()) {  // NVIDIA's documented numbering
      state_names_ = {{1, "RUNNING"}, {2, "INTERRUPTIBLE"}, {3, "UNINTERRUPTIBLE"}, {4, "STOPPED"}};
    }
    if (TableExists(src_, "StringIds")) {
      ASSIGN_OR_RETURN(lookup_, Prepare(src_, "SELECT value FROM StringIds WHERE id = ?"));
    }
    RETURN_IF_ERROR(Sched());
    RETURN_IF_ERROR(Osrt());
    RETURN_IF_ERROR(Samples());
    return w_->status();
  }

 private:
  struct ChainFrame {
    int64_t depth;
    StringId symbol, module;
  };
  using Chains = std::unordered_map<int64_t, std::vector<ChainFrame>>;

  StringId Str(int64_t id) {
    auto it = strings_.find(id);
    if (it != strings_.end()) return it->second;
    StringId s = kNoString;
    if (lookup_.raw() != nullptr) {
      lookup_.BindInt(1, id);
      if (lookup_.Step()) s = w_->Intern(lookup_.Text(0));
      lookup_.Reset();
    }
    strings_.emplace(id, s);
    return s;
  }

  ThreadState StateOf(int64_t state, bool state_null, int64_t block, bool block_null) {
    if (!block_null) {
      auto it = block_names_.find(block);
      ThreadState s = BlockState(it == block_names_.end() ? "" : it->second);
      if (s != ThreadState::kUnknown) return s;
    }
    if (!state_null) {
      auto it = state_names_.find(state);
      return SampledState(it == state_names_.end() ? "" : it->second);
    }
    return ThreadState::kUnknown;
  }

  void Note(int64_t global_tid) {
    pids_->insert(NsysPid(global_tid));
    tids_->insert(NsysTid(global_tid));
  }

  Status Sched() {
    const char* t = "SCHED_EVENTS";
    if (!TableExists(src_, t)) return OkStatus();
    const size_t rows = stats_->Add("nsys_rows_SCHED_EVENTS", "rows read from SCHED_EVENTS");
    const size_t out =
        stats_->Add("host_sched_intervals", "thread_sched rows built from SCHED_EVENTS");
    const size_t unpaired = stats_->Add(
        "host_sched_unpaired",
        "SCHED_EVENTS rows that repeat the previous event of their thread (in after in, out "
        "after out) or have no time or thread: no interval built from them");
    ASSIGN_OR_RETURN(Statement st, SelectColumns(src_, t,
                                                 {"globalTid", "start", "cpu", "isSchedIn",
                                                  "threadState", "threadBlock"},
                                                 "ORDER BY globalTid, start, rowid"));
    int64_t prev_tid = -1, prev_start = 0, prev_cpu = -1;
    bool prev_in = false, have_prev = false;
    ThreadState prev_state = ThreadState::kUnknown;
    while (st.Step()) {
      stats_->Bump(rows);
      if (st.IsNull(0) || st.IsNull(1)) {
        stats_->Bump(unpaired);
        continue;
      }
      const int64_t gtid = st.Int(0), start = st.Int(1);
      const bool in = st.Int(3) != 0;
      if (gtid != prev_tid) have_prev = false;
      if (have_prev) {
        if (in == prev_in) {
          stats_->Bump(unpaired);
        } else {
          SchedRecord r{};
          r.start_ns = prev_start;
          r.end_ns = start;
          r.tid = NsysTid(gtid);
          r.cpu = prev_in ? static_cast<int32_t>(prev_cpu) : -1;
          r.state = prev_in ? ThreadState::kRunning : prev_state;
          w_->AddSched(r);
          stats_->Bump(out);
          Note(gtid);
        }
      }
      prev_tid = gtid;
      prev_start = start;
      prev_cpu = st.IsNull(2) ? -1 : st.Int(2);
      prev_in = in;
      prev_state = StateOf(st.Int(4), st.IsNull(4), st.Int(5), st.IsNull(5));
      have_prev = true;
    }
    if (!st.ok()) return InvalidInput(std::string("table ") + t + ": " + st.status().message());
    return OkStatus();
  }

  StatusOr<Chains> LoadChains(const char* table) {
    Chains chains;
    if (!TableExists(src_, table)) return chains;
    ASSIGN_OR_RETURN(Statement st,
                     SelectColumns(src_, table, {"id", "stackDepth", "symbol", "module"},
                                   "ORDER BY id, stackDepth"));
    while (st.Step()) {
      chains[st.Int(0)].push_back({st.Int(1), Str(st.Int(2)), Str(st.Int(3))});
    }
    if (!st.ok()) return InvalidInput(std::string("table ") + table + ": " + st.status().message());
    return chains;
  }

  // Leaf callsite of a callchain (innermost = depth 0), 0 when none.
  uint32_t Callsite(const Chains& chains, int64_t id) {
    auto it = chains.find(id);
    if (it == chains.end()) return 0;
    std::vector<FrameKey> stack;
    for (auto f = it->second.rbegin(); f != it->second.rend(); ++f) {  // root first
      stack.push_back({FrameKind::kNative, f->symbol, f->module, 0});
    }
    return interner_.Intern(stack);
  }

  Status Osrt() {
    const char* t = "OSRT_API";
    if (!TableExists(src_, t)) return OkStatus();
    ASSIGN_OR_RETURN(Chains chains, LoadChains("OSRT_CALLCHAINS"));
    const size_t rows = stats_->Add("nsys_rows_OSRT_API", "rows read from OSRT_API");
    const size_t bad = stats_->Add("host_osrt_bad_time",
                                   "OSRT_API rows skipped: no start, no thread, or end < start");
    ASSIGN_OR_RETURN(Statement st,
                     SelectColumns(src_, t, {"start", "end", "globalTid", "nameId", "callchainId"},
                                   "ORDER BY start, rowid"));
    while (st.Step()) {
      stats_->Bump(rows);
      if (st.IsNull(0) || st.IsNull(2) || (!st.IsNull(1) && st.Int(1) < st.Int(0))) {
        stats_->Bump(bad);
        continue;
      }
      OsrtRecord r{};
      r.start_ns = st.Int(0);
      r.end_ns = st.IsNull(1) ? r.start_ns : st.Int(1);
      r.tid = NsysTid(st.Int(2));
      r.name = Str(st.Int(3));
      r.callsite = st.IsNull(4) ? 0 : Callsite(chains, st.Int(4));
      r.source = kOsrtImported;
      w_->AddOsrt(r);
      Note(st.Int(2));
    }
    if (!st.ok()) return InvalidInput(std::string("table ") + t + ": " + st.status().message());
    return OkStatus();
  }

  Status Samples() {
    const char* t = "COMPOSITE_EVENTS";
    if (!TableExists(src_, t)) return OkStatus();
    ASSIGN_OR_RETURN(Chains chains, LoadChains("SAMPLING_CALLCHAINS"));
    const size_t rows =
        stats_->Add("nsys_rows_COMPOSITE_EVENTS", "rows read from COMPOSITE_EVENTS");
    const size_t bad =
        stats_->Add("host_samples_bad", "COMPOSITE_EVENTS rows skipped: no time or no thread");
    ASSIGN_OR_RETURN(Statement st,
                     SelectColumns(src_, t, {"id", "start", "globalTid", "threadState"},
                                   "ORDER BY start, rowid"));
    while (st.Step()) {
      stats_->Bump(rows);
      if (st.IsNull(1) || st.IsNull(2)) {
        stats_->Bump(bad);
        continue;
      }
      SampleRecord r{};
      r.ts_ns = st.Int(1);
      r.tid = NsysTid(st.Int(2));
      r.state = StateOf(st.Int(3), st.IsNull(3), 0, true);
      // nsys samples running threads; a sample without a state was on a CPU.
      if (st.IsNull(3)) r.state = ThreadState::kRunning;
      r.callsite = st.IsNull(0) ? 0 : Callsite(chains, st.Int(0));
      r.cpu_ns = -1;
      w_->AddSample(r);
      Note(st.Int(2));
    }
    if (!st.ok()) return InvalidInput(std::string("table ") + t + ": " + st.status().message());
    return OkStatus();
  }

  sqlite3* src_;
  TraceWriter* w_;
  ImportStats* stats_;
  CallsiteInterner interner_;
  std::set<uint32_t>* pids_;
  std::set<uint32_t>* tids_;
  Statement lookup_;
  std::unordered_map<int64_t, StringId> strings_;
  std::map<int64_t, std::string> block_names_, state_names_;
};

}  // namespace

Status ImportNsysHost(sqlite3* src, TraceWriter* w, ImportStats* stats,
                      std::set<uint32_t>* host_pids, std::set<uint32_t>* host_tids) {
  HostImporter imp(src, w, stats, host_pids, host_tids);
  return imp.Run();
}

}  // namespace stepscope
