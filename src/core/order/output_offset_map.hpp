// Where an input's lines lie in its output, without reading either: an
// uncompressed output written whole from its first byte holds its input's
// kept records in order, byte for byte, so it is the input with some byte
// ranges left out (duplicates, rejects, anything not written). The writer
// notes each piece it appends (its input offset and length); the map keeps
// the written runs of the input compactly, and the end pass of the one
// input order (app/round/retracted_line_place.hpp) turns a retracted
// record's input offset (its order tag) into its output offset directly,
// instead of walking the input beside the output.
//
// Memory: each written run costs two LEB128 numbers (the gap before it and
// its length), at most 20 bytes, 2 to 3 each for runs and gaps under 2 MiB;
// runs are at most the left-out ranges + 1, so at most 20 bytes (typically
// 4 to 6) per record left out. The writer caps the maps of a rank
// (kOutputOffsetMapMaxBytes); a map dropped there costs the walk, never a
// wrong line. Pure, no I/O, no MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace bloomshard::core {

/// The bytes of the maps one rank holds at most; past them a map is
/// dropped (its output is placed by the walk). 64 MiB: 3.3M left-out runs
/// at the worst encoding, ~13M at a typical one.
inline constexpr std::size_t kOutputOffsetMapMaxBytes = std::size_t{64} << 20;
/// A plan's figure: bytes a record left out costs in the map (runs and
/// gaps under 2 MiB: two numbers of at most 3 bytes each).
inline constexpr double kOutputOffsetMapBytesPerLeftOut = 6.0;

class OutputOffsetMap {
 public:
  /// Notes that input bytes [input_begin, input_begin + length) were
  /// appended to the output. Returns false, and the map is broken for good
  /// (broken(), its memory released), when input_begin lies before the end
  /// of the piece noted last: the output is then not the input in order.
  bool note_written(std::uint64_t input_begin, std::uint64_t length);
  /// Breaks the map (its memory released): a piece whose place is unknown.
  void break_map() noexcept;
  [[nodiscard]] bool broken() const noexcept { return broken_; }
  /// Output bytes noted so far (the output's length when written whole).
  [[nodiscard]] std::uint64_t output_length() const noexcept { return output_length_; }
  /// Bytes the map holds (its encoded runs).
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return encoded_.capacity(); }

  /// Where an input offset lies in the output.
  struct Place {
    std::uint64_t output_offset = 0;
    /// Input offset where the written run holding it ends: the line at the
    /// offset must end by then (the bytes after it were not written next).
    std::uint64_t run_end = 0;
  };

  /// Lookups in ascending input offset, one pass over the map. Valid while
  /// the map is neither noted to nor destroyed.
  class Cursor {
   public:
    explicit Cursor(const OutputOffsetMap& map) noexcept : map_(&map) {}
    /// The place of `input_offset`, or nullopt when that byte was not
    /// written (left out, past the end, the map broken) or the offset is
    /// below the run of the previous lookup.
    [[nodiscard]] std::optional<Place> find(std::uint64_t input_offset);

   private:
    bool next_run();
    const OutputOffsetMap* map_;
    std::size_t at_ = 0;       // next byte of encoded_
    bool last_ = false;        // the open run was taken
    bool started_ = false;     // a run is current
    std::uint64_t begin_ = 0;  // current run's input bytes [begin_, end_)
    std::uint64_t end_ = 0;
    std::uint64_t out_begin_ = 0;  // its first byte's output offset
  };

 private:
  void put(std::uint64_t v);
  std::vector<std::uint8_t> encoded_;  // (gap before, length) of each closed run
  std::uint64_t open_gap_ = 0;         // the open run: the gap before it
  std::uint64_t open_begin_ = 0;       // its input bytes [open_begin_, open_end_)
  std::uint64_t open_end_ = 0;
  bool open_ = false;
  bool broken_ = false;
  std::uint64_t output_length_ = 0;
};

}  // namespace bloomshard::core
