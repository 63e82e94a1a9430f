#include "bloomshard/app/order_tag_wire.hpp"

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
