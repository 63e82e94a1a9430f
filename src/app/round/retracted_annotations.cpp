#include "app/round/retracted_annotations.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "app/feed/annotation_writer.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

// An attribute line repeats the key values JSON-escaped (up to 6 bytes per
// byte), so it may be longer than the input line it is about.
std::uint64_t attribute_line_limit(std::uint64_t max_line_bytes) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 40;  // ReaderOptions' limit
  return std::min(kMax, max_line_bytes * 8 + 4096);
}

std::string where(const fs::path& output, std::uint64_t line) {
  return "attribute file '" + output.string() + "' line " + std::to_string(line);
}

FlaggedLines flag_into(const io::InputFile& input, const fs::path& output,
                       std::span<const RetractedLine> retracted, const LineKeyHash& hash_of,
                       AnnotateFormat format, std::uint64_t max_line_bytes,
                       io::OutputWriter& writer) {
  io::RecordReader in(
      {.max_line_bytes = static_cast<std::size_t>(max_line_bytes), .prefix_digest = false});
  in.open(input);
  io::InputFile written = input;  // the attribute file read as an input of the same kind
  written.absolute_path = output;
  written.size = fs::file_size(output);
  io::RecordReader out(
      {.max_line_bytes = static_cast<std::size_t>(attribute_line_limit(max_line_bytes)),
       .prefix_digest = false});
  out.open(written);
  DuplicateFlag flag(format);
  FlaggedLines done;
  std::size_t next = 0;  // the first retracted record not flagged yet
  io::Record line;
  io::Record record;
  while (out.next(line)) {
    if (line.too_long) throw std::runtime_error(where(output, line.line_number) + " is too long");
    if (next == retracted.size()) {  // past the last retracted record: copied as it is
      writer.write(line.line, line.terminator);
      continue;
    }
    const std::uint64_t want = retracted[next].input_offset;
    if (!in.next(record)) {
      throw std::runtime_error("input '" + input.absolute_path.string() + "' ends before offset " +
                               std::to_string(want) + " of a retracted copy");
    }
    const std::uint64_t start = record.end_offset - record.line_bytes - record.terminator.size();
    if (start > want) {
      throw std::runtime_error("offset " + std::to_string(want) + " of a retracted copy is not " +
                               "the start of a line of input '" + input.absolute_path.string() +
                               "'");
    }
    if (start < want) {
      writer.write(line.line, line.terminator);
      continue;
    }
    const std::optional<core::KeyHash> hash = record.too_long ? std::nullopt : hash_of(record.line);
    if (!hash || *hash != retracted[next].hash) {
      throw std::runtime_error("input '" + input.absolute_path.string() + "' line " +
                               std::to_string(record.line_number) +
                               " does not hold the key of the retracted copy at offset " +
                               std::to_string(want) + ": it does not match this run");
    }
    const std::optional<std::string> flagged = flag.flag(line.line, input.format, record.line);
    if (!flagged) {
      throw std::runtime_error(where(output, line.line_number) +
                               " is not a kept record's line, but input line " +
                               std::to_string(record.line_number) +
                               " was kept and retracted: it does not match this run");
    }
    writer.write(*flagged, line.terminator);
    done.growth +=
        static_cast<std::int64_t>(flagged->size()) - static_cast<std::int64_t>(line.line.size());
    ++done.lines;
    ++next;
  }
  if (next != retracted.size()) {
    throw std::runtime_error("attribute file '" + output.string() +
                             "' ends before the line of the retracted copy at input offset " +
                             std::to_string(retracted[next].input_offset) +
                             ": it does not match this run");
  }
  return done;
}

}  // namespace

FlaggedLines flag_retracted_annotations(const io::InputFile& input, const fs::path& output,
                                        std::span<const RetractedLine> retracted,
                                        const LineKeyHash& hash_of, AnnotateFormat format,
                                        std::uint64_t max_line_bytes,
                                        const io::OutputOptions& options, bool durable) {
  const fs::path tmp = cut_output_temp_path(output);
  try {
    io::OutputWriter writer = io::OutputWriter::create(tmp, input.compression, options);
    FlaggedLines done =
        flag_into(input, output, retracted, hash_of, format, max_line_bytes, writer);
    if (durable) writer.flush_and_sync();
    writer.close();
    done.length = fs::file_size(tmp);
    return done;
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
}

}  // namespace bloomshard::app
