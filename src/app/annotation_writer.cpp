#include "bloomshard/app/annotation_writer.hpp"

#include <limits>
#include <utility>

#include "bloomshard/io/reject_writer.hpp"

namespace bloomshard::app {
namespace {

io::KeyExtractor field_extractor(const char* name) {
  io::KeyExtractorOptions options;
  options.format = io::Format::kJsonLines;
  options.key_path = name;
  options.max_key_bytes = std::numeric_limits<std::size_t>::max();  // a whole document's text
  return io::KeyExtractor(std::move(options));
}

void append_json_string(std::string& out, std::string_view bytes) {
  out += '"';
  // Invalid UTF-8 (keys under --normalize none may be any bytes) becomes
  // U+FFFD: the line stays valid JSON; the reject file keeps the raw bytes.
  (void)io::append_json_string_contents(out, bytes);
  out += '"';
}

// Code points of valid UTF-8 (simdjson validated the line): every byte that
// is not a continuation byte starts one. Python's len(str) counts the same.
std::uint64_t code_points(std::string_view utf8) {
  std::uint64_t n = 0;
  for (const char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1U : 0U;
  return n;
}

}  // namespace

RoundAnnotations::RoundAnnotations(AnnotateFormat format, bool digest_keys)
    : format_(format),
      digest_keys_(digest_keys),
      id_field_(field_extractor("id")),
      text_field_(field_extractor("text")) {}

void RoundAnnotations::clear() noexcept {
  arena_.clear();
  entries_.clear();
}

void RoundAnnotations::append_key(std::span<const std::string_view> values) {
  if (values.size() == 1) {
    append_json_string(arena_, values.front());
    return;
  }
  arena_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) arena_ += ',';
    append_json_string(arena_, values[i]);
  }
  arena_ += ']';
}

void RoundAnnotations::append_dolma_id(io::Format format, std::string_view line) {
  arena_ += "{\"id\":";
  const io::FieldsResult id =
      format == io::Format::kJsonLines ? id_field_.extract_fields(line) : io::FieldsResult{};
  if (format == io::Format::kJsonLines && id.ok()) {
    append_json_string(arena_, id.values.front());  // an integer id: its decimal text
  } else {
    arena_ += "null";
  }
  arena_ += ",\"attributes\":{\"";
  arena_ += kDolmaDuplicateAttribute;
  arena_ += "\":";
}

std::uint64_t RoundAnnotations::dolma_text_chars(io::Format format, std::string_view line) {
  // Plain-line files have no "text" field: the span covers the line.
  if (format != io::Format::kJsonLines) return code_points(line);
  const io::FieldsResult text = text_field_.extract_fields(line);
  return text.ok() ? code_points(text.values.front()) : 0;
}

void RoundAnnotations::add_record(std::uint32_t file_slot, io::Format format, std::string_view line,
                                  std::span<const std::string_view> values, std::string_view key) {
  Entry e{file_slot, false, arena_.size(), 0, 0};
  if (format_ == AnnotateFormat::kDolma) {
    append_dolma_id(format, line);
    e.text_chars = dolma_text_chars(format, line);
  } else {
    arena_ += "{\"key\":";
    append_key(values);
    if (digest_keys_) {
      static constexpr char kHex[] = "0123456789abcdef";
      arena_ += ",\"key_digest\":\"";
      for (const char c : key) {
        arena_ += kHex[(static_cast<unsigned char>(c) >> 4U) & 0xFU];
        arena_ += kHex[static_cast<unsigned char>(c) & 0xFU];
      }
      arena_ += '"';
    }
    arena_ += ",\"duplicate\":";
  }
  e.end = arena_.size();
  entries_.push_back(e);
}

void RoundAnnotations::add_reject(std::uint32_t file_slot, io::Format format, std::string_view line,
                                  std::optional<std::span<const std::string_view>> values,
                                  std::string_view reason) {
  Entry e{file_slot, true, arena_.size(), 0, 0};
  if (format_ == AnnotateFormat::kDolma) {
    append_dolma_id(format, line);
    arena_ += "[]}";
  } else {
    arena_ += "{\"key\":";
    if (values) {
      append_key(*values);
    } else {
      arena_ += "null";
    }
    arena_ += ",\"duplicate\":false";
  }
  arena_ += ",\"reject\":";
  append_json_string(arena_, reason);
  arena_ += "}\n";
  e.end = arena_.size();
  entries_.push_back(e);
}

std::uint64_t RoundAnnotations::write(std::span<const core::Verdict> verdicts,
                                      std::span<io::OutputWriter> outputs) {
  std::uint64_t bytes = 0;
  std::size_t next_verdict = 0;
  std::string tail;
  for (const Entry& e : entries_) {
    io::OutputWriter& out = outputs[e.file_slot];
    const std::string_view head(arena_.data() + e.begin, e.end - e.begin);
    out.write_bytes(head);
    bytes += head.size();
    if (e.reject) continue;
    const bool duplicate = !core::is_kept(verdicts[next_verdict++]);
    if (format_ == AnnotateFormat::kDolma) {
      tail = duplicate ? "[[0," + std::to_string(e.text_chars) + ",1.0]]}}\n" : "[]}}\n";
    } else {
      tail = duplicate ? "true}\n" : "false}\n";
    }
    out.write_bytes(tail);
    bytes += tail.size();
  }
  clear();
  return bytes;
}

}  // namespace bloomshard::app
