// The tracer <-> collector handshake over a Unix stream socket.
//
// The tracer sends one message: its shared-memory region (the memfd, as
// SCM_RIGHTS) and a text of `key=value` lines (HelloMessage: pid, output
// pattern, cwd, meta values, ...). The collector claims the trace file and answers one line:
// "ok PATH" or "error MESSAGE". Then the tracer closes both its fds: from
// then on it holds only the mapping, so the program may close or reuse any
// fd number without touching the trace.
//
// STEPSCOPE_COLLECTOR names the collector's listening socket ("@name": the
// abstract namespace). When it is unset, the tracer starts a collector itself
// (`stepscope _collect`, see StartOwnCollector).
//
// Trust (docs/capture.md, Security): an abstract socket has no file
// permissions, so the collector checks each peer itself. It takes a tracer
// only when the peer runs as the profiling user (or root; SO_PEERCRED) and
// sends the session token the launcher put in STEPSCOPE_COLLECTOR_TOKEN (only
// its own process tree inherits it); the pid it traces is the peer's, from the
// kernel, and CUPTI is loaded only through the launcher's own tracer library:
// no hello field names a library, another process or another output pattern.
// The tracer checks the collector the same way (its uid) before it hands over
// its memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/status.h"

namespace stepscope {

// The wire format: `key=value` lines (a newline or NUL in a value becomes a
// space), read back into a map.
using HelloFields = std::map<std::string, std::string>;

std::string EncodeHello(const HelloFields& f);
HelloFields DecodeHello(const std::string& text);

// The hello, typed: built by the tracer (capture/session.cc) and by the
// launcher for a program it samples (cli/cmd_profile.cc), read by the
// collector. On the wire each field is the `key=value` line of its name
// (ToFields / FromFields, the one place that spells them); a key missing
// leaves the field at its default, an unknown key is ignored.
struct HelloMessage {
  int pid = 0;  // the traced process; the collector puts the peer's (from the kernel)
  int ppid = 0;
  std::string host = "unknown";
  std::string cwd = ".";
  std::string pattern = "stepscope_%p";  // the output pattern (the launcher's wins)
  int file_mode = 0;                     // trace file permissions; 0: kTraceFileMode
  int64_t overwrite_before_ns = 0;       // --force-overwrite: replace files older than this
  std::string command_line;
  std::string clock = "CLOCK_REALTIME";  // CLOCK_REALTIME | CUPTI
  int64_t wall_clock_offset_ns = 0;
  int64_t start_ns = 0;
  std::string tool_version;
  std::string trace_categories;  // what the tracer records (CaptureConfig::TraceCategories)
  int64_t sample_hz = 0;         // host samples per second; 0: none
  std::string python_stacks;     // on | off | launches=N; "": not the tracer's hello
  int64_t commit_ms = 250;
  bool sync_from_api = true;
  bool zeroed_buffers = true;
  std::string start_time_ticks;  // /proc/PID/stat field 22 (the collector's, from the peer)
  std::optional<uint64_t> host_mem_threshold_bytes;
  std::string token;       // the session token; checked, then dropped, by the collector
  std::string inject_lib;  // the collector's: CUPTI is loaded through this library
  std::map<std::string, std::string> meta;  // meta.KEY: the trace's meta (rank, world_size, ...)
  std::map<std::string, std::string> env;   // env.VAR: values of the pattern's %q{VAR}

  HelloFields ToFields() const;
  static HelloMessage FromFields(const HelloFields& f);
  std::string Encode() const { return EncodeHello(ToFields()); }
  static HelloMessage Decode(const std::string& text) { return FromFields(DecodeHello(text)); }
};

// Sends `text` and `fd` in one message; waits up to `timeout_ms` for the
// one-line answer, returned in *answer. A collector that samples the process
// first sends a line "pid N" (its pid, returned in *collector_pid): the
// tracer allows it to read its memory (PR_SET_PTRACER, for Yama).
Status SendHello(int sock, int fd, const std::string& text, int timeout_ms, std::string* answer,
                 int* collector_pid = nullptr);
// Receives a hello (text and fd); *fd is -1 when none came.
Status ReceiveHello(int sock, int timeout_ms, std::string* text, int* fd);
Status SendAnswer(int sock, const std::string& line);

// The credentials of a connected Unix socket's peer, from the kernel.
struct PeerCred {
  int pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};
StatusOr<PeerCred> PeerCredentials(int sock);
// Whether a peer running as `uid` may talk to this process: the same effective
// user, or root.
bool TrustedUid(uint32_t uid);

// A fresh random session token (32 hex digits) for STEPSCOPE_COLLECTOR_TOKEN.
StatusOr<std::string> NewSessionToken();
// Compares tokens in time independent of where they differ.
bool TokensEqual(const std::string& a, const std::string& b);

// Connects to a listening socket named as in STEPSCOPE_COLLECTOR.
StatusOr<int> ConnectCollector(const std::string& name);
// Creates a listening socket under a fresh abstract name; returns the fd and
// the name (for STEPSCOPE_COLLECTOR).
StatusOr<int> ListenCollector(std::string* name);

}  // namespace stepscope
