// The order tag of a paragraph under --kept-copy first --unit paragraph
// (docs/keys.md "Which record keeps a paragraph"): the one order of all
// inputs, records by position, a record's paragraphs in text order.
//
// A paragraph's tag is its record's tag plus the paragraph's index in the
// text. That is order-preserving and unique because the index is below the
// record's line length (its bytes without the terminator), and the next
// record starts after the line and its terminator: every paragraph of a
// record at offset o of length L lies in [o, o + L), before the next
// record's tags. The index is below L because a JSONL line holds each
// paragraph separator of its text as at least two bytes (`\n` escaped; a
// raw newline cannot sit in a line) plus the field's quotes, and a
// plain-line record is one paragraph (a line holds no newline). Pure.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/order/file_order.hpp"

namespace bloomshard::core {

/// The tag of paragraph `index` of a record tagged `record_tag` whose line
/// (without terminator) is `line_bytes` long: record_tag + index, or 0
/// (untagged: it keeps the arrival order, as a record past the tag's
/// limits does) when record_tag is 0, when index >= line_bytes (the tags
/// of two records could meet), or when the offset would pass
/// kOrderMaxOffset (into the input's bits).
[[nodiscard]] constexpr OrderTag paragraph_order_tag(OrderTag record_tag, std::size_t index,
                                                     std::size_t line_bytes) noexcept {
  if (record_tag == 0 || index >= line_bytes) return 0;
  if (index > kOrderMaxOffset - order_offset(record_tag)) return 0;
  return record_tag + index;
}

}  // namespace bloomshard::core
