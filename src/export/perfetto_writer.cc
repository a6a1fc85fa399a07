#include "export/perfetto_writer.h"

namespace stepscope {

PerfettoWriter::PerfettoWriter(OutputFile* out) : out_(out) {
  // The first packet of the sequence clears its incremental state, so the
  // interned data that follows starts from empty.
  pftrace::TracePacket* p = NewPacket(false);
  p->set_sequence_flags(pftrace::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  WritePacket();
}

void PerfettoWriter::SetTimeOrigin(int64_t origin_ns) { shift_ = origin_ns < 0 ? origin_ns : 0; }

pftrace::TracePacket* PerfettoWriter::NewPacket(bool uses_interning) {
  packet_.Clear();
  packet_.set_trusted_packet_sequence_id(kSequenceId);
  if (uses_interning) packet_.set_sequence_flags(pftrace::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  return &packet_;
}

void PerfettoWriter::WritePacket() {
  buffer_.clear();
  packet_.AppendToString(&buffer_);
  // Field 1 of Trace, wire type 2 (length-delimited), then a varint length.
  char head[11];
  size_t n = 0;
  head[n++] = 0x0a;
  uint64_t len = buffer_.size();
  do {
    uint8_t b = len & 0x7f;
    len >>= 7;
    head[n++] = static_cast<char>(len ? (b | 0x80) : b);
  } while (len);
  out_->Write(std::string_view(head, n));
  out_->Write(buffer_);
}

uint64_t PerfettoWriter::InternName(std::string_view name) {
  auto [it, inserted] = names_.try_emplace(std::string(name), names_.size() + 1);
  if (inserted) {
    pftrace::InternedString* s = packet_.mutable_interned_data()->add_event_names();
    s->set_iid(it->second);
    s->set_name(it->first);
  }
  return it->second;
}

uint64_t PerfettoWriter::InternCategory(const char* category) {
  auto [it, inserted] = categories_.try_emplace(category, categories_.size() + 1);
  if (inserted) {
    pftrace::InternedString* s = packet_.mutable_interned_data()->add_event_categories();
    s->set_iid(it->second);
    s->set_name(it->first);
  }
  return it->second;
}

uint64_t PerfettoWriter::InternArgName(const char* key) {
  auto [it, inserted] = arg_names_.try_emplace(key, arg_names_.size() + 1);
  if (inserted) {
    pftrace::InternedString* s = packet_.mutable_interned_data()->add_debug_annotation_names();
    s->set_iid(it->second);
    s->set_name(it->first);
  }
  return it->second;
}

void PerfettoWriter::AddTrack(const TrackInfo& t) {
  pftrace::TracePacket* p = NewPacket(false);
  pftrace::TrackDescriptor* d = p->mutable_track_descriptor();
  d->set_uuid(t.uuid);
  if (t.uuid >= bytes_counter_.size()) bytes_counter_.resize(t.uuid + 1, false);
  bytes_counter_[t.uuid] = t.kind == TrackKind::kCounter && t.counter_is_bytes;
  switch (t.kind) {
    case TrackKind::kProcess: {
      pftrace::ProcessDescriptor* pd = d->mutable_process();
      pd->set_pid(t.pid);
      pd->set_process_name(t.name);
      for (const std::string& arg : t.cmdline) pd->add_cmdline(arg);
      break;
    }
    case TrackKind::kThread: {
      pftrace::ThreadDescriptor* td = d->mutable_thread();
      td->set_pid(t.pid);
      td->set_tid(t.tid);
      td->set_thread_name(t.name);
      break;
    }
    case TrackKind::kCounter:
      d->mutable_counter()->set_unit(t.counter_is_bytes
                                         ? pftrace::CounterDescriptor::UNIT_SIZE_BYTES
                                         : pftrace::CounterDescriptor::UNIT_UNSPECIFIED);
      [[fallthrough]];
    default:
      d->set_name(t.name);
      if (t.parent_uuid) d->set_parent_uuid(t.parent_uuid);
  }
  WritePacket();
}

void PerfettoWriter::BeginSlice(const SliceEvent& e) {
  pftrace::TracePacket* p = NewPacket(true);
  p->set_timestamp(Ts(e.start_ns));
  pftrace::TrackEvent* te = p->mutable_track_event();
  te->set_type(pftrace::TrackEvent::TYPE_SLICE_BEGIN);
  te->set_track_uuid(e.track);
  te->set_name_iid(InternName(e.name));
  te->add_category_iids(InternCategory(e.category));
  for (size_t i = 0; i < e.arg_count; ++i) {
    pftrace::DebugAnnotation* a = te->add_debug_annotations();
    a->set_name_iid(InternArgName(e.args[i].key));
    if (e.args[i].is_string) {
      a->set_string_value(std::string(e.args[i].string_value));
    } else {
      a->set_int_value(e.args[i].int_value);
    }
  }
  for (size_t i = 0; i < e.flow_out_count; ++i) te->add_flow_ids(e.flows_out[i]);
  if (e.flow_in) te->add_terminating_flow_ids(e.flow_in);
  WritePacket();
}

void PerfettoWriter::EndSlice(uint64_t track, int64_t ts_ns) {
  pftrace::TracePacket* p = NewPacket(false);
  p->set_timestamp(Ts(ts_ns));
  pftrace::TrackEvent* te = p->mutable_track_event();
  te->set_type(pftrace::TrackEvent::TYPE_SLICE_END);
  te->set_track_uuid(track);
  WritePacket();
}

void PerfettoWriter::Instant(uint64_t track, int64_t ts_ns, std::string_view name,
                             const char* category) {
  pftrace::TracePacket* p = NewPacket(true);
  p->set_timestamp(Ts(ts_ns));
  pftrace::TrackEvent* te = p->mutable_track_event();
  te->set_type(pftrace::TrackEvent::TYPE_INSTANT);
  te->set_track_uuid(track);
  te->set_name_iid(InternName(name));
  te->add_category_iids(InternCategory(category));
  WritePacket();
}

void PerfettoWriter::Counter(uint64_t track, int64_t ts_ns, double value) {
  pftrace::TracePacket* p = NewPacket(false);
  p->set_timestamp(Ts(ts_ns));
  pftrace::TrackEvent* te = p->mutable_track_event();
  te->set_type(pftrace::TrackEvent::TYPE_COUNTER);
  te->set_track_uuid(track);
  if (track < bytes_counter_.size() && bytes_counter_[track]) {
    te->set_counter_value(static_cast<int64_t>(value));
  } else {
    te->set_double_counter_value(value);
  }
  WritePacket();
}

Status PerfettoWriter::Finish() { return OkStatus(); }

}  // namespace stepscope
