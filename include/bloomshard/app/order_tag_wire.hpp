// Order tags on the wire (issue 12, core/file_order.hpp): while a run has
// split inputs, each routed key carries its 8-byte order tag after its bytes,
// so that the owner can keep the first copy in file order. The router moves
// the longer key as it is (its hash, which picks the owner, is the key's);
// two copies of a key from one split input differ in their tags, so the
// sender does not combine them and both reach the owner, which decides them
// in order. Copies with tag 0 (other inputs) still combine. Cost: 8 bytes
// per key on the wire and one copy of every key into the send buffer.
#pragma once

#include <span>
#include <vector>

#include "bloomshard/core/file_order.hpp"
#include "bloomshard/core/two_tier.hpp"

namespace bloomshard::app {

/// Bytes a tag adds to a key on the wire.
inline constexpr std::size_t kOrderTagWireBytes = sizeof(core::OrderTag);

/// Writes keys[i] followed by tags[i] (host byte order: every rank of a job
/// runs the same build) into `buffer` and points out[i] at it, same hash.
/// Throws std::invalid_argument unless tags.size() == keys.size().
void append_order_tags(std::span<const core::KeyRef> keys, std::span<const core::OrderTag> tags,
                       std::vector<char>& buffer, std::vector<core::KeyRef>& out);

/// The inverse at the owner: keys without their last 8 bytes, and those
/// bytes as tags. Throws std::invalid_argument for a key shorter than a tag.
void split_order_tags(std::span<const core::KeyRef> wire, std::vector<core::KeyRef>& keys,
                      std::vector<core::OrderTag>& tags);

}  // namespace bloomshard::app
