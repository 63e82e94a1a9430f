#include "app/run/run_manifest.hpp"

#include <simdjson.h>

#include <algorithm>
#include <stdexcept>

#include "app/feed/input_windows.hpp"
#include "app/run/input_order_manifest.hpp"
#include "io/output/json_escape.hpp"

namespace bloomshard::app {
namespace {

// A JSON string that must round-trip exactly: refuse bytes that are not
// UTF-8 instead of replacing them (a path that does not round-trip would
// make the checkpoint describe another file).
void put_string(std::string& out, std::string_view key, std::string_view value) {
  out += '"';
  out += key;
  out += "\":\"";
  if (!io::append_json_string_contents(out, value)) {
    throw std::runtime_error("cannot checkpoint '" + std::string(value) +
                             "': the name is not valid UTF-8");
  }
  out += '"';
}

void put_json_u64(std::string& out, std::string_view key, std::uint64_t value) {
  out += '"';
  out += key;
  out += "\":";
  out += std::to_string(value);
}

void put_i64(std::string& out, std::string_view key, std::int64_t value) {
  out += '"';
  out += key;
  out += "\":";
  out += std::to_string(value);
}

// One cursor's fields, the same for a whole input and for a range of one
// (every cursor of a manifest goes through these two):
// `records`, `offset` and, when the cursor has a frame start,
// `frame_compressed_offset` and `frame_decompressed_offset`. Builds before
// them ignore the two and resume from byte 0, which is still right.
void put_cursor(std::string& out, const io::InputCursor& c) {
  put_json_u64(out, "records", c.records);
  out += ',';
  put_json_u64(out, "offset", c.decompressed_offset);
  if (c.frame) {
    out += ',';
    put_json_u64(out, "frame_compressed_offset", c.frame->compressed_offset);
    out += ',';
    put_json_u64(out, "frame_decompressed_offset", c.frame->decompressed_offset);
  }
}

// The ranges of a split input, in file order.
void put_ranges(std::string& out, const std::vector<RangeProgress>& ranges) {
  out += ",\"ranges\":[";
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const RangeProgress& r = ranges[k];
    out += k ? ",{" : "{";
    put_json_u64(out, "begin", r.begin);
    out += ',';
    put_json_u64(out, "end", r.end);
    out += ',';
    put_cursor(out, r.cursor);
    out += ',';
    put_json_u64(out, "done", r.done ? 1 : 0);
    out += ',';
    put_json_u64(out, "output_length", r.output_length);
    out += ',';
    put_json_u64(out, "reject_length", r.reject_length);
    if (r.prefix_digest) {
      out += ',';
      put_json_u64(out, "prefix_digest", *r.prefix_digest);
    }
    if (!r.retracted.empty()) {
      out += ",\"retracted\":[";
      for (std::size_t j = 0; j < r.retracted.size(); ++j) {
        if (j) out += ',';
        out += std::to_string(r.retracted[j]);
      }
      out += ']';
    }
    out += '}';
  }
  out += ']';
}

template <typename T, typename Node>
T field(Node e, std::string_view key) {
  T v{};
  if (e[key].get(v) != simdjson::SUCCESS) {
    throw std::runtime_error("run manifest: field '" + std::string(key) + "' missing or malformed");
  }
  return v;
}

io::InputCursor cursor_field(simdjson::dom::element e) {
  io::InputCursor c;
  c.records = field<std::uint64_t>(e, "records");
  c.decompressed_offset = field<std::uint64_t>(e, "offset");
  const bool has_compressed = e["frame_compressed_offset"].error() != simdjson::NO_SUCH_FIELD;
  const bool has_decompressed = e["frame_decompressed_offset"].error() != simdjson::NO_SUCH_FIELD;
  if (has_compressed || has_decompressed) {  // optional, but only as a pair
    io::FrameStart f{field<std::uint64_t>(e, "frame_compressed_offset"),
                     field<std::uint64_t>(e, "frame_decompressed_offset")};
    if (f.decompressed_offset >= c.decompressed_offset) {
      throw std::runtime_error(
          "run manifest: field 'frame_decompressed_offset' is not before "
          "the cursor's 'offset'");
    }
    c.frame = f;
  }
  return c;
}

// Ranges must tile the file in order, each non-empty, each cursor inside
// its range: anything else would read a line twice or not at all.
std::vector<RangeProgress> read_ranges(simdjson::dom::element e, const InputProgress& p) {
  std::vector<RangeProgress> ranges;
  simdjson::dom::array list;
  if (e["ranges"].get(list) != simdjson::SUCCESS) return ranges;  // optional: split inputs only
  const auto bad = [&](const std::string& why) {
    return std::runtime_error("run manifest: ranges of input '" + p.file.relative_path +
                              "': " + why);
  };
  std::uint64_t expected_begin = 0;
  for (simdjson::dom::element r : list) {
    RangeProgress g;
    g.begin = field<std::uint64_t>(r, "begin");
    g.end = field<std::uint64_t>(r, "end");
    g.cursor = cursor_field(r);
    g.done = field<std::uint64_t>(r, "done") != 0;
    g.output_length = field<std::uint64_t>(r, "output_length");
    g.reject_length = field<std::uint64_t>(r, "reject_length");
    std::uint64_t digest = 0;
    if (r["prefix_digest"].get(digest) == simdjson::SUCCESS) g.prefix_digest = digest;
    if (g.begin != expected_begin || g.end <= g.begin) throw bad("not in order or empty");
    if (g.cursor.decompressed_offset < g.begin || g.cursor.decompressed_offset > g.end ||
        (g.cursor.records == 0) != (g.cursor.decompressed_offset == g.begin)) {
      throw bad("a cursor outside its range");
    }
    simdjson::dom::array retracted;
    if (r["retracted"].get(retracted) == simdjson::SUCCESS) {  // optional: ranges k > 0 only
      for (simdjson::dom::element o : retracted) {
        std::uint64_t offset = 0;
        if (o.get(offset) != simdjson::SUCCESS) throw bad("a retracted offset is not a number");
        if (ranges.empty() || offset < g.begin || offset >= g.cursor.decompressed_offset ||
            (!g.retracted.empty() && offset <= g.retracted.back())) {
          throw bad("a retracted offset in range 0, outside what its range read, or out of order");
        }
        g.retracted.push_back(offset);
      }
    }
    expected_begin = g.end;
    ranges.push_back(std::move(g));
  }
  if (ranges.empty() || expected_begin != p.file.size) throw bad("they do not cover the file");
  if (p.file.compression != io::Compression::kNone) throw bad("a compressed input is never split");
  return ranges;
}

}  // namespace

bool has_retracted_records(const RunManifest& m) {
  for (const InputProgress& p : m.inputs) {
    for (const RangeProgress& r : p.ranges) {
      if (!r.retracted.empty()) return true;
    }
  }
  return false;
}

bool cut_recorded(const RunManifest& m, std::size_t input) {
  return m.input_order &&
         std::any_of(m.input_order->cut_outputs.begin(), m.input_order->cut_outputs.end(),
                     [input](const CutOutput& c) { return c.input == input; });
}

bool has_split_inputs(const RunManifest& m) {
  return std::any_of(m.inputs.begin(), m.inputs.end(),
                     [](const InputProgress& p) { return !p.ranges.empty(); });
}

JobCounters& JobCounters::operator+=(const JobCounters& o) {
  for (const CounterField& f : kCounterFields) this->*f.member += o.*f.member;
  for (const auto& [reason, n] : o.rejected_by_reason) rejected_by_reason[reason] += n;
  return *this;
}

std::string manifest_to_json(const RunManifest& m) {
  std::string out = "{";
  put_string(out, "run_id", m.run_id);
  out += ",\n";
  put_string(out, "output_dir", m.output_dir);
  if (m.mode != "filter") {  // optional: filter runs write what earlier builds wrote
    out += ",\n";
    put_string(out, "mode", m.mode);
  }
  if (m.input_windows_version != 0) {  // optional: absent before window digests
    out += ",\n";
    put_json_u64(out, "input_windows", m.input_windows_version);
    out += ',';
    put_json_u64(out, "input_window_bytes", m.input_window_bytes);
  }
  if (m.run_ordinal != 0) {  // optional: absent for a state's first run
    out += ",\n";
    put_json_u64(out, "run_ordinal", m.run_ordinal);
  }
  out += ",\n\"inputs\":[";
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    const InputProgress& p = m.inputs[i];
    out += i ? ",\n {" : "\n {";
    put_string(out, "path", p.file.absolute_path.native());
    out += ',';
    put_string(out, "relative_path", p.file.relative_path);
    out += ',';
    put_json_u64(out, "size", p.file.size);
    out += ',';
    put_i64(out, "mtime_ns", p.file.mtime_ns);
    out += ',';
    put_json_u64(out, "format", static_cast<std::uint64_t>(p.file.format));
    out += ',';
    put_json_u64(out, "compression", static_cast<std::uint64_t>(p.file.compression));
    out += ',';
    put_cursor(out, p.cursor);
    out += ',';
    put_json_u64(out, "done", p.done ? 1 : 0);
    out += ',';
    put_json_u64(out, "output_length", p.output_length);
    if (!p.skipped.empty()) {
      out += ',';
      put_string(out, "skipped", p.skipped);
    }
    if (p.prefix_digest) {
      out += ',';
      put_json_u64(out, "prefix_digest", *p.prefix_digest);
    }
    if (p.window) {
      out += ',';
      put_json_u64(out, "window_end", p.window->end);
      out += ',';
      put_json_u64(out, "window_digest", p.window->digest);
    }
    if (!p.ranges.empty()) put_ranges(out, p.ranges);
    out += '}';
  }
  out += "],\n\"rejects\":[";
  for (std::size_t i = 0; i < m.rejects.size(); ++i) {
    out += i ? ",{" : "{";
    put_string(out, "name", m.rejects[i].name);
    out += ',';
    put_json_u64(out, "length", m.rejects[i].length);
    out += '}';
  }
  out += "],\n\"counters\":{";
  bool first = true;
  for (const CounterField& f : kCounterFields) {
    if (!first) out += ',';
    first = false;
    put_json_u64(out, f.name, m.counters.*f.member);
  }
  out += "},\n\"rejected_by_reason\":{";
  first = true;
  for (const auto& [reason, n] : m.counters.rejected_by_reason) {
    if (!first) out += ',';
    first = false;
    out += '"';
    io::append_json_string_contents(out, reason);
    out += "\":" + std::to_string(n);
  }
  out += '}';
  if (m.input_order) put_input_order(out, *m.input_order);
  out += "}\n";
  return out;
}

RunManifest manifest_from_json(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(simdjson::padded_string(json)).get(doc) != simdjson::SUCCESS) {
    throw std::runtime_error("run manifest is not valid JSON");
  }
  RunManifest m;
  m.run_id = std::string(field<std::string_view>(doc, "run_id"));
  m.output_dir = std::string(field<std::string_view>(doc, "output_dir"));
  std::string_view mode;
  if (doc["mode"].get(mode) == simdjson::SUCCESS) m.mode = std::string(mode);  // optional
  if (doc["input_windows"].error() != simdjson::NO_SUCH_FIELD) {  // optional: see InputWindow
    const auto version = field<std::uint64_t>(doc, "input_windows");
    const auto bytes = field<std::uint64_t>(doc, "input_window_bytes");
    if (version != kInputWindowsVersion || bytes != kInputWindowBytes) {
      throw std::runtime_error("run manifest: input_windows " + std::to_string(version) + " of " +
                               std::to_string(bytes) + " bytes; this build reads version " +
                               std::to_string(kInputWindowsVersion) + " of " +
                               std::to_string(kInputWindowBytes) + " bytes");
    }
    m.input_windows_version = kInputWindowsVersion;
    m.input_window_bytes = kInputWindowBytes;
  }
  if (doc["run_ordinal"].error() != simdjson::NO_SUCH_FIELD) {  // optional: 0 when absent
    m.run_ordinal = field<std::uint64_t>(doc, "run_ordinal");
  }
  for (simdjson::dom::element e : field<simdjson::dom::array>(doc, "inputs")) {
    InputProgress p;
    p.file.absolute_path = std::string(field<std::string_view>(e, "path"));
    p.file.relative_path = std::string(field<std::string_view>(e, "relative_path"));
    p.file.size = field<std::uint64_t>(e, "size");
    p.file.mtime_ns = field<std::int64_t>(e, "mtime_ns");
    const auto format = field<std::uint64_t>(e, "format");
    const auto compression = field<std::uint64_t>(e, "compression");
    if (format > static_cast<std::uint64_t>(io::Format::kJsonLines) ||
        compression > static_cast<std::uint64_t>(io::Compression::kZstd)) {
      throw std::runtime_error("run manifest: unknown format or compression of input '" +
                               p.file.relative_path + "'");
    }
    p.file.format = static_cast<io::Format>(format);
    p.file.compression = static_cast<io::Compression>(compression);
    p.cursor = cursor_field(e);
    p.done = field<std::uint64_t>(e, "done") != 0;
    p.output_length = field<std::uint64_t>(e, "output_length");
    std::string_view skipped;
    if (e["skipped"].get(skipped) == simdjson::SUCCESS) {  // optional: only skipped inputs
      if (skipped.empty()) throw std::runtime_error("run manifest: empty skip reason");
      p.skipped = std::string(skipped);
    }
    std::uint64_t digest = 0;
    if (e["prefix_digest"].get(digest) == simdjson::SUCCESS) p.prefix_digest = digest;
    if (e["window_end"].error() != simdjson::NO_SUCH_FIELD ||
        e["window_digest"].error() != simdjson::NO_SUCH_FIELD) {  // optional, but only as a pair
      if (m.input_windows_version == 0) {
        throw std::runtime_error("run manifest: input '" + p.file.relative_path +
                                 "' has a window digest but the manifest no 'input_windows'");
      }
      p.window = InputWindow{field<std::uint64_t>(e, "window_end"),
                             field<std::uint64_t>(e, "window_digest")};
      if (p.window->end > p.file.size) {
        throw std::runtime_error("run manifest: field 'window_end' of input '" +
                                 p.file.relative_path + "' is past its size");
      }
    }
    p.ranges = read_ranges(e, p);
    m.inputs.push_back(std::move(p));
  }
  for (simdjson::dom::element e : field<simdjson::dom::array>(doc, "rejects")) {
    m.rejects.push_back(
        {std::string(field<std::string_view>(e, "name")), field<std::uint64_t>(e, "length")});
  }
  const auto counters = field<simdjson::dom::object>(doc, "counters");
  for (const CounterField& f : kCounterFields) {
    std::uint64_t& v = m.counters.*f.member;
    v = f.optional && counters[f.name].error() == simdjson::NO_SUCH_FIELD
            ? 0
            : field<std::uint64_t>(counters, f.name);
  }
  for (auto [reason, n] : field<simdjson::dom::object>(doc, "rejected_by_reason")) {
    std::uint64_t count = 0;
    if (n.get(count) != simdjson::SUCCESS)
      throw std::runtime_error("run manifest: bad reject count");
    m.counters.rejected_by_reason[std::string(reason)] = count;
  }
  simdjson::dom::element order;
  if (doc["input_order"].get(order) == simdjson::SUCCESS) {  // optional: --kept-copy first only
    m.input_order = read_input_order(order, m);
  }
  return m;
}

}  // namespace bloomshard::app
