// A hostile peer of the collector, for tests/capture/collector_security_test.py:
// connects to a running `stepscope profile`'s collector socket and asks it to
// trace another process, load a library of its choice and write a trace
// where it likes, optionally as another user; or, with the right token,
// rewrites the shared header after the handshake.
//
// usage: collector_attack SOCKET [--as-uid N] [--token T] [--pid P]
//                                [--inject-lib PATH] [--pattern P] [--cwd DIR]
//                                [--unsealed] [--mutate]
// Prints the collector's answer ("ok PATH", "error ...") or "no answer: WHY"
// on one line; exit 0 unless the attack could not even be set up.
#include <grp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "capture/handshake.h"
#include "capture/shm_ring.h"

namespace {

using namespace stepscope;

struct Options {
  std::string socket, token, pid, inject_lib, pattern, cwd;
  long uid = -1;
  bool unsealed = false, mutate = false;
};

bool Parse(int argc, char** argv, Options* o) {
  if (argc < 2) return false;
  o->socket = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string uid;
    if (a == "--unsealed") {
      o->unsealed = true;
    } else if (a == "--mutate") {
      o->mutate = true;
    } else if (a == "--as-uid" && value(&uid)) {
      o->uid = std::atol(uid.c_str());
    } else if (!((a == "--token" && value(&o->token)) || (a == "--pid" && value(&o->pid)) ||
                 (a == "--inject-lib" && value(&o->inject_lib)) ||
                 (a == "--pattern" && value(&o->pattern)) || (a == "--cwd" && value(&o->cwd)))) {
      return false;
    }
  }
  return true;
}

// A region with two READY CUPTI slots, so that an accepted peer makes the
// collector load CUPTI (through the library it names, before the fix).
int MakeRegion(bool unsealed, shm::Header** out, uint64_t* size) {
  shm::Header layout{};
  *size = shm::Layout(2, 1 << 16, 1 << 16, &layout);
  int fd = -1;
  if (unsealed) {
    fd = static_cast<int>(::syscall(SYS_memfd_create, "attack", 1u));
    if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(*size)) != 0) return -1;
  } else {
    fd = shm::CreateRegionFd("attack", *size);
  }
  if (fd < 0) return -1;
  void* p = ::mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  shm::InitHeader(p, layout, static_cast<int32_t>(::getpid()));
  auto* h = static_cast<shm::Header*>(p);
  for (uint32_t i = 0; i < 2; ++i) {
    std::memset(shm::SlotBase(h, i), 0x41, 256);
    h->slots[i].valid.store(256);
    h->slots[i].state.store(shm::kSlotReady);
  }
  // One NVTX mark: an accepted peer's trace has a record, so it is kept.
  const char name[] = "attack";
  shm::NvtxOpen mark{};
  mark.id = 1;
  mark.start_ns = 1;
  mark.tid = static_cast<uint32_t>(::getpid());
  mark.kind = 3;  // NvtxKind::kMark (format/records.h)
  mark.name_len = sizeof(name) - 1;
  uint8_t record[sizeof(mark) + sizeof(name)];
  std::memcpy(record, &mark, sizeof(mark));
  std::memcpy(record + sizeof(mark), name, sizeof(name) - 1);
  shm::Put(h, shm::Kind::kNvtxOpen, record, static_cast<uint32_t>(sizeof(mark) + sizeof(name) - 1));
  *out = h;
  return fd;
}

// Scribbles over the layout and the cursors, as a buggy program could.
void Mutate(shm::Header* h) {
  for (int round = 0; round < 20; ++round) {
    h->slot_count = 100000u + static_cast<uint32_t>(round);
    h->slot_bytes = uint64_t{1} << 44;
    h->slots_offset = ~uint64_t{0} - 4096;
    h->ring_offset = uint64_t{1} << 52;
    h->ring_bytes = round % 2 ? 3 : uint64_t{1} << 60;
    h->write.store(~uint64_t{0} - static_cast<uint64_t>(round));
    h->read.store(static_cast<uint64_t>(round) * 7);
    for (uint32_t i = 0; i < shm::kMaxSlots; ++i) {
      h->slots[i].valid.store(~uint64_t{0});
      h->slots[i].state.store(shm::kSlotReady);
    }
    ::usleep(30 * 1000);  // a few of the collector's polls
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o)) {
    std::fprintf(stderr, "usage: collector_attack SOCKET [--as-uid N] [--token T] ...\n");
    return 2;
  }
  shm::Header* h = nullptr;
  uint64_t size = 0;
  const int memfd = MakeRegion(o.unsealed, &h, &size);
  if (memfd < 0) {
    std::perror("region");
    return 1;
  }
  if (o.uid >= 0) {
    const auto id = static_cast<uid_t>(o.uid);
    if (::setgroups(0, nullptr) != 0 || ::setgid(id) != 0 || ::setuid(id) != 0) {
      std::perror("setuid");
      return 1;
    }
  }
  HelloFields f;
  if (!o.token.empty()) f["token"] = o.token;
  if (!o.pid.empty()) f["pid"] = o.pid;
  if (!o.inject_lib.empty()) f["inject_lib"] = o.inject_lib;
  if (!o.pattern.empty()) f["pattern"] = o.pattern;
  if (!o.cwd.empty()) f["cwd"] = o.cwd;
  f["sample_hz"] = "200";
  f["commit_ms"] = "10";
  auto sock = ConnectCollector(o.socket);
  if (!sock.ok()) {
    std::printf("no answer: %s\n", sock.status().message().c_str());
    return 0;
  }
  std::string answer;
  Status st = SendHello(*sock, memfd, EncodeHello(f), 10000, &answer);
  ::close(*sock);
  ::close(memfd);
  if (!st.ok()) {
    std::printf("no answer: %s\n", st.message().c_str());
    return 0;
  }
  std::printf("%s\n", answer.c_str());
  std::fflush(stdout);
  if (o.mutate && answer.rfind("ok ", 0) == 0) Mutate(h);
  ::munmap(h, size);
  return 0;
}
