#include "app/feed/input_manifest.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace bloomshard::app {
namespace {

void append_u64_bytes(std::string& out, std::uint64_t v) {
  char buf[8];
  std::memcpy(buf, &v, 8);  // same byte order on every rank of one job
  out.append(buf, 8);
}

void put_bytes(std::string& out, std::string_view s) {
  append_u64_bytes(out, s.size());
  out.append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  std::string_view bytes() {
    const std::uint64_t n = u64();
    need(n);
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  [[nodiscard]] bool done() const { return pos_ == bytes_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - pos_) throw std::runtime_error("input manifest is truncated");
  }
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string encode_inputs(std::span<const io::InputFile> files) {
  std::string out;
  append_u64_bytes(out, files.size());
  for (const auto& f : files) {
    put_bytes(out, f.absolute_path.native());
    put_bytes(out, f.relative_path);
    append_u64_bytes(out, f.size);
    append_u64_bytes(out, static_cast<std::uint64_t>(f.mtime_ns));
    append_u64_bytes(out, static_cast<std::uint64_t>(f.format));
    append_u64_bytes(out, static_cast<std::uint64_t>(f.compression));
  }
  return out;
}

std::vector<io::InputFile> decode_inputs(std::string_view bytes) {
  Reader in(bytes);
  const std::uint64_t n = in.u64();
  std::vector<io::InputFile> files;
  files.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    io::InputFile f;
    f.absolute_path = std::string(in.bytes());
    f.relative_path = std::string(in.bytes());
    f.size = in.u64();
    f.mtime_ns = static_cast<std::int64_t>(in.u64());
    f.format = static_cast<io::Format>(in.u64());
    f.compression = static_cast<io::Compression>(in.u64());
    files.push_back(std::move(f));
  }
  if (!in.done()) throw std::runtime_error("input manifest has trailing bytes");
  return files;
}

}  // namespace bloomshard::app
