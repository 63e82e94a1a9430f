// libFuzzer target: one JSONL or plain line through the key extractor (field
// paths, escapes, numbers, invalid UTF-8, deep nesting), then the key
// through every normalization policy. Checked beyond "no crash": a key is
// never longer than max_key_bytes, nfc and nfc-casefold/v2 are idempotent,
// a key refused as invalid UTF-8 by one Unicode policy is refused by all,
// the long-line path (long strings taken out before parsing, forced on
// for every line) gives the whole-line path's key or reject reason, and
// the many-lines path (the input cut into lines at '\n', laid out
// back to back as the reader buffers them, through extract_lines) gives
// every line exactly what extract_fields gives it alone.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/normalize.hpp"
#include "io/records/key_extractor.hpp"
#include "io/records/record_reader.hpp"

namespace {

using bloomshard::core::NormalizePolicy;
namespace io = bloomshard::io;

// Extractors are built once per configuration: building one per input would
// measure simdjson's allocations, not the parsing. `copy` 2 is a second
// extractor of the same configuration (the many-lines path's).
io::KeyExtractor& extractor(unsigned config, bool long_path = false, int copy = 0) {
  static const char* const kPaths[] = {"id", "a.b", "id.x.y", "k"};
  static io::KeyExtractor* cache[3][16] = {};
  io::KeyExtractor*& x = cache[long_path ? 1 : copy][config & 15U];
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

// One line's answer, owned.
struct Answer {
  std::string reason;
  std::vector<std::string> values;
  friend bool operator==(const Answer&, const Answer&) = default;
};

Answer own(const io::FieldsResult& r) {
  Answer a{std::string(r.reject_reason), {}};
  if (r.ok()) a.values.assign(r.values.begin(), r.values.end());
  return a;
}

// The lines of `text` (each ended by "\n", a '\r' before it belonging to
// the terminator; a last piece without newline is not peeked by the
// reader, so not here either), padded as the reader pads its buffer.
void check_lines(unsigned config, std::string_view text) {
  std::string buf(text);
  buf.append(io::kLinePaddingBytes, '\0');
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0;;) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    const std::size_t end = nl > pos && text[nl - 1] == '\r' ? nl - 1 : nl;
    lines.emplace_back(buf.data() + pos, end - pos);
    pos = nl + 1;
  }
  if (lines.empty()) return;
  std::vector<Answer> got;
  extractor(config, false, 2).extract_lines(lines, [&](std::size_t i, const io::FieldsResult& r) {
    if (i != got.size()) std::abort();  // out of order
    got.push_back(own(r));
    return true;
  });
  if (got.size() != lines.size()) std::abort();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (own(extractor(config).extract_fields(lines[i])) != got[i]) std::abort();  // paths disagree
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  io::KeyExtractor& x = extractor(data[0]);
  const std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);
  check_lines(data[0], line);  // first: it reuses the extractors below
  const io::KeyResult r = x.extract(line);
  const io::KeyResult l = extractor(data[0], true).extract(line);
  if (l.reject_reason != r.reject_reason || l.key != r.key) std::abort();  // the paths disagree
  if (!r.ok()) return 0;
  if (r.key.size() > x.options().max_key_bytes) std::abort();
  check_normalization(r.key);
  return 0;
}
