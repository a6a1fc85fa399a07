// HostAllocSink: moves the records buffered by libstepscope_hostmem.so (the
// LD_PRELOAD interposer) into a trace's host_alloc table. Meant for the
// injected tracer's writer thread: call Flush() before each commit and at
// finalize, inside the writer's open transaction.
//
// The interposer is found at run time (dlsym(RTLD_DEFAULT,
// "stepscope_hostmem_drain")), so the tracer neither links it nor needs it:
// without it, available() is false and Flush() does nothing.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>

#include "capture/host_mem/host_mem.h"
#include "common/status.h"
#include "store/sqlite_util.h"

namespace stepscope::hostmem {

class HostAllocSink {
 public:
  using DrainEntry = size_t (*)(DrainFn, void*);
  using CounterEntry = uint64_t (*)();

  // Looks the interposer up in the process.
  static StatusOr<std::unique_ptr<HostAllocSink>> Create(sqlite3* db);
  // With explicit entry points (tests); `drain` may be null.
  static StatusOr<std::unique_ptr<HostAllocSink>> CreateWith(sqlite3* db, DrainEntry drain,
                                                             CounterEntry dropped,
                                                             CounterEntry threshold);

  bool available() const { return drain_ != nullptr; }
  // Inserts every buffered record; returns how many.
  size_t Flush();
  uint64_t dropped() const { return dropped_ ? dropped_() : 0; }
  uint64_t threshold() const { return threshold_ ? threshold_() : 0; }
  const Status& status() const { return status_; }

 private:
  HostAllocSink() = default;
  static void Insert(const HostAllocRecord* records, size_t count, void* self);

  Statement insert_;
  DrainEntry drain_ = nullptr;
  CounterEntry dropped_ = nullptr, threshold_ = nullptr;
  Status status_;
};

}  // namespace stepscope::hostmem
