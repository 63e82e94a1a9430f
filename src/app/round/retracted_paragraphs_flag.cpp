// Annotate mode's writer of the paragraph end pass (retracted_paragraphs.hpp
// flag_retracted_paragraphs): the attribute file walked beside its input,
// each retracted paragraph added to its record's duplicate spans.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/feed/annotation_writer.hpp"
#include "app/round/paragraph_recut_file.hpp"
#include "app/round/record_paragraph_cut.hpp"
#include "app/round/retracted_paragraphs.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

// The [a, b] (bloomshard) or [a, b, 1.0] (dolma) pairs of an attribute
// line's span list starting at `at` (its '['); nullopt when it is not one.
std::optional<std::vector<std::pair<std::uint64_t, std::uint64_t>>> listed_spans(std::string_view s,
                                                                                 std::size_t at) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  const auto number = [&](std::uint64_t& v) {
    const std::size_t from = at;
    v = 0;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(s[at++] - '0');
    }
    return at > from;
  };
  if (at >= s.size() || s[at++] != '[') return std::nullopt;
  while (at < s.size() && s[at] == '[') {
    ++at;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    if (!number(a) || at >= s.size() || s[at++] != ',' || !number(b)) return std::nullopt;
    if (s.substr(at).starts_with(",1.0")) at += 4;
    if (at >= s.size() || s[at++] != ']') return std::nullopt;
    out.emplace_back(a, b);
    if (at < s.size() && s[at] == ',') ++at;
  }
  if (at >= s.size() || s[at] != ']') return std::nullopt;
  return out;
}

}  // namespace

ParagraphRecut flag_retracted_paragraphs(const io::InputFile& input,
                                         const std::filesystem::path& output,
                                         std::span<const RetractedLine> retracted,
                                         const ParagraphTextOf& text_of, const core::KeyScheme& key,
                                         std::uint64_t hash_seed, AnnotateFormat format,
                                         std::uint64_t max_line_bytes,
                                         const io::OutputOptions& options, bool durable) {
  const io::ReaderOptions read{.max_line_bytes = static_cast<std::size_t>(max_line_bytes),
                               .prefix_digest = false};
  io::RecordReader in(read);
  in.open(input);
  // The attribute file read as an input of the same kind. An attribute line
  // may be longer than its record (dolma's spans): the limit of
  // retracted_annotations.cpp.
  io::RecordReader out(
      io::ReaderOptions{.max_line_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(
                            std::uint64_t{1} << 40, max_line_bytes * 8 + 4096)),
                        .prefix_digest = false});
  out.open(output_as_input(input, output));
  const bool json = input.format == io::Format::kJsonLines;
  const bool dolma = format == AnnotateFormat::kDolma;
  const std::string marker =
      dolma ? "\"" + std::string(kDolmaDuplicateAttribute) + "\":" : std::string("{\"duplicate\":");
  return write_recut_temp(
      output, input.compression, options, durable, [&](io::OutputWriter& writer) {
        RecordParagraphCut cut(key, hash_seed);
        ParagraphRecut done;
        std::size_t k = 0;
        io::Record r;
        io::Record o;
        std::string tail;
        // Line n of the attribute file is about line n of the input.
        while (k < retracted.size() && in.next(r)) {
          if (!out.next(o))
            fail_retraction(output, input, retracted[k].input_offset,
                            "lies past the attribute file's end");
          const std::uint64_t start = r.end_offset - r.line.size() - r.terminator.size();
          if (retracted[k].input_offset < start) {
            fail_retraction(output, input, retracted[k].input_offset,
                            "starts no paragraph of a record");
          }
          if (retracted[k].input_offset >= start + r.line.size()) {
            writer.write(o.line, o.terminator);
            continue;
          }
          std::optional<std::string> text;
          if (!r.too_long) text = text_of(r.line);
          if (!text || !cut.load(r.line, std::move(*text), json)) {
            fail_retraction(output, input, retracted[k].input_offset, "lies in a rejected record");
          }
          const std::size_t head = o.line.rfind(marker);
          const std::size_t list =
              head == std::string_view::npos
                  ? head
                  : (dolma ? head + marker.size() : o.line.find("\"duplicate_spans\":", head));
          const auto listed =
              list == std::string_view::npos
                  ? std::nullopt
                  : listed_spans(
                        o.line,
                        dolma ? list : list + std::string_view("\"duplicate_spans\":").size());
          if (!listed || !cut.flag_listed(*listed, dolma)) {
            fail_retraction(output, input, retracted[k].input_offset,
                            "is in a record whose attribute line does not list its paragraphs");
          }
          const core::ParagraphRemoval before = cut.removal();
          const bool dropped_before = cut.dropped();
          for (; k < retracted.size() && retracted[k].input_offset < start + r.line.size(); ++k) {
            const std::uint64_t p = retracted[k].input_offset - start;
            if (!cut.holds(p, retracted[k].hash)) {
              fail_retraction(output, input, retracted[k].input_offset,
                              "is no keyed paragraph of that key");
            }
            if (cut.duplicate(p))
              fail_retraction(output, input, retracted[k].input_offset, "was cut already");
            cut.cut(p);
          }
          tail.assign(o.line.substr(0, head + marker.size()));
          const ParagraphDecision d = cut.decision();
          append_paragraph_annotation(format, d, tail);
          writer.write_bytes(tail);
          ++done.lines_changed;
          done.bytes_removed += o.line.size() + o.terminator.size() - tail.size();  // modulo 2^64
          // The counters are filter mode's: a dropped record counts in
          // records_dropped only, a cut one in the others.
          const auto counted = [&](const core::ParagraphRemoval& rm, bool drop, std::int64_t sign) {
            if (rm.paragraphs_removed == 0) return;
            if (drop) {
              done.lines_dropped += static_cast<std::uint64_t>(sign);
              return;
            }
            done.records_changed += sign;
            done.paragraphs_removed += sign * static_cast<std::int64_t>(rm.paragraphs_removed);
            done.text_bytes_removed += sign * static_cast<std::int64_t>(rm.bytes_removed);
          };
          counted(before, dropped_before, -1);
          counted(cut.removal(), d.dropped, 1);
        }
        if (k < retracted.size()) {
          fail_retraction(output, input, retracted[k].input_offset,
                          "lies past the input's last record");
        }
        while (out.next(o)) writer.write(o.line, o.terminator);
        return done;
      });
}

}  // namespace bloomshard::app
