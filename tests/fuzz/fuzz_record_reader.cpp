// libFuzzer target: the record reader over plain, gzip and zstd bytes. The
// first byte chooses the file's codec and whether the harness compresses
// the payload itself (one or two gzip members / zstd frames, optionally cut
// short at a fuzzed offset) or hands the bytes over as they are (garbage,
// truncation, anything). Checked beyond "no crash": a stream read to its
// end gives back exactly the payload (lines + terminators, offsets that add
// up), a cut compressed stream ends in InputError or a clean prefix, and a
// reader resumed with skip_to() at a saved cursor and prefix digest reads
// the same rest with the same digests.
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "io/errors.hpp"
#include "io/records/record_reader.hpp"

namespace {

namespace io = bloomshard::io;

std::string gzip_member(std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&z, static_cast<uLong>(in.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstd_frame(std::string_view in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 1);
  if (ZSTD_isError(n)) std::abort();
  out.resize(n);
  return out;
}

// One memfd, rewritten per input, read through its /proc path as a file.
struct MemFile {
  int fd = memfd_create("fuzz-input", 0);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void set(std::string_view bytes) const {
    if (ftruncate(fd, 0) != 0) std::abort();
    if (!bytes.empty() &&
        pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
      std::abort();
    }
  }
};

struct Read {
  std::vector<std::string> lines;  // line + terminator (whole lines only)
  std::vector<io::InputCursor> cursors;
  std::vector<std::uint64_t> digests;  // prefix digest after each record
  bool error = false;
  bool too_long = false;
};

Read read_all(io::RecordReader& reader, const io::InputFile& file, const io::InputCursor* from,
              std::uint64_t from_digest) {
  Read r;
  try {
    reader.open(file);
    if (from != nullptr) reader.skip_to(*from, from_digest);
    io::Record rec;
    std::uint64_t offset = from != nullptr ? from->decompressed_offset : 0;
    while (reader.next(rec)) {
      if (rec.end_offset != offset + rec.line_bytes + rec.terminator.size()) std::abort();
      offset = rec.end_offset;
      if (rec.too_long) {
        r.too_long = true;
      } else if (rec.line.size() != rec.line_bytes) {
        std::abort();
      }
      r.lines.push_back(std::string(rec.line) + std::string(rec.terminator));
      r.cursors.push_back(reader.cursor());
      r.digests.push_back(reader.prefix_digest());
      if (r.cursors.back().decompressed_offset != offset) std::abort();
    }
  } catch (const io::InputError&) {
    r.error = true;
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static const MemFile mem;
  const unsigned mode = data[0];
  const io::Compression codec = (mode & 3U) == 1U   ? io::Compression::kGzip
                                : (mode & 3U) == 2U ? io::Compression::kZstd
                                                    : io::Compression::kNone;
  const bool encode = (mode & 4U) != 0 && codec != io::Compression::kNone;
  const bool two_frames = (mode & 8U) != 0;
  const bool cut = (mode & 16U) != 0;
  const std::string_view payload(reinterpret_cast<const char*>(data + 2), size - 2);

  std::string bytes;
  if (encode) {
    const std::size_t half = two_frames ? payload.size() / 2 : payload.size();
    for (const std::string_view part : {payload.substr(0, half), payload.substr(half)}) {
      if (part.empty() && !bytes.empty()) continue;
      bytes += codec == io::Compression::kGzip ? gzip_member(part) : zstd_frame(part);
    }
    if (cut && !bytes.empty()) bytes.resize(data[1] % bytes.size());
  } else {
    bytes.assign(payload);
  }
  mem.set(bytes);

  io::InputFile file;
  file.absolute_path = mem.path;
  file.relative_path = "fuzz";
  file.size = bytes.size();
  file.compression = codec;
  io::ReaderOptions options;
  options.max_line_bytes = (mode & 32U) != 0 ? 7 : io::kDefaultMaxLineBytes;
  options.buffer_bytes = 1;  // the smallest buffer: growth and refills get exercised
  io::RecordReader reader(options);
  const Read whole = read_all(reader, file, nullptr, 0);

  std::string joined;
  for (const std::string& l : whole.lines) joined += l;
  if (encode && !cut) {
    if (whole.error) std::abort();  // a valid stream must read
    if (!whole.too_long && joined != payload) std::abort();
  }
  if (codec == io::Compression::kNone && !whole.error && !whole.too_long && joined != bytes) {
    std::abort();
  }
  if (encode && !whole.too_long && payload.substr(0, joined.size()) != joined) std::abort();

  // Resume at a saved cursor: the same rest of the file.
  if (!whole.lines.empty()) {
    const std::size_t k = data[1] % whole.lines.size();
    const Read rest = read_all(reader, file, &whole.cursors[k], whole.digests[k]);
    // Damaged zstd data can give a reader with a larger buffer fewer lines:
    // zstd decodes straight into an output of >= 128 KiB and drops that
    // block with the error (found by this target). The resume may then stop
    // earlier, with an error; never later, never with other lines. The job
    // is safe either way: a resume that cannot reach its cursor is held at
    // the cursor, so nothing before it is read twice or lost.
    const std::size_t expected = whole.lines.size() - k - 1;
    if (rest.lines.size() > expected) std::abort();
    if (rest.lines.size() < expected && !(whole.error && rest.error)) std::abort();
    if (rest.lines.size() == expected && rest.error != whole.error) std::abort();
    for (std::size_t i = 0; i < rest.lines.size(); ++i) {
      if (rest.lines[i] != whole.lines[k + 1 + i]) std::abort();
      if (rest.digests[i] != whole.digests[k + 1 + i]) std::abort();  // the chain goes on
    }
  }
  return 0;
}
