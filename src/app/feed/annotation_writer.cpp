#include "app/feed/annotation_writer.hpp"

#include <charconv>
#include <limits>
#include <system_error>
#include <utility>

#include "core/order/file_order.hpp"
#include "io/output/json_escape.hpp"

namespace bloomshard::app {
namespace {

io::KeyExtractor field_extractor(const char* name) {
  io::KeyExtractorOptions options;
  options.format = io::Format::kJsonLines;
  options.key_path = name;
  options.max_key_bytes = std::numeric_limits<std::size_t>::max();  // a whole document's text
  return io::KeyExtractor(std::move(options));
}

// Code points of valid UTF-8 (simdjson validated the line): every byte that
// is not a continuation byte starts one. Python's len(str) counts the same.
std::uint64_t code_points(std::string_view utf8) {
  std::uint64_t n = 0;
  for (const char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1U : 0U;
  return n;
}

// Dolma's span length of a record: the code points of its "text" field, of
// the whole line for plain-line files (they have no fields), 0 without one.
std::uint64_t text_code_points(io::KeyExtractor& text_field, io::Format format,
                               std::string_view line) {
  if (format != io::Format::kJsonLines) return code_points(line);
  const io::FieldsResult text = text_field.extract_fields(line);
  return text.ok() ? code_points(text.values.front()) : 0;
}

// What ends a record's attribute line, kept or duplicate, without "\n"
// (RoundAnnotations::write; a reject's line ends with its reason instead).
constexpr std::string_view kKeptTail = "\"duplicate\":false}";
constexpr std::string_view kDuplicateTail = "\"duplicate\":true}";
constexpr std::string_view kDolmaKeptSpan = "[]}}";
constexpr std::string_view kDolmaKeptTail = "\"bloomshard_duplicate\":[]}}";

std::string dolma_duplicate_span(std::uint64_t chars) {
  return "[[0," + std::to_string(chars) + ",1.0]]}}";
}

// The shortest decimal text that reads back as `v` (as Python's repr).
std::string shortest(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("null");
}

// `name` as one Dolma attribute of one span over the whole text, or none.
void append_dolma_span(std::string& out, std::string_view name, std::uint64_t chars,
                       const std::string* score) {
  out += ",\"";
  out += name;
  out += "\":";
  out += score == nullptr ? "[]" : "[[0," + std::to_string(chars) + "," + *score + "]]";
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

// Invalid UTF-8 in a key (keys under --normalize none may be any bytes)
// becomes U+FFFD: the line stays valid JSON; the reject file keeps the raw
// bytes.
void RoundAnnotations::append_key(std::span<const std::string_view> values) {
  if (values.size() == 1) {
    io::append_json_string(arena_, values.front());
    return;
  }
  arena_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) arena_ += ',';
    io::append_json_string(arena_, values[i]);
  }
  arena_ += ']';
}

void RoundAnnotations::append_dolma_id(io::Format format, std::string_view line) {
  arena_ += "{\"id\":";
  const io::FieldsResult id =
      format == io::Format::kJsonLines ? id_field_.extract_fields(line) : io::FieldsResult{};
  if (format == io::Format::kJsonLines && id.ok()) {
    io::append_json_string(arena_, id.values.front());  // an integer id: its decimal text
  } else {
    arena_ += "null";
  }
  arena_ += ",\"attributes\":{\"";
  arena_ += kDolmaDuplicateAttribute;
  arena_ += "\":";
}

std::uint64_t RoundAnnotations::dolma_text_chars(io::Format format, std::string_view line) {
  return text_code_points(text_field_, format, line);
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

void RoundAnnotations::add_minhash_record(std::uint32_t file_slot, io::Format format,
                                          std::string_view line) {
  Entry e{file_slot, false, arena_.size(), 0, 0};
  if (format_ == AnnotateFormat::kDolma) {
    append_dolma_id(format, line);
    e.text_chars = dolma_text_chars(format, line);
  } else {
    arena_ += "{\"duplicate\":";
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
  io::append_json_string(arena_, reason);
  arena_ += "}\n";
  e.end = arena_.size();
  entries_.push_back(e);
}

void RoundAnnotations::add_paragraph_record(std::uint32_t file_slot, io::Format format,
                                            std::string_view line) {
  Entry e{file_slot, false, arena_.size(), 0, 0};
  if (format_ == AnnotateFormat::kDolma) {
    append_dolma_id(format, line);
  } else {
    arena_ += "{\"duplicate\":";
  }
  e.end = arena_.size();
  entries_.push_back(e);
}

std::uint64_t RoundAnnotations::write_entries(
    const std::function<void(std::size_t, std::string&)>& tail,
    std::span<io::OutputWriter> outputs) {
  std::uint64_t bytes = 0;
  std::size_t record = 0;
  std::string end;
  for (const Entry& e : entries_) {
    io::OutputWriter& out = outputs[e.file_slot];
    const std::string_view head(arena_.data() + e.begin, e.end - e.begin);
    out.write_bytes(head);
    bytes += head.size();
    if (e.reject) continue;
    end.clear();
    tail(record++, end);
    out.write_bytes(end);
    bytes += end.size();
  }
  clear();
  return bytes;
}

std::uint64_t RoundAnnotations::write(std::span<const core::Verdict> verdicts,
                                      std::span<io::OutputWriter> outputs) {
  std::vector<std::uint64_t> chars;  // dolma: each record's text length
  for (const Entry& e : entries_) {
    if (!e.reject) chars.push_back(e.text_chars);
  }
  return write_entries(
      [&](std::size_t i, std::string& tail) {
        const bool duplicate = !core::is_kept(verdicts[i]);
        if (format_ == AnnotateFormat::kDolma) {
          tail = duplicate ? dolma_duplicate_span(chars[i]) : std::string(kDolmaKeptSpan);
        } else {
          tail = duplicate ? "true}" : "false}";
        }
        tail += '\n';
      },
      outputs);
}

std::uint64_t RoundAnnotations::write_near_matches(
    std::span<const std::optional<NearMatch>> matches, std::span<io::OutputWriter> outputs) {
  std::vector<std::uint64_t> chars;  // dolma: each record's text length
  for (const Entry& e : entries_) {
    if (!e.reject) chars.push_back(e.text_chars);
  }
  return write_entries(
      [&](std::size_t i, std::string& tail) {
        const std::optional<NearMatch>& m = matches[i];
        const bool known = m && m->position != 0;
        const std::string similarity = m ? shortest(m->similarity) : "";
        const std::string input = known ? std::to_string(core::order_input(m->position)) : "null";
        const std::string offset = known ? std::to_string(core::order_offset(m->position)) : "null";
        const std::string run = known ? std::to_string(m->run) : "null";
        if (format_ == AnnotateFormat::kDolma) {
          tail = m ? "[[0," + std::to_string(chars[i]) + ",1.0]]" : "[]";
          append_dolma_span(tail, kDolmaSimilarityAttribute, chars[i], m ? &similarity : nullptr);
          append_dolma_span(tail, kDolmaMatchInputAttribute, chars[i], known ? &input : nullptr);
          append_dolma_span(tail, kDolmaMatchOffsetAttribute, chars[i], known ? &offset : nullptr);
          append_dolma_span(tail, kDolmaMatchRunAttribute, chars[i], known ? &run : nullptr);
          tail += "}}\n";
          return;
        }
        if (!m) {
          tail = "false}\n";
          return;
        }
        tail = "true,\"similarity\":" + similarity + ",\"match\":";
        tail += known ? "{\"run\":" + run + ",\"input\":" + input + ",\"offset\":" + offset + "}"
                      : "null";
        tail += "}\n";
      },
      outputs);
}

void append_paragraph_annotation(AnnotateFormat format, const ParagraphDecision& d,
                                 std::string& tail) {
  if (format == AnnotateFormat::kDolma) {
    // Character offsets of each cut, counted in one pass over the text.
    tail += '[';
    std::size_t at = 0;
    std::uint64_t chars = 0;
    const auto chars_to = [&](std::size_t byte) {
      chars += code_points(d.text.substr(at, byte - at));
      at = byte;
      return chars;
    };
    for (std::size_t k = 0; k < d.duplicates.size(); ++k) {
      if (k != 0) tail += ',';
      tail += '[';
      tail += std::to_string(chars_to(d.duplicates[k].start));
      tail += ',';
      tail += std::to_string(chars_to(d.duplicates[k].cut_end));
      tail += ",1.0]";
    }
    tail += "]}}\n";
    return;
  }
  tail += d.dropped ? "true" : "false";
  tail += ",\"paragraphs\":";
  tail += std::to_string(d.paragraphs);
  tail += ",\"duplicate_spans\":[";
  for (std::size_t k = 0; k < d.duplicates.size(); ++k) {
    if (k != 0) tail += ',';
    tail += '[';
    tail += std::to_string(d.duplicates[k].start);
    tail += ',';
    tail += std::to_string(d.duplicates[k].end);
    tail += ']';
  }
  tail += "]}\n";
}

std::uint64_t RoundAnnotations::write_paragraphs(
    const std::function<ParagraphDecision(std::size_t)>& decide,
    std::span<io::OutputWriter> outputs) {
  return write_entries(
      [&](std::size_t i, std::string& tail) {
        append_paragraph_annotation(format_, decide(i), tail);
      },
      outputs);
}

DuplicateFlag::DuplicateFlag(AnnotateFormat format)
    : format_(format), text_field_(field_extractor("text")) {}

std::optional<std::string> DuplicateFlag::flag(std::string_view kept_line, io::Format format,
                                               std::string_view record_line) {
  if (format_ == AnnotateFormat::kDolma) {
    if (!kept_line.ends_with(kDolmaKeptTail)) return std::nullopt;
    std::string out(kept_line.substr(0, kept_line.size() - kDolmaKeptSpan.size()));
    out += dolma_duplicate_span(text_code_points(text_field_, format, record_line));
    return out;
  }
  if (!kept_line.ends_with(kKeptTail)) return std::nullopt;
  std::string out(kept_line.substr(0, kept_line.size() - kKeptTail.size()));
  out += kDuplicateTail;
  return out;
}

}  // namespace bloomshard::app
