// Helpers shared by the io tests: a self-deleting temp dir under /tmp and
// independent (library-API) gzip/zstd encoders and decoders for fixtures.
#pragma once

#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "io/records/input_file.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::io::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/bloomshard_io_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

inline std::string read_file(const std::filesystem::path& p) {
  std::string out(std::filesystem::file_size(p), '\0');
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + p.string());
  const std::size_t got = std::fread(out.data(), 1, out.size(), f);
  std::fclose(f);
  if (got != out.size()) throw std::runtime_error("short read " + p.string());
  return out;
}

/// One gzip member holding `data`.
inline std::string gzip_member(std::string_view data, int level = 6) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

/// One zstd frame holding `data`.
inline std::string zstd_frame(std::string_view data, int level = 3) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(n) != 0) throw std::runtime_error("ZSTD_compress");
  out.resize(n);
  return out;
}

/// Concatenated members/frames, one per chunk.
inline std::string compress_chunks(Compression c, std::initializer_list<std::string_view> chunks) {
  std::string out;
  for (std::string_view chunk : chunks) {
    if (c == Compression::kGzip) {
      out += gzip_member(chunk);
    } else if (c == Compression::kZstd) {
      out += zstd_frame(chunk);
    } else {
      out += chunk;
    }
  }
  return out;
}

inline std::string compress(Compression c, std::string_view data) {
  return compress_chunks(c, {data});
}

/// Independent decoder (zlib / libzstd directly) of a whole multi-member or
/// multi-frame buffer; throws on any error or truncation.
inline std::string decompress(Compression c, std::string_view data) {
  std::string out;
  std::vector<char> buf(1 << 16);
  if (c == Compression::kNone) return std::string(data);
  if (c == Compression::kGzip) {
    std::size_t pos = 0;
    while (pos < data.size()) {
      z_stream z{};
      if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2");
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + pos));
      z.avail_in = static_cast<uInt>(data.size() - pos);
      int rc = Z_OK;
      while (rc != Z_STREAM_END) {
        z.next_out = reinterpret_cast<Bytef*>(buf.data());
        z.avail_out = static_cast<uInt>(buf.size());
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
          inflateEnd(&z);
          throw std::runtime_error("gzip decode error " + std::to_string(rc));
        }
        out.append(buf.data(), buf.size() - z.avail_out);
      }
      pos = data.size() - z.avail_in;
      inflateEnd(&z);
    }
    return out;
  }
  if (data.empty()) return out;
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::size_t rc = 0;
  for (;;) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    rc = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(rc) != 0) {
      ZSTD_freeDCtx(d);
      throw std::runtime_error(std::string("zstd decode error ") + ZSTD_getErrorName(rc));
    }
    out.append(buf.data(), o.pos);
    // All input consumed and output not the limit, or the last frame ended
    // (rc 0: a frame that filled the buffer exactly; calling again would
    // ask for the next frame's header): nothing more to come.
    if (in.pos == in.size && (o.pos < o.size || rc == 0)) break;
  }
  ZSTD_freeDCtx(d);
  if (rc != 0) throw std::runtime_error("zstd stream truncated");
  return out;
}

inline std::string suffix_for(Format f, Compression c) {
  std::string s = f == Format::kJsonLines ? ".jsonl" : ".txt";
  if (c == Compression::kGzip) s += ".gz";
  if (c == Compression::kZstd) s += ".zst";
  return s;
}

/// An InputFile for `path` classified by its name.
inline InputFile input_for(const std::filesystem::path& path) {
  InputFile f;
  f.absolute_path = path;
  f.relative_path = path.filename().string();
  f.size = std::filesystem::file_size(path);
  const FileKind k = classify_path(path.filename().string());
  f.format = k.format;
  f.compression = k.compression;
  return f;
}

struct OwnedRecord {
  std::string line;
  std::string terminator;
  std::uint64_t line_number = 0;
  std::uint64_t end_offset = 0;
  std::uint64_t line_bytes = 0;
  bool too_long = false;
};

inline std::vector<OwnedRecord> read_all(const InputFile& f, ReaderOptions options = {}) {
  RecordReader reader(options);
  reader.open(f);
  std::vector<OwnedRecord> out;
  Record r;
  while (reader.next(r)) {
    out.push_back({std::string(r.line), std::string(r.terminator), r.line_number, r.end_offset,
                   r.line_bytes, r.too_long});
  }
  return out;
}

inline const Compression kAllCompressions[] = {Compression::kNone, Compression::kGzip,
                                               Compression::kZstd};

}  // namespace bloomshard::io::test
