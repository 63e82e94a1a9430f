#include "app/round/retracted_paragraphs.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "app/feed/annotation_writer.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "core/paragraph/paragraph_keyer.hpp"
#include "core/paragraph/paragraph_removal.hpp"
#include "io/records/json_field_token.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

// One accepted input record split into its paragraphs, and what a line
// written for it holds.
class RecordCut {
 public:
  RecordCut(const core::KeyScheme& key, std::uint64_t seed)
      : key_(key), seed_(seed), keyer_(key), out_keyer_(key), field_(key.fields.front()) {}

  // Splits and keys `text` of `line`; false for a record the run rejects
  // at this step (a JSONL field that is not a string, invalid UTF-8 under
  // a policy that needs UTF-8).
  bool load(std::string_view line, std::string text, bool json) {
    line_ = line;
    json_ = json;
    text_ = std::move(text);
    if (json) {
      const std::optional<io::TokenSpan> token = field_.find_string(line);
      if (!token) return false;
      token_ = *token;
    }
    try {
      keyer_.key_text(text_);
    } catch (const core::InvalidUtf8Error&) {
      return false;
    }
    // The first copy of each key in the record: one sort of (hash, index),
    // not a search per paragraph (a long document has thousands).
    const std::size_t n = keyer_.spans().size();
    hashes_.assign(n, {});
    first_.assign(n, false);
    order_.clear();
    for (std::size_t p = 0; p < n; ++p) {
      if (!keyer_.keyed()[p]) continue;
      hashes_[p] = core::hash_key(keyer_.key(p), seed_);
      order_.push_back(p);
    }
    std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(hashes_[a].hi, hashes_[a].lo, a) < std::tie(hashes_[b].hi, hashes_[b].lo, b);
    });
    for (std::size_t j = 0; j < order_.size(); ++j) {
      first_[order_[j]] = j == 0 || !(hashes_[order_[j - 1]] == hashes_[order_[j]]);
    }
    return true;
  }

  // The duplicate flags of a line written for this record whose text is
  // `written_text`: a keyed paragraph was kept iff it is the first copy of
  // its key in the record and the written text holds that key.
  void derive(std::string_view written_text) {
    out_keyer_.key_text(written_text);  // valid UTF-8: the run wrote it
    kept_.clear();
    for (std::size_t p = 0; p < out_keyer_.spans().size(); ++p) {
      if (!out_keyer_.keyed()[p]) continue;
      const core::KeyHash h = core::hash_key(out_keyer_.key(p), seed_);
      kept_.emplace_back(h.hi, h.lo);
    }
    std::sort(kept_.begin(), kept_.end());
    clear_flags();
    for (std::size_t p = 0; p < paragraphs(); ++p) {
      if (!keyer_.keyed()[p]) continue;
      dup_[p] = !first_[p] || !std::binary_search(kept_.begin(), kept_.end(),
                                                  std::pair(hashes_[p].hi, hashes_[p].lo));
    }
  }

  // The record's line with dup_'s paragraphs cut (written as
  // ParagraphRecords::write writes it), or nullopt when dropped.
  std::optional<std::string_view> line() {
    const std::span<const bool> dup(dup_.get(), paragraphs());
    const core::ParagraphRemoval r = core::measure_removal(text_.size(), keyer_.spans(), dup);
    removal_ = r;
    if (r.paragraphs_removed == 0) return line_;
    if (core::drop_for_removed_fraction(r.removed_fraction, key_.drop_if_removed_fraction)) {
      return std::nullopt;
    }
    const std::string_view kept = core::remove_paragraphs(text_, keyer_.spans(), dup, text_out_);
    if (!json_) return kept;
    return io::replace_string_token(line_, token_, kept, line_out_);
  }

  // The duplicate flags an attribute line lists (annotate mode): `spans`
  // are its [start, end) pairs (bloomshard: bytes of the paragraphs; dolma:
  // code points of the cuts). False when one names no paragraph.
  bool flag_listed(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& listed, bool dolma) {
    clear_flags();
    // Each paragraph's listed form: bloomshard its bytes [start, end),
    // dolma its cut's code points [start, cut_end), counted in one pass.
    forms_.clear();
    std::uint64_t chars = 0;
    std::size_t at = 0;
    const auto chars_to = [&](std::size_t byte) {
      for (; at < byte; ++at) {
        chars += (static_cast<unsigned char>(text_[at]) & 0xC0U) != 0x80U ? 1U : 0U;
      }
      return chars;
    };
    for (std::size_t p = 0; p < paragraphs(); ++p) {
      const core::ParagraphSpan& sp = keyer_.spans()[p];
      if (dolma) {
        const std::uint64_t start = chars_to(sp.start);
        forms_.push_back({start, chars_to(sp.cut_end), p});
      } else {
        forms_.push_back({sp.start, sp.end, p});
      }
    }
    std::sort(forms_.begin(), forms_.end());
    for (const auto& [a, b] : listed) {
      const auto it = std::lower_bound(forms_.begin(), forms_.end(), Form{a, b, 0});
      if (it == forms_.end() || it->start != a || it->end != b) return false;
      dup_[it->paragraph] = true;
    }
    (void)line();  // removal_ of the listed flags
    return true;
  }

  // The decision the annotate writer makes a line from, for dup_'s flags.
  [[nodiscard]] ParagraphDecision decision() {
    ParagraphDecision d;
    d.text = text_;
    d.paragraphs = paragraphs();
    for (std::size_t p = 0; p < paragraphs(); ++p) {
      if (dup_[p]) d.duplicates.push_back(keyer_.spans()[p]);
    }
    (void)line();
    d.dropped = dropped();
    return d;
  }
  // Whether the current flags drop the record (after line()).
  [[nodiscard]] bool dropped() const noexcept {
    return removal_.paragraphs_removed != 0 &&
           core::drop_for_removed_fraction(removal_.removed_fraction,
                                           key_.drop_if_removed_fraction);
  }

  [[nodiscard]] std::size_t paragraphs() const noexcept { return keyer_.spans().size(); }
  [[nodiscard]] bool keyed(std::size_t p) const { return keyer_.keyed()[p]; }
  [[nodiscard]] const core::KeyHash& hash(std::size_t p) const { return hashes_[p]; }
  [[nodiscard]] bool duplicate(std::size_t p) const { return dup_[p]; }
  void cut(std::size_t p) { dup_[p] = true; }
  [[nodiscard]] const core::ParagraphRemoval& removal() const noexcept { return removal_; }

 private:
  // All flags false, for this record's paragraphs.
  void clear_flags() {
    if (paragraphs() > dup_capacity_) {
      dup_capacity_ = std::max(paragraphs(), 2 * dup_capacity_);
      dup_ = std::make_unique<bool[]>(dup_capacity_);
    }
    std::fill(dup_.get(), dup_.get() + paragraphs(), false);
  }
  // A paragraph as an attribute line lists it.
  struct Form {
    std::uint64_t start;
    std::uint64_t end;
    std::size_t paragraph;
    friend bool operator<(const Form& x, const Form& y) {
      return std::tie(x.start, x.end) < std::tie(y.start, y.end);
    }
  };

  const core::KeyScheme& key_;
  std::uint64_t seed_;
  core::ParagraphKeyer keyer_;
  core::ParagraphKeyer out_keyer_;
  io::JsonFieldToken field_;
  std::string_view line_;
  std::string text_;
  bool json_ = false;
  io::TokenSpan token_{};
  std::vector<core::KeyHash> hashes_;  // per paragraph ({} when not keyed)
  std::vector<bool> first_;            // the first copy of its key in the record
  std::vector<std::size_t> order_;     // load()'s scratch
  std::vector<std::pair<std::uint64_t, std::uint64_t>> kept_;  // keys of the written line, sorted
  std::vector<Form> forms_;                                    // flag_listed()'s, sorted
  std::unique_ptr<bool[]> dup_;                                // per paragraph: cut (a duplicate)
  std::size_t dup_capacity_ = 0;
  core::ParagraphRemoval removal_;
  std::string text_out_;
  std::string line_out_;
};

[[noreturn]] void fail(const std::filesystem::path& output, const io::InputFile& input,
                       std::uint64_t offset, const std::string& why) {
  throw std::runtime_error("output '" + output.string() + "' of input '" + input.relative_path +
                           "': the retracted paragraph at byte " + std::to_string(offset) + " " +
                           why + ": it does not match this run");
}

}  // namespace

ParagraphRecut cut_retracted_paragraphs(const io::InputFile& input,
                                        const std::filesystem::path& output,
                                        std::span<const RetractedLine> retracted,
                                        const ParagraphTextOf& text_of, const core::KeyScheme& key,
                                        std::uint64_t hash_seed, std::uint64_t max_line_bytes,
                                        const io::OutputOptions& options, bool durable) {
  const io::ReaderOptions read{.max_line_bytes = static_cast<std::size_t>(max_line_bytes),
                               .prefix_digest = false};
  io::RecordReader in(read);
  in.open(input);
  io::InputFile written = input;  // the output read as an input of the same kind
  written.absolute_path = output;
  written.size = std::filesystem::file_size(output);
  io::RecordReader out(read);
  out.open(written);
  const std::filesystem::path tmp = cut_output_temp_path(output);
  io::OutputWriter writer = io::OutputWriter::create(tmp, input.compression, options);
  const bool json = input.format == io::Format::kJsonLines;
  // Under the default fraction (1) no record is ever dropped, so every
  // accepted record has its line and only retracted ones need the
  // re-derivation.
  const bool may_drop = key.drop_if_removed_fraction < 1.0;
  RecordCut cut(key, hash_seed);
  ParagraphRecut done;
  std::size_t k = 0;     // next retraction
  bool changed = false;  // a retraction cut a paragraph of this record
  io::Record r;
  io::Record o;
  bool have_o = out.next(o);
  try {
    while (k < retracted.size() && in.next(r)) {
      const std::uint64_t start = r.end_offset - r.line.size() - r.terminator.size();
      if (retracted[k].input_offset < start)
        fail(output, input, retracted[k].input_offset, "starts no paragraph of a record");
      std::size_t mine = k;  // retractions of this record: [k, mine)
      while (mine < retracted.size() && retracted[mine].input_offset < start + r.line.size()) {
        ++mine;
      }
      std::optional<std::string> text;
      if (!r.too_long) text = text_of(r.line);
      const bool accepted = text && cut.load(r.line, std::move(*text), json);
      if (!accepted) {
        if (mine != k) fail(output, input, retracted[k].input_offset, "lies in a rejected record");
        continue;
      }
      bool belongs = have_o && mine == k && (!may_drop || o.line == r.line);
      core::ParagraphRemoval before;  // what the written line had cut
      if (!belongs && have_o) {
        if (const std::optional<std::string> written_text = text_of(o.line)) {
          cut.derive(*written_text);
          const std::optional<std::string_view> expected = cut.line();
          belongs = expected && *expected == o.line;
          before = cut.removal();
        }
      }
      if (!belongs && mine != k && !may_drop) {
        fail(output, input, retracted[k].input_offset,
             "lies in a record whose line is not the output's next one");
      }
      for (; k < mine; ++k) {  // each must be a keyed paragraph of the key, kept in the line
        const std::uint64_t p = retracted[k].input_offset - start;
        if (p >= cut.paragraphs() || !cut.keyed(p) || !(cut.hash(p) == retracted[k].hash)) {
          fail(output, input, retracted[k].input_offset, "is no keyed paragraph of that key");
        }
        if (!belongs) continue;  // the record was dropped whole: nothing to cut
        if (cut.duplicate(p)) fail(output, input, retracted[k].input_offset, "was cut already");
        cut.cut(p);
        changed = true;
      }
      if (!belongs) continue;
      if (!changed) {
        writer.write(o.line, o.terminator);
        have_o = out.next(o);
        continue;
      }
      changed = false;
      const std::optional<std::string_view> now = cut.line();
      ++done.lines_changed;
      if (!now) {
        ++done.lines_dropped;
        done.bytes_removed += o.line.size() + o.terminator.size();
        if (before.paragraphs_removed != 0) --done.records_changed;
        done.paragraphs_removed -= static_cast<std::int64_t>(before.paragraphs_removed);
        done.text_bytes_removed -= static_cast<std::int64_t>(before.bytes_removed);
      } else {
        writer.write(*now, o.terminator);
        done.bytes_removed += o.line.size() - now->size();
        if (before.paragraphs_removed == 0) ++done.records_changed;
        done.paragraphs_removed += static_cast<std::int64_t>(cut.removal().paragraphs_removed) -
                                   static_cast<std::int64_t>(before.paragraphs_removed);
        done.text_bytes_removed += static_cast<std::int64_t>(cut.removal().bytes_removed) -
                                   static_cast<std::int64_t>(before.bytes_removed);
      }
      have_o = out.next(o);
    }
    if (k < retracted.size())
      fail(output, input, retracted[k].input_offset, "lies past the input's last record");
    for (; have_o; have_o = out.next(o)) writer.write(o.line, o.terminator);
    if (durable) writer.flush_and_sync();
    writer.close();
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  done.length = std::filesystem::file_size(tmp);
  return done;
}

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
  io::InputFile written = input;  // the attribute file read as an input of the same kind
  written.absolute_path = output;
  written.size = std::filesystem::file_size(output);
  // An attribute line may be longer than its record (dolma's spans): the
  // limit of retracted_annotations.cpp.
  io::RecordReader out(
      io::ReaderOptions{.max_line_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(
                            std::uint64_t{1} << 40, max_line_bytes * 8 + 4096)),
                        .prefix_digest = false});
  out.open(written);
  const std::filesystem::path tmp = cut_output_temp_path(output);
  io::OutputWriter writer = io::OutputWriter::create(tmp, input.compression, options);
  const bool json = input.format == io::Format::kJsonLines;
  const bool dolma = format == AnnotateFormat::kDolma;
  const std::string marker =
      dolma ? "\"" + std::string(kDolmaDuplicateAttribute) + "\":" : std::string("{\"duplicate\":");
  RecordCut cut(key, hash_seed);
  ParagraphRecut done;
  std::size_t k = 0;
  io::Record r;
  io::Record o;
  std::string tail;
  try {
    // Line n of the attribute file is about line n of the input.
    while (k < retracted.size() && in.next(r)) {
      if (!out.next(o))
        fail(output, input, retracted[k].input_offset, "lies past the attribute file's end");
      const std::uint64_t start = r.end_offset - r.line.size() - r.terminator.size();
      if (retracted[k].input_offset < start) {
        fail(output, input, retracted[k].input_offset, "starts no paragraph of a record");
      }
      if (retracted[k].input_offset >= start + r.line.size()) {
        writer.write(o.line, o.terminator);
        continue;
      }
      std::optional<std::string> text;
      if (!r.too_long) text = text_of(r.line);
      if (!text || !cut.load(r.line, std::move(*text), json)) {
        fail(output, input, retracted[k].input_offset, "lies in a rejected record");
      }
      const std::size_t head = o.line.rfind(marker);
      const std::size_t list =
          head == std::string_view::npos
              ? head
              : (dolma ? head + marker.size() : o.line.find("\"duplicate_spans\":", head));
      const auto listed =
          list == std::string_view::npos
              ? std::nullopt
              : listed_spans(o.line,
                             dolma ? list : list + std::string_view("\"duplicate_spans\":").size());
      if (!listed || !cut.flag_listed(*listed, dolma)) {
        fail(output, input, retracted[k].input_offset,
             "is in a record whose attribute line does not list its paragraphs");
      }
      const core::ParagraphRemoval before = cut.removal();
      const bool dropped_before = cut.dropped();
      for (; k < retracted.size() && retracted[k].input_offset < start + r.line.size(); ++k) {
        const std::uint64_t p = retracted[k].input_offset - start;
        if (p >= cut.paragraphs() || !cut.keyed(p) || !(cut.hash(p) == retracted[k].hash)) {
          fail(output, input, retracted[k].input_offset, "is no keyed paragraph of that key");
        }
        if (cut.duplicate(p)) fail(output, input, retracted[k].input_offset, "was cut already");
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
      fail(output, input, retracted[k].input_offset, "lies past the input's last record");
    }
    while (out.next(o)) writer.write(o.line, o.terminator);
    if (durable) writer.flush_and_sync();
    writer.close();
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  done.length = std::filesystem::file_size(tmp);
  return done;
}

}  // namespace bloomshard::app
