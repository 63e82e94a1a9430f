// KeyExtractor::extract_lines: many JSONL lines per simdjson stage 1.
//
// A run of lines that lie back to back (at most kRunBytes) gets one stage 1
// (structural indexing, UTF-8 and string checks) over the whole run; then
// each line's object is built by one stage 2 started at the line's first
// structural, as simdjson's own document streams do: dom::document_stream
// makes the same calls inline on dom::parser::implementation (public, "for
// benchmarking access", in simdjson 3.0); making them here lets the walk go
// on after a line it cannot take without indexing the run again. A line takes that answer only when
// stage 2 builds an object that starts at the line's first non-blank byte and ends inside the line
// with only white space after it. Why that answer is the per-line parse's:
// - stage 1 of the run failing (invalid UTF-8, a control character inside
//   a string, an unclosed string) decides nothing: the run is cut in halves
//   that are indexed again, down to a few lines that go one by one;
// - once it succeeded, no '\n' lies inside a string (it would be a control
//   character there), so every line starts outside a string, after white
//   space, with no escape pending, which is the state stage 1 starts a lone
//   line in: the structural indexes inside the line are the lone line's;
// - stage 2 then walks the same structurals and bytes as the lone parse,
//   and the lone parse's extra checks (the last structural closes the root;
//   nothing after it) are what the end-of-line check asks.
// Most lines skip stage 2: where every key path is one root member, a
// grammar walk over the same structurals (json_line_walk.hpp) takes the
// line when it is certainly a valid object and it can answer the lookup
// from the raw bytes (an unescaped string, a member of another type); it
// accepts only forms DOM accepts, and leaves every other line to stage 2
// as above. Its values are views into the line, not into DOM's strings.
// Everything else (a stage 2 error, a root that is not an object, two
// objects on a line, an object that runs into the next line) goes through
// extract_fields(), which also decides what DOM refuses (1e400, deep or
// long lines) with its On Demand walk.
#include <simdjson.h>

#include <algorithm>
#include <cstdint>

#include "io/records/json_line_walk.hpp"
#include "io/records/key_extractor_json.hpp"
#include "io/records/record_reader.hpp"
#include "io/records/reject_reasons.hpp"

namespace bloomshard::io {
namespace {

using json_detail::is_json_space;

// Bytes one stage 1 indexes at most: the run and its structural indexes
// (~1 per 8 bytes of this corpus, 4 bytes each) stay in L2, and its parser
// (~14 bytes of address space per byte, touched only as far as used) stays
// small. Lines longer than this are parsed alone.
constexpr std::size_t kRunBytes = std::size_t{64} << 10;
// Fewer lines than this are not worth a stage 1 of their own.
constexpr std::size_t kMinRunLines = 4;
// A run whose stage 1 fails is halved at most this often (then its pieces
// go line by line): a bad run is indexed at most 5 times over.
constexpr int kMaxRunSplits = 4;

static_assert(kLinePaddingBytes >= simdjson::SIMDJSON_PADDING,
              "reader lines must be padded as simdjson needs");

// True when `next` starts right after `prev` and a line terminator.
bool follows(std::string_view prev, std::string_view next) noexcept {
  const auto end = reinterpret_cast<std::uintptr_t>(prev.data()) + prev.size();
  const auto start = reinterpret_cast<std::uintptr_t>(next.data());
  const char* after = prev.data() + prev.size();
  if (start == end + 1) return after[0] == '\n';
  if (start == end + 2) return after[0] == '\r' && after[1] == '\n';
  return false;
}

}  // namespace

std::size_t KeyExtractor::Json::extract_lines(std::span<const std::string_view> lines, SinkFn fn,
                                              void* sink) {
  const std::size_t run_line_bytes = std::min(kRunBytes, long_line_bytes);
  std::size_t i = 0;
  while (i < lines.size()) {
    // The run of lines from i that one stage 1 can take.
    const auto run_begin = reinterpret_cast<std::uintptr_t>(lines[i].data());
    std::size_t j = i;
    while (j < lines.size() && lines[j].size() <= run_line_bytes &&
           (j == i || follows(lines[j - 1], lines[j])) &&
           reinterpret_cast<std::uintptr_t>(lines[j].data()) + lines[j].size() - run_begin <=
               kRunBytes) {
      ++j;
    }
    const std::size_t end = std::max(j, i + 1);
    const auto run = lines.subspan(i, end - i);
    const bool go_on = run.size() >= kMinRunLines ? decide_run(run, i, fn, sink, kMaxRunSplits)
                                                  : decide_alone(run, i, fn, sink);
    if (!go_on) return last_handed;
    i = end;
  }
  return lines.size();
}

// Every line of `lines` through extract_fields(); false when the sink stops.
bool KeyExtractor::Json::decide_alone(std::span<const std::string_view> lines,
                                      std::size_t first_index, SinkFn fn, void* sink) {
  for (std::size_t k = 0; k < lines.size(); ++k) {
    last_handed = first_index + k + 1;
    if (!fn(sink, first_index + k, extract_fields(lines[k]))) return false;
  }
  return true;
}

// One stage 1 over `run`, then stage 2 line by line (see the banner);
// false when the sink stops.
bool KeyExtractor::Json::decide_run(std::span<const std::string_view> run, std::size_t first_index,
                                    SinkFn fn, void* sink, int splits_left) {
  if (!run_ready) {
    if (run_parser.allocate(kRunBytes, json_detail::kDomMaxDepth) != simdjson::SUCCESS ||
        run_parser.doc.allocate(kRunBytes) != simdjson::SUCCESS) {
      return decide_alone(run, first_index, fn, sink);
    }
    run_ready = true;
  }
  longs.clear();  // no placeholders in these lines (value_length)
  const char* const begin = run.front().data();
  const auto len = static_cast<std::size_t>(run.back().data() + run.back().size() - begin);
  auto& impl = *run_parser.implementation;
  if (impl.stage1(reinterpret_cast<const std::uint8_t*>(begin), len,
                  simdjson::stage1_mode::regular) != simdjson::SUCCESS) {
    if (splits_left == 0 || run.size() < 2 * kMinRunLines) {
      return decide_alone(run, first_index, fn, sink);
    }
    const std::size_t half = run.size() / 2;
    return decide_run(run.first(half), first_index, fn, sink, splits_left - 1) &&
           decide_run(run.subspan(half), first_index + half, fn, sink, splits_left - 1);
  }
  const std::uint32_t* const structurals = impl.structural_indexes.get();
  const std::uint32_t count = impl.n_structural_indexes;
  std::uint32_t next = 0;  // first structural not yet passed
  json_detail::Backslashes slashes(begin, begin + len);
  for (std::size_t k = 0; k < run.size(); ++k) {
    const std::string_view text = run[k];
    const auto line_start = static_cast<std::size_t>(text.data() - begin);
    const std::size_t line_end = line_start + text.size();
    std::size_t first = 0;
    while (first < text.size() && is_json_space(text[first])) ++first;
    last_handed = first_index + k + 1;
    if (first == text.size()) {  // blank
      if (!fn(sink, first_index + k, {{}, reason::kEmptyLine})) return false;
      continue;
    }
    while (next < count && structurals[next] < line_start + first) ++next;
    bool taken = false;
    if (walk_root_fields && next < count && structurals[next] == line_start + first) {
      std::uint32_t after = next;
      if (walk_line(begin, structurals, count, after, line_end, slashes)) {
        next = after;
        ++streamed;
        taken = true;
        if (!fn(sink, first_index + k, walked_fields())) return false;
        continue;
      }
    }
    if (next < count && structurals[next] == line_start + first) {
      impl.next_structural_index = next;
      simdjson::dom::element root;
      if (impl.stage2_next(run_parser.doc) == simdjson::SUCCESS &&
          (root = run_parser.doc.root()).is_object()) {
        // The object closes at the structural before the next one stage 2
        // would read; only white space may follow it in the line.
        std::size_t after = std::size_t{structurals[impl.next_structural_index - 1]} + 1;
        if (after <= line_end) {
          while (after < line_end && is_json_space(begin[after])) ++after;
          if (after == line_end) {
            next = impl.next_structural_index;
            ++streamed;
            taken = true;
            if (!fn(sink, first_index + k, fields_from_dom(root))) return false;
          }
        }
      }
    }
    if (!taken && !fn(sink, first_index + k, extract_fields(text))) return false;
  }
  return true;
}

// The grammar walk of json_line_walk.hpp over one line, looking up the key
// paths (all root members) on the way: true with found/walked set when the
// line is certainly a valid object whose key members it could answer.
bool KeyExtractor::Json::walk_line(const char* begin, const std::uint32_t* structurals,
                                   std::uint32_t count, std::uint32_t& at, std::size_t line_end,
                                   json_detail::Backslashes& slashes) {
  std::size_t missing = 0;
  const auto on_member = [&](std::string_view name, json_detail::WalkedKind kind,
                             std::string_view contents) {
    if (missing == 0) return true;
    for (std::size_t p = 0; p < paths.size(); ++p) {
      // The first member of the name wins, as DOM's at_key().
      if (walked[p].reject_reason != reason::kKeyMissing || name != paths[p].front()) continue;
      switch (kind) {
        case json_detail::WalkedKind::kPlainString:
          walked[p] = contents.size() > max_key_bytes ? KeyResult{{}, reason::kKeyTooLong}
                                                      : KeyResult{contents, {}};
          break;
        case json_detail::WalkedKind::kOther:
          walked[p] = KeyResult{{}, reason::kKeyWrongType};
          break;
        case json_detail::WalkedKind::kUnsure:
          return false;
      }
      --missing;
    }
    return true;
  };
  const auto restart = [&] {
    std::fill(walked.begin(), walked.end(), KeyResult{{}, reason::kKeyMissing});
    missing = paths.size();
  };
  restart();
  if (json_detail::walk_flat_object(begin, structurals, count, at, line_end, slashes, on_member)) {
    return true;
  }
  restart();
  return json_detail::walk_object_line(begin, structurals, count, at, line_end, slashes, on_member);
}

// walk_line()'s lookups as fields_from_dom() would answer them.
FieldsResult KeyExtractor::Json::walked_fields() {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!settle(i, walked[i])) return {{}, walked[i].reject_reason};
  }
  return {values, {}};
}

std::size_t KeyExtractor::extract_lines_with(std::span<const std::string_view> lines, SinkFn fn,
                                             void* sink) {
  if (json_) return json_->extract_lines(lines, fn, sink);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!fn(sink, i, extract_fields(lines[i]))) return i + 1;
  }
  return lines.size();
}

std::uint64_t KeyExtractor::lines_streamed() const noexcept { return json_ ? json_->streamed : 0; }

}  // namespace bloomshard::io
