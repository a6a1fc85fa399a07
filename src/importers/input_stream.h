// InputStream: the bytes of an input file, gzip-decoded on the fly when the
// file starts with the gzip magic (1f 8b). Reads in large chunks; memory is a
// few fixed buffers whatever the file size.
//
// Errors name the position: a truncated gzip stream reports the compressed
// byte where it ends and how much was decoded; corrupt data reports the
// compressed offset of the failing block. Concatenated gzip members (as
// `cat a.gz b.gz` makes) decode as one stream; trailing zero padding is
// ignored, other trailing bytes are an error.
#pragma once

#include <zlib.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"

namespace stepscope {

class InputStream {
 public:
  static StatusOr<std::unique_ptr<InputStream>> Open(const std::string& path);
  ~InputStream();

  // Reads up to `n` decoded bytes into `buf`; returns 0 at the end of the data.
  StatusOr<size_t> Read(char* buf, size_t n);

  bool gzip() const { return gzip_; }
  uint64_t decoded_bytes() const { return decoded_; }
  uint64_t file_bytes_read() const { return file_read_; }
  // Size of the file on disk (0 when unknown).
  uint64_t file_size() const { return file_size_; }

 private:
  InputStream() = default;
  StatusOr<size_t> ReadRaw(char* buf, size_t n);
  StatusOr<size_t> ReadGzip(char* buf, size_t n);
  Status Refill();

  FILE* f_ = nullptr;
  bool gzip_ = false;
  bool zinit_ = false;
  bool eof_ = false;         // the file is exhausted
  bool stream_end_ = false;  // the last gzip member ended and nothing follows
  z_stream zs_{};
  std::vector<unsigned char> in_;
  uint64_t file_read_ = 0;
  uint64_t file_size_ = 0;
  uint64_t decoded_ = 0;
};

// ReadAhead: reads an InputStream on a background thread and hands out its
// chunks in order, so that reading and gzip inflation run on one core while
// the caller parses and inserts on the other. At most `slots` chunks are in
// flight: memory stays slots * chunk bytes.
class ReadAhead {
 public:
  explicit ReadAhead(InputStream* in, size_t chunk = 1 << 20, size_t slots = 4);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next chunk; empty at the end of the data. Valid until the next call.
  StatusOr<std::string_view> Next();

 private:
  struct Filled {
    size_t slot;
    size_t size;
    Status status;
  };
  void Produce();

  InputStream* in_;
  std::vector<std::vector<char>> buffers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> free_;
  std::deque<Filled> filled_;
  bool stop_ = false;
  bool done_ = false;       // the consumer saw the end or an error
  size_t held_ = SIZE_MAX;  // slot handed to the consumer
  std::thread thread_;
};

}  // namespace stepscope
