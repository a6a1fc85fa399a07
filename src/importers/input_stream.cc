#include "importers/input_stream.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace stepscope {
namespace {
constexpr size_t kInputChunk = 1 << 20;
}  // namespace

StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path) {
  std::unique_ptr<InputStream> s(new InputStream());
  s->f_ = std::fopen(path.c_str(), "rb");
  if (s->f_ == nullptr) return InvalidInput("cannot open: " + std::string(std::strerror(errno)));
  struct stat st;
  if (::fstat(fileno(s->f_), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return InvalidInput("is a directory");
    s->file_size_ = static_cast<uint64_t>(st.st_size);
  }
  s->in_.resize(kInputChunk);
  RETURN_IF_ERROR(s->Refill());
  if (s->zs_.avail_in >= 2 && s->zs_.next_in[0] == 0x1f && s->zs_.next_in[1] == 0x8b) {
    s->gzip_ = true;
    if (inflateInit2(&s->zs_, 16 + MAX_WBITS) != Z_OK)
      return Internal("zlib initialization failed");
    s->zinit_ = true;
  }
  return s;
}

InputStream::~InputStream() {
  if (zinit_) inflateEnd(&zs_);
  if (f_ != nullptr) std::fclose(f_);
}

// Moves the unread input to the front of in_ and reads more from the file.
Status InputStream::Refill() {
  if (eof_) return OkStatus();
  size_t keep = zs_.avail_in;
  if (keep > 0 && zs_.next_in != in_.data()) std::memmove(in_.data(), zs_.next_in, keep);
  size_t got = std::fread(in_.data() + keep, 1, in_.size() - keep, f_);
  if (got == 0) {
    if (std::ferror(f_)) return IoError("read failed: " + std::string(std::strerror(errno)));
    eof_ = true;
  }
  file_read_ += got;
  zs_.next_in = in_.data();
  zs_.avail_in = static_cast<uInt>(keep + got);
  return OkStatus();
}

StatusOr<size_t> InputStream::Read(char* buf, size_t n) {
  StatusOr<size_t> r = gzip_ ? ReadGzip(buf, n) : ReadRaw(buf, n);
  if (r.ok()) decoded_ += *r;
  return r;
}

StatusOr<size_t> InputStream::ReadRaw(char* buf, size_t n) {
  size_t done = 0;
  if (zs_.avail_in > 0) {
    done = std::min<size_t>(n, zs_.avail_in);
    std::memcpy(buf, zs_.next_in, done);
    zs_.next_in += done;
    zs_.avail_in -= static_cast<uInt>(done);
  }
  if (done < n && !eof_) {
    size_t got = std::fread(buf + done, 1, n - done, f_);
    if (got == 0) {
      if (std::ferror(f_)) return IoError("read failed: " + std::string(std::strerror(errno)));
      eof_ = true;
    }
    file_read_ += got;
    done += got;
  }
  return done;
}

StatusOr<size_t> InputStream::ReadGzip(char* buf, size_t n) {
  zs_.next_out = reinterpret_cast<Bytef*>(buf);
  zs_.avail_out = static_cast<uInt>(n);
  auto compressed_pos = [this]() { return std::to_string(file_read_ - zs_.avail_in); };
  while (zs_.avail_out > 0 && !stream_end_) {
    if (zs_.avail_in == 0) {
      RETURN_IF_ERROR(Refill());
      if (zs_.avail_in == 0) {
        return InvalidInput("truncated gzip data: the file ends at compressed byte " +
                            compressed_pos() + " in the middle of the stream, after " +
                            std::to_string(decoded_ + (n - zs_.avail_out)) +
                            " decompressed bytes (was the file fully written or copied?)");
      }
    }
    int rc = inflate(&zs_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // Another member may follow; zero padding after the last one is allowed.
      while (true) {
        while (zs_.avail_in > 0 && *zs_.next_in == 0) {
          ++zs_.next_in;
          --zs_.avail_in;
        }
        if (zs_.avail_in > 0) break;
        RETURN_IF_ERROR(Refill());
        if (zs_.avail_in == 0) break;
      }
      if (zs_.avail_in == 0) {
        stream_end_ = true;
      } else if (*zs_.next_in == 0x1f) {
        inflateReset(&zs_);
      } else {
        return InvalidInput("unexpected data after the gzip stream at compressed byte " +
                            compressed_pos());
      }
      continue;
    }
    if (rc == Z_BUF_ERROR) continue;  // needs more input: refilled above
    if (rc != Z_OK) {
      return InvalidInput("corrupt gzip data near compressed byte " + compressed_pos() + ": " +
                          (zs_.msg ? zs_.msg : "inflate failed"));
    }
  }
  return n - zs_.avail_out;
}

ReadAhead::ReadAhead(InputStream* in, size_t chunk, size_t slots) : in_(in) {
  buffers_.resize(slots);
  for (size_t i = 0; i < slots; ++i) {
    buffers_[i].resize(chunk);
    free_.push_back(i);
  }
  thread_ = std::thread([this] { Produce(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ReadAhead::Produce() {
  while (true) {
    size_t slot;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !free_.empty(); });
      if (stop_) return;
      slot = free_.front();
      free_.pop_front();
    }
    StatusOr<size_t> n = in_->Read(buffers_[slot].data(), buffers_[slot].size());
    bool last = !n.ok() || *n == 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      filled_.push_back({slot, n.ok() ? *n : 0, n.ok() ? OkStatus() : n.status()});
    }
    cv_.notify_all();
    if (last) return;
  }
}

StatusOr<std::string_view> ReadAhead::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (done_) return std::string_view();
  if (held_ != SIZE_MAX) {
    free_.push_back(held_);
    held_ = SIZE_MAX;
    cv_.notify_all();
  }
  cv_.wait(lock, [this] { return !filled_.empty(); });
  Filled f = filled_.front();
  filled_.pop_front();
  if (!f.status.ok() || f.size == 0) {
    done_ = true;
    free_.push_back(f.slot);
    if (!f.status.ok()) return f.status;
    return std::string_view();
  }
  held_ = f.slot;
  return std::string_view(buffers_[f.slot].data(), f.size);
}

}  // namespace stepscope
