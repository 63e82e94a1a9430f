#include "app/split/order_tag_wire.hpp"

#include <cstring>
#include <stdexcept>

namespace bloomshard::app {

void append_order_tags(std::span<const core::KeyRef> keys, std::span<const core::OrderTag> tags,
                       std::vector<char>& buffer, std::vector<core::KeyRef>& out) {
  if (tags.size() != keys.size()) {
    throw std::invalid_argument("append_order_tags: " + std::to_string(keys.size()) + " keys but " +
                                std::to_string(tags.size()) + " tags");
  }
  std::size_t total = 0;
  for (const core::KeyRef& k : keys) total += k.bytes.size() + kOrderTagWireBytes;
  buffer.resize(total);  // sized first: the views below must not move
  out.resize(keys.size());
  char* at = buffer.data();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string_view bytes = keys[i].bytes;
    if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
    std::memcpy(at + bytes.size(), &tags[i], kOrderTagWireBytes);
    out[i] = {keys[i].hash, std::string_view(at, bytes.size() + kOrderTagWireBytes)};
    at += bytes.size() + kOrderTagWireBytes;
  }
}

std::size_t combine_in_file_order(std::span<const core::KeyRef> keys,
                                  std::span<const core::OrderTag> tags, CombineScratch& scratch,
                                  std::vector<std::uint32_t>& routed) {
  if (tags.size() != keys.size()) {
    throw std::invalid_argument("combine_in_file_order: " + std::to_string(keys.size()) +
                                " keys but " + std::to_string(tags.size()) + " tags");
  }
  routed.clear();
  CombineScratch& s = scratch;
  s.stays_home.assign(keys.size(), 0);
  s.pending.resize(keys.size());
  for (std::uint32_t i = 0; i < keys.size(); ++i) s.pending[i] = i;
  std::size_t home = 0;
  // Each pass settles, for every key repeated among the pending copies, the
  // copies of one input (the input of the pass's first pending copy): the
  // earliest of them in the file travels, the rest stay home. Tagged copies
  // of other inputs wait for the next pass; untagged copies travel (the
  // router combines those). A pass removes each group's first copy, so the
  // passes end, after at most one pass per input of a repeated key.
  while (!s.pending.empty()) {
    s.pending_keys.resize(s.pending.size());
    for (std::size_t j = 0; j < s.pending.size(); ++j) s.pending_keys[j] = keys[s.pending[j]];
    if (s.finder.find(s.pending_keys, s.first_of) == s.pending.size()) break;
    s.best.resize(s.pending.size());  // per first copy: its input's earliest copy so far
    s.next.clear();
    for (std::size_t j = 0; j < s.pending.size(); ++j) {
      const std::uint32_t first = s.first_of[j];
      if (first == j) {
        s.best[j] = s.pending[j];
        continue;
      }
      const std::uint32_t i = s.pending[j];
      const core::OrderTag lead = tags[s.best[first]];
      const core::OrderTag mine = tags[i];
      if (mine == 0) continue;  // untagged: travels
      if (lead == 0 || core::order_input(lead) != core::order_input(mine)) {
        s.next.push_back(i);  // another input's copy: next pass
        continue;
      }
      ++home;
      if (core::order_offset(mine) < core::order_offset(lead)) {
        s.stays_home[s.best[first]] = 1;
        s.best[first] = i;
      } else {
        s.stays_home[i] = 1;
      }
    }
    s.pending.swap(s.next);
  }
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    if (s.stays_home[i] == 0) routed.push_back(i);
  }
  return home;
}

void split_order_tags(std::span<const core::KeyRef> wire, std::vector<core::KeyRef>& keys,
                      std::vector<core::OrderTag>& tags) {
  keys.resize(wire.size());
  tags.resize(wire.size());
  for (std::size_t i = 0; i < wire.size(); ++i) {
    const std::string_view bytes = wire[i].bytes;
    if (bytes.size() < kOrderTagWireBytes) {
      throw std::invalid_argument("split_order_tags: a routed key of " +
                                  std::to_string(bytes.size()) + " bytes has no order tag");
    }
    const std::size_t n = bytes.size() - kOrderTagWireBytes;
    std::memcpy(&tags[i], bytes.data() + n, kOrderTagWireBytes);
    keys[i] = {wire[i].hash, bytes.substr(0, n)};
  }
}

}  // namespace bloomshard::app
