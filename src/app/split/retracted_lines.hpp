// Which bytes of a split input's output part the join keeps: all
// but the lines of retracted records (core/order/file_order.hpp). The part holds
// the kept lines of its input range, in order and byte for byte, but not
// where each came from; the input range is walked beside it to find the
// retracted records' lines. An input line equal (terminator included) to
// the part's next line is the one that was written: an earlier equal line
// would have the same key, be decided first and so be the kept one
// (--unit record without a window, the only runs that retract).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace bloomshard::app {

struct PartWithoutRetracted {
  /// Byte spans of the part to keep, in order: [first, second).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keep;
  std::uint64_t removed_lines = 0;
  std::uint64_t removed_bytes = 0;
  [[nodiscard]] std::uint64_t kept_bytes() const noexcept;
};

/// Called with each line of a part (terminator included), its offset in
/// the part and the absolute input offset it was read from; false stops.
using WrittenLineVisitor = std::function<bool(std::string_view line, std::uint64_t part_offset,
                                              std::uint64_t input_offset)>;

/// Walks the part's first `part_length` bytes beside the input range
/// [begin, end) (both memory-mapped, read once in order). Throws
/// std::runtime_error naming both files when a part line is not found.
void for_each_written_line(const std::filesystem::path& input, std::uint64_t begin,
                           std::uint64_t end, const std::filesystem::path& part,
                           std::uint64_t part_length, const WrittenLineVisitor& visit);

/// Plans the part (its first `part_length` bytes) without the lines of the
/// records at `retracted` (absolute offsets in `input`, ascending, inside
/// [begin, end)). Walks the input only up to the last retracted record.
/// Throws std::runtime_error naming the files
/// when a retracted offset is not the start of a line the part holds.
[[nodiscard]] PartWithoutRetracted plan_part_without_retracted(
    const std::filesystem::path& input, std::uint64_t begin, std::uint64_t end,
    const std::filesystem::path& part, std::uint64_t part_length,
    std::span<const std::uint64_t> retracted);

}  // namespace bloomshard::app
