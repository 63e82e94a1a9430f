// libFuzzer target: one JSONL or plain line through the key extractor (field
// paths, escapes, numbers, invalid UTF-8, deep nesting), then the key
// through every normalization policy. Checked beyond "no crash": a key is
// never longer than max_key_bytes, nfc and nfc-casefold/v2 are idempotent,
// and a key refused as invalid UTF-8 by one Unicode policy is refused by all.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bloomshard/core/normalize.hpp"
#include "bloomshard/io/key_extractor.hpp"

namespace {

using bloomshard::core::NormalizePolicy;
namespace io = bloomshard::io;

// Extractors are built once per configuration: building one per input would
// measure simdjson's allocations, not the parsing.
io::KeyExtractor& extractor(unsigned config) {
  static const char* const kPaths[] = {"id", "a.b", "id.x.y", "k"};
  static io::KeyExtractor* cache[16] = {};
  io::KeyExtractor*& x = cache[config & 15U];
  if (x == nullptr) {
    const io::Format format = (config & 8U) != 0 ? io::Format::kPlainLines : io::Format::kJsonLines;
    const std::size_t max_key = (config & 4U) != 0 ? 16 : io::kDefaultMaxKeyBytes;
    x = new io::KeyExtractor({format, kPaths[config & 3U], max_key, {}, false});
  }
  return *x;
}

void check_normalization(std::string_view key) {
  std::string a;
  std::string b;
  int invalid = 0;
  for (const NormalizePolicy p :
       {NormalizePolicy::kNfc, NormalizePolicy::kNfcCasefold, NormalizePolicy::kNfcCasefoldV1}) {
    try {
      const std::string once(bloomshard::core::normalize_key(p, key, a));
      if (p != NormalizePolicy::kNfcCasefoldV1 &&
          bloomshard::core::normalize_key(p, once, b) != once) {
        std::abort();  // not idempotent
      }
    } catch (const bloomshard::core::InvalidUtf8Error&) {
      ++invalid;
    }
  }
  if (invalid != 0 && invalid != 3) std::abort();  // policies disagree on validity
  if (bloomshard::core::normalize_key(NormalizePolicy::kNone, key, a).data() != key.data()) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  io::KeyExtractor& x = extractor(data[0]);
  const std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);
  const io::KeyResult r = x.extract(line);
  if (!r.ok()) return 0;
  if (r.key.size() > x.options().max_key_bytes) std::abort();
  check_normalization(r.key);
  return 0;
}
