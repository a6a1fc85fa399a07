#include "capture/host_mem/host_alloc_sink.h"

#include <dlfcn.h>

namespace stepscope::hostmem {

StatusOr<std::unique_ptr<HostAllocSink>> HostAllocSink::Create(sqlite3* db) {
  return CreateWith(
      db, reinterpret_cast<DrainEntry>(dlsym(RTLD_DEFAULT, "stepscope_hostmem_drain")),
      reinterpret_cast<CounterEntry>(dlsym(RTLD_DEFAULT, "stepscope_hostmem_dropped")),
      reinterpret_cast<CounterEntry>(dlsym(RTLD_DEFAULT, "stepscope_hostmem_threshold")));
}

StatusOr<std::unique_ptr<HostAllocSink>> HostAllocSink::CreateWith(sqlite3* db, DrainEntry drain,
                                                                   CounterEntry dropped,
                                                                   CounterEntry threshold) {
  std::unique_ptr<HostAllocSink> s(new HostAllocSink());
  s->drain_ = drain;
  s->dropped_ = dropped;
  s->threshold_ = threshold;
  if (drain) {
    ASSIGN_OR_RETURN(s->insert_, Prepare(db,
                                         "INSERT INTO host_alloc(ts_ns, tid, op, address, "
                                         "bytes, kind) VALUES(?,?,?,?,?,?)"));
  }
  return s;
}

void HostAllocSink::Insert(const HostAllocRecord* records, size_t count, void* self) {
  auto* s = static_cast<HostAllocSink*>(self);
  for (size_t i = 0; i < count && s->status_.ok(); ++i) {
    const HostAllocRecord& r = records[i];
    Statement& st = s->insert_;
    st.BindInt(1, r.ts_ns);
    st.BindInt(2, r.tid);
    st.BindInt(3, static_cast<int64_t>(r.op));
    st.BindInt(4, static_cast<int64_t>(r.address));
    st.BindInt(5, static_cast<int64_t>(r.bytes));
    st.BindInt(6, static_cast<int64_t>(r.kind));
    st.Step();
    if (!st.ok()) s->status_ = st.status();
    st.Reset();
  }
}

size_t HostAllocSink::Flush() {
  if (!drain_ || !status_.ok()) return 0;
  return drain_(&HostAllocSink::Insert, this);
}

}  // namespace stepscope::hostmem
