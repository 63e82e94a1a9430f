// Filter mode's writer of the paragraph end pass (retracted_paragraphs.hpp
// cut_retracted_paragraphs): the output walked beside its input, each
// retracted paragraph cut from the line its record kept.
#include <optional>
#include <string>

#include "app/round/paragraph_recut_file.hpp"
#include "app/round/record_paragraph_cut.hpp"
#include "app/round/retracted_paragraphs.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {

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
  io::RecordReader out(read);  // the output read as an input of the same kind
  out.open(output_as_input(input, output));
  const bool json = input.format == io::Format::kJsonLines;
  // Under the default fraction (1) no record is ever dropped, so every
  // accepted record has its line and only retracted ones need the
  // re-derivation.
  const bool may_drop = key.drop_if_removed_fraction < 1.0;
  return write_recut_temp(
      output, input.compression, options, durable, [&](io::OutputWriter& writer) {
        RecordParagraphCut cut(key, hash_seed);
        ParagraphRecut done;
        std::size_t k = 0;     // next retraction
        bool changed = false;  // a retraction cut a paragraph of this record
        io::Record r;
        io::Record o;
        bool have_o = out.next(o);
        while (k < retracted.size() && in.next(r)) {
          const std::uint64_t start = r.end_offset - r.line.size() - r.terminator.size();
          if (retracted[k].input_offset < start)
            fail_retraction(output, input, retracted[k].input_offset,
                            "starts no paragraph of a record");
          std::size_t mine = k;  // retractions of this record: [k, mine)
          while (mine < retracted.size() && retracted[mine].input_offset < start + r.line.size()) {
            ++mine;
          }
          std::optional<std::string> text;
          if (!r.too_long) text = text_of(r.line);
          const bool accepted = text && cut.load(r.line, std::move(*text), json);
          if (!accepted) {
            if (mine != k)
              fail_retraction(output, input, retracted[k].input_offset,
                              "lies in a rejected record");
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
            fail_retraction(output, input, retracted[k].input_offset,
                            "lies in a record whose line is not the output's next one");
          }
          for (; k < mine; ++k) {  // each must be a keyed paragraph of the key, kept in the line
            const std::uint64_t p = retracted[k].input_offset - start;
            if (!cut.holds(p, retracted[k].hash)) {
              fail_retraction(output, input, retracted[k].input_offset,
                              "is no keyed paragraph of that key");
            }
            if (!belongs) continue;  // the record was dropped whole: nothing to cut
            if (cut.duplicate(p))
              fail_retraction(output, input, retracted[k].input_offset, "was cut already");
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
          fail_retraction(output, input, retracted[k].input_offset,
                          "lies past the input's last record");
        for (; have_o; have_o = out.next(o)) writer.write(o.line, o.terminator);
        return done;
      });
}

}  // namespace bloomshard::app
