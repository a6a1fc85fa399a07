// A library that proves it was loaded: its constructor creates the file named
// by STEPSCOPE_TEST_MARKER in the loading process's environment. The
// collector security test offers it to the collector as the "tracer library";
// the collector must never load it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

__attribute__((constructor)) static void Mark() {
  const char* path = std::getenv("STEPSCOPE_TEST_MARKER");
  if (!path || !*path) return;
  const int fd = ::open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    const char msg[] = "loaded by the collector\n";
    (void)::write(fd, msg, sizeof(msg) - 1);
    ::close(fd);
  }
}
