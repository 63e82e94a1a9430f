// libFuzzer target: one JSONL or plain line through the key extractor (field
// paths, escapes, numbers, invalid UTF-8, deep nesting), then the key
// through every normalization policy. Checked beyond "no crash": a key is
// never longer than max_key_bytes, nfc and nfc-casefold/v2 are idempotent,
// a key refused as invalid UTF-8 by one Unicode policy is refused by all,
// and the long-line path (long strings taken out before parsing, forced on
// for every line) gives the whole-line path's key or reject reason.
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
io::KeyExtractor& extractor(unsigned config, bool long_path = false) {
  static const char* const kPaths[] = {"id", "a.b", "id.x.y", "k"};
  static io::KeyExtractor* cache[2][16] = {};
  io::KeyExtractor*& x = cache[long_path ? 1 : 0][config & 15U];
  if (x == nullptr) {
    const io::Format format = (config & 8U) != 0 ? io::Format::kPlainLines : io::Format::kJsonLines;
    const std::size_t max_key = (config & 4U) != 0 ? 16 : io::kDefaultMaxKeyBytes;
    io::KeyExtractorOptions o{format, kPaths[config & 3U], max_key, {}, false};
    if (long_path) o.long_line_bytes = 0;
    x = new io::KeyExtractor(o);
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
  const io::KeyResult l = extractor(data[0], true).extract(line);
  if (l.reject_reason != r.reject_reason || l.key != r.key) std::abort();  // the paths disagree
  if (!r.ok()) return 0;
  if (r.key.size() > x.options().max_key_bytes) std::abort();
  check_normalization(r.key);
  return 0;
}
