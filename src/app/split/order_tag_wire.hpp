// Order tags on the wire (core/order/file_order.hpp): while a run has
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

#include "bloomshard/core/two_tier.hpp"
#include "core/order/file_order.hpp"
#include "core/order/first_occurrence.hpp"

namespace bloomshard::app {

/// Bytes a tag adds to a key on the wire.
inline constexpr std::size_t kOrderTagWireBytes = sizeof(core::OrderTag);

/// Writes keys[i] followed by tags[i] (host byte order: every rank of a job
/// runs the same build) into `buffer` and points out[i] at it, same hash.
/// Throws std::invalid_argument unless tags.size() == keys.size().
void append_order_tags(std::span<const core::KeyRef> keys, std::span<const core::OrderTag> tags,
                       std::vector<char>& buffer, std::vector<core::KeyRef>& out);

/// Scratch of combine_in_file_order(), reused across rounds.
struct CombineScratch {
  core::FirstOccurrenceFinder finder;
  std::vector<std::uint32_t> first_of;
  std::vector<std::uint32_t> pending;
  std::vector<std::uint32_t> next;
  std::vector<std::uint32_t> best;
  std::vector<core::KeyRef> pending_keys;
  std::vector<char> stays_home;
};

/// Sender-side combining for tagged keys, which the router cannot do (the
/// tags of two copies differ): of the copies of a key in the batch that
/// come from one split input, only the earliest in the file can be the
/// kept copy (a one-reader run decides it before the others, and so does
/// its owner here), so it alone travels and the others stay home as
/// duplicates. A hot key of a big file then costs one copy per input per
/// batch, and the router's first-occurrence table never sees many keys
/// with one hash and different bytes (its probe runs would grow with their
/// number). Untagged keys all travel; the router combines them. Writes the
/// indexes of the keys to route, ascending, into `routed` and returns how
/// many stayed home. Cost: one first-occurrence pass over the batch, and
/// one more over the copies of the batch's repeated keys per further input
/// that holds them.
std::size_t combine_in_file_order(std::span<const core::KeyRef> keys,
                                  std::span<const core::OrderTag> tags, CombineScratch& scratch,
                                  std::vector<std::uint32_t>& routed);

/// The inverse at the owner: keys without their last 8 bytes, and those
/// bytes as tags. Throws std::invalid_argument for a key shorter than a tag.
void split_order_tags(std::span<const core::KeyRef> wire, std::vector<core::KeyRef>& keys,
                      std::vector<core::OrderTag>& tags);

}  // namespace bloomshard::app
