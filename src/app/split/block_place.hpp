// What one rank of the lockstep layout (app/split/lockstep_layout.hpp)
// staged in a round and where it goes: the feed fills a StagedBlock, the
// round's allgather gives it a BlockPlace. Apart from lockstep_layout.hpp so
// that the feed (app/feed/input_feed.hpp) needs nothing else of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace bloomshard::app {

/// A line count that is not known: the lines of a block whose read broke
/// (--on-input-error skip skipped the rest of it).
inline constexpr std::uint64_t kUnknownLines = ~std::uint64_t{0};

/// What one rank staged in a round: its block (nullopt: none left), the
/// block's kept bytes and the lines it read (kUnknownLines if it broke).
struct StagedBlock {
  std::optional<std::size_t> block;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
};

/// Where a staged block goes: the offset of its kept bytes in its input's
/// output, and the number of lines of the input before the block (for the
/// rejects' line numbers; kUnknownLines after a block that broke).
struct BlockPlace {
  std::uint64_t offset = 0;
  std::uint64_t lines_before = 0;
  friend bool operator==(const BlockPlace&, const BlockPlace&) = default;
};

}  // namespace bloomshard::app
