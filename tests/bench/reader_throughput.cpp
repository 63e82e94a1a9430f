// Reader throughput: reads one input through io::RecordReader
// exactly as a resume without a frame start re-reads a compressed input up
// to its cursor (decompress, split lines, chain the prefix digest), and
// prints decompressed bytes, records, seconds and MB/s. Not a ctest test:
// build with `cmake --build <dir> --target bloomshard_reader_throughput`;
// docs/inputs.md uses it to price a resume of a 10 GB single-member gzip.
// With --resume-at F it instead reads the first fraction F of the records
// once, then times skip_to() to that cursor REPEAT times each way,
// alternating: without the cursor's frame start (byte 0, as a reader without frame starts must)
// and with it (docs/performance.md "Compressed resume").
// usage: bloomshard_reader_throughput FILE [REPEAT] [--resume-at F]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "io/records/input_file.hpp"
#include "io/records/record_reader.hpp"

namespace {

namespace io = bloomshard::io;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Times skip_to() at the cursor after `fraction` of the records, with and
// without its frame start.
void time_resume(const io::InputFile& file, double fraction, int repeat) {
  io::RecordReader reader;
  reader.open(file);
  io::Record r;
  std::uint64_t records = 0;
  while (reader.next(r)) ++records;
  const auto target = static_cast<std::uint64_t>(static_cast<double>(records) * fraction);
  reader.open(file);
  while (reader.cursor().records < target && reader.next(r)) {
  }
  const io::InputCursor cursor = reader.cursor();
  const std::uint64_t digest = reader.prefix_digest();
  std::printf("%s: cursor %llu of %llu records, decompressed byte %llu; frame start %s\n",
              file.relative_path.c_str(), static_cast<unsigned long long>(cursor.records),
              static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(cursor.decompressed_offset),
              cursor.frame
                  ? ("compressed byte " + std::to_string(cursor.frame->compressed_offset) +
                     ", decompressed byte " + std::to_string(cursor.frame->decompressed_offset))
                        .c_str()
                  : "none");
  for (int i = 0; i < repeat; ++i) {
    for (const bool with_frame : {false, true}) {
      io::InputCursor at = cursor;
      if (!with_frame) at.frame.reset();
      const auto start = std::chrono::steady_clock::now();
      io::RecordReader resumed;
      resumed.open(file);
      resumed.skip_to(at, digest);
      if (!resumed.next(r)) throw std::runtime_error("nothing after the cursor");
      std::printf("  skip_to %s: %.4f s\n", with_frame ? "at the frame start" : "from byte 0  ",
                  seconds_since(start));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [REPEAT] [--resume-at F]\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path path = std::filesystem::absolute(argv[1]);
    io::InputFile file;
    file.absolute_path = path;
    file.relative_path = path.filename().string();
    file.size = std::filesystem::file_size(path);
    const io::FileKind kind = io::classify_path(file.relative_path);
    file.format = kind.format;
    file.compression = kind.compression;
    const int repeat = argc > 2 ? std::atoi(argv[2]) : 1;
    if (argc > 4 && std::string(argv[3]) == "--resume-at") {
      time_resume(file, std::atof(argv[4]), repeat);
      return 0;
    }
    for (int i = 0; i < repeat; ++i) {
      const auto start = std::chrono::steady_clock::now();
      io::RecordReader reader;
      reader.open(file);
      io::Record r;
      while (reader.next(r)) {
      }
      const double s = seconds_since(start);
      const io::InputCursor end = reader.cursor();
      std::printf("%s: %llu bytes, %llu records, %.3f s, %.1f MB/s decompressed\n",
                  file.relative_path.c_str(),
                  static_cast<unsigned long long>(end.decompressed_offset),
                  static_cast<unsigned long long>(end.records), s,
                  static_cast<double>(end.decompressed_offset) / s / 1e6);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomshard_reader_throughput: %s\n", e.what());
    return 1;
  }
  return 0;
}
