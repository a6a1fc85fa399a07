#include "capture/handshake.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/strings.h"

namespace stepscope {
namespace {

constexpr size_t kMaxHello = 1 << 16;

bool WaitReadable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  return rc > 0;
}

sockaddr_un Address(const std::string& name, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::string n = name.substr(0, sizeof(a.sun_path) - 1);
  std::memcpy(a.sun_path, n.data(), n.size());
  if (!n.empty() && n[0] == '@') a.sun_path[0] = '\0';  // abstract namespace
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n.size());
  return a;
}

}  // namespace

std::string EncodeHello(const HelloFields& f) {
  std::string out;
  for (const auto& [k, v] : f) {
    std::string value = v;
    for (char& c : value) {
      if (c == '\n' || c == '\0') c = ' ';
    }
    out += k + "=" + value + "\n";
  }
  return out;
}

HelloFields DecodeHello(const std::string& text) {
  HelloFields f;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    size_t eq = line.find('=');
    if (eq != std::string::npos) f[line.substr(0, eq)] = line.substr(eq + 1);
    pos = nl + 1;
  }
  return f;
}

namespace {

bool ReadInt(const HelloFields& f, const char* key, int64_t* out) {
  auto it = f.find(key);
  int64_t v = 0;
  if (it == f.end() || !ParseInt64(it->second, &v)) return false;
  *out = v;
  return true;
}

}  // namespace

HelloFields HelloMessage::ToFields() const {
  HelloFields f;
  f["pid"] = std::to_string(pid);
  f["ppid"] = std::to_string(ppid);
  f["host"] = host;
  f["cwd"] = cwd;
  f["pattern"] = pattern;
  if (file_mode > 0) f["file_mode"] = std::to_string(file_mode);
  f["overwrite_before_ns"] = std::to_string(overwrite_before_ns);
  f["command_line"] = command_line;
  f["clock"] = clock;
  f["wall_clock_offset_ns"] = std::to_string(wall_clock_offset_ns);
  f["start_ns"] = std::to_string(start_ns);
  f["tool_version"] = tool_version;
  f["trace_categories"] = trace_categories;
  f["sample_hz"] = std::to_string(sample_hz);
  if (!python_stacks.empty()) f["python_stacks"] = python_stacks;
  f["commit_ms"] = std::to_string(commit_ms);
  f["sync_from_api"] = sync_from_api ? "1" : "0";
  f["zeroed_buffers"] = zeroed_buffers ? "1" : "0";
  f["start_time_ticks"] = start_time_ticks;
  if (host_mem_threshold_bytes) {
    f["host_mem_threshold_bytes"] = std::to_string(*host_mem_threshold_bytes);
  }
  if (!token.empty()) f["token"] = token;
  if (!inject_lib.empty()) f["inject_lib"] = inject_lib;
  for (const auto& [k, v] : meta) f["meta." + k] = v;
  for (const auto& [k, v] : env) f["env." + k] = v;
  return f;
}

HelloMessage HelloMessage::FromFields(const HelloFields& f) {
  HelloMessage h;
  auto text = [&f](const char* key, std::string* out) {
    if (auto it = f.find(key); it != f.end()) *out = it->second;
  };
  int64_t n = 0;
  if (ReadInt(f, "pid", &n)) h.pid = static_cast<int>(n);
  if (ReadInt(f, "ppid", &n)) h.ppid = static_cast<int>(n);
  text("host", &h.host);
  text("cwd", &h.cwd);
  text("pattern", &h.pattern);
  if (ReadInt(f, "file_mode", &n) && n > 0 && n <= 0777) h.file_mode = static_cast<int>(n);
  ReadInt(f, "overwrite_before_ns", &h.overwrite_before_ns);
  text("command_line", &h.command_line);
  text("clock", &h.clock);
  ReadInt(f, "wall_clock_offset_ns", &h.wall_clock_offset_ns);
  ReadInt(f, "start_ns", &h.start_ns);
  text("tool_version", &h.tool_version);
  text("trace_categories", &h.trace_categories);
  ReadInt(f, "sample_hz", &h.sample_hz);
  text("python_stacks", &h.python_stacks);
  ReadInt(f, "commit_ms", &h.commit_ms);
  if (auto it = f.find("sync_from_api"); it != f.end()) h.sync_from_api = it->second != "0";
  if (auto it = f.find("zeroed_buffers"); it != f.end()) h.zeroed_buffers = it->second != "0";
  text("start_time_ticks", &h.start_time_ticks);
  if (ReadInt(f, "host_mem_threshold_bytes", &n) && n >= 0) {
    h.host_mem_threshold_bytes = static_cast<uint64_t>(n);
  }
  text("token", &h.token);
  text("inject_lib", &h.inject_lib);
  for (const auto& [k, v] : f) {
    if (k.rfind("meta.", 0) == 0) h.meta[k.substr(5)] = v;
    if (k.rfind("env.", 0) == 0) h.env[k.substr(4)] = v;
  }
  return h;
}

Status SendHello(int sock, int fd, const std::string& text, int timeout_ms, std::string* answer,
                 int* collector_pid) {
  if (text.size() > kMaxHello) return InvalidInput("hello too long");
  uint32_t len = static_cast<uint32_t>(text.size());
  std::string payload(reinterpret_cast<const char*>(&len), sizeof(len));
  payload += text;
  iovec iov{payload.data(), payload.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do {
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  answer->clear();
  if (n != static_cast<ssize_t>(payload.size())) {
    const int e = errno;
    // A collector that refuses a peer answers before it reads anything and
    // closes: its one line is still there to read.
    char buf[512];
    if (WaitReadable(sock, 100)) {
      const ssize_t r = ::read(sock, buf, sizeof(buf) - 1);
      if (r > 0) {
        std::string line(buf, static_cast<size_t>(r));
        line = line.substr(0, line.find('\n'));
        if (line.rfind("error ", 0) == 0) {
          *answer = line;
          return OkStatus();
        }
      }
    }
    return IoError(std::string("cannot reach the collector: ") + std::strerror(e));
  }
  char buf[4096];
  std::string got;
  while (true) {
    // "pid N" lines (the collector's pid, for PR_SET_PTRACER) come before
    // the answer line.
    size_t nl;
    while ((nl = got.find('\n')) != std::string::npos) {
      std::string line = got.substr(0, nl);
      got.erase(0, nl + 1);
      if (line.rfind("pid ", 0) == 0) {
        if (collector_pid) *collector_pid = std::atoi(line.c_str() + 4);
        continue;
      }
      *answer = line;
      return OkStatus();
    }
    if (!WaitReadable(sock, timeout_ms)) return IoError("the collector did not answer");
    ssize_t r = ::read(sock, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return IoError("the collector closed the connection");
    got.append(buf, static_cast<size_t>(r));
  }
}

Status ReceiveHello(int sock, int timeout_ms, std::string* text, int* fd) {
  *fd = -1;
  text->clear();
  std::string data;
  uint32_t len = 0;
  bool have_len = false;
  while (!have_len || data.size() < len) {
    if (!WaitReadable(sock, timeout_ms)) return IoError("no hello from the tracer");
    char buf[8192];
    iovec iov{buf, sizeof(buf)};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("the tracer closed the connection");
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
          int got;
          std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
          if (*fd < 0) {
            *fd = got;
          } else {
            ::close(got);
          }
        }
      }
    }
    data.append(buf, static_cast<size_t>(n));
    if (!have_len && data.size() >= sizeof(len)) {
      std::memcpy(&len, data.data(), sizeof(len));
      data.erase(0, sizeof(len));
      have_len = true;
      if (len > kMaxHello) return InvalidInput("hello too long");
    }
  }
  *text = data.substr(0, len);
  return OkStatus();
}

Status SendAnswer(int sock, const std::string& line) {
  std::string s = line + "\n";
  ssize_t n;
  do {
    n = ::send(sock, s.data(), s.size(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(s.size())) return IoError("cannot answer the tracer");
  return OkStatus();
}

StatusOr<PeerCred> PeerCredentials(int sock) {
  ucred c{};
  socklen_t len = sizeof(c);
  if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0 || len != sizeof(c))
    return IoError(std::string("cannot read the peer's credentials: ") + std::strerror(errno));
  PeerCred p;
  p.pid = static_cast<int>(c.pid);
  p.uid = c.uid;
  p.gid = c.gid;
  return p;
}

bool TrustedUid(uint32_t uid) { return uid == ::geteuid() || uid == 0; }

StatusOr<std::string> NewSessionToken() {
  unsigned char raw[16];
  size_t got = 0;
  while (got < sizeof(raw)) {
    const ssize_t n = ::getrandom(raw + got, sizeof(raw) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : raw) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

bool TokensEqual(const std::string& a, const std::string& b) {
  if (a.size() != b.size() || a.empty()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

StatusOr<int> ConnectCollector(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(std::string("socket: ") + std::strerror(errno));
  socklen_t len;
  sockaddr_un a = Address(name, &len);
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), len);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    int e = errno;
    ::close(fd);
    return IoError("cannot connect to the collector " + name + ": " + std::strerror(e));
  }
  return fd;
}

StatusOr<int> ListenCollector(std::string* name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return IoError(std::string("socket: ") + std::strerror(errno));
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  for (int attempt = 0; attempt < 16; ++attempt) {
    *name = "@stepscope-" + std::to_string(getpid()) + "-" +
            std::to_string((ts.tv_nsec + attempt * 7919) % 1000000007);
    socklen_t len;
    sockaddr_un a = Address(*name, &len);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0) {
      if (::listen(fd, 128) == 0) return fd;
      break;
    }
    if (errno != EADDRINUSE) break;
  }
  int e = errno;
  ::close(fd);
  return IoError(std::string("cannot create the collector socket: ") + std::strerror(e));
}

}  // namespace stepscope
