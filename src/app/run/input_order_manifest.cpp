#include "app/run/input_order_manifest.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <vector>

#include "bloomshard/store/input_order_rows.hpp"

namespace bloomshard::app {
namespace {

std::runtime_error bad(const std::string& what) {
  return std::runtime_error("run manifest: input_order: " + what);
}

std::uint64_t json_number(simdjson::dom::element e, const char* key) {
  std::uint64_t v = 0;
  if (e[key].get(v) != simdjson::SUCCESS)
    throw bad("missing or bad field '" + std::string(key) + "'");
  return v;
}

std::vector<std::uint64_t> numbers(simdjson::dom::element e, const char* key, std::size_t group) {
  simdjson::dom::array a;
  if (e[key].get(a) != simdjson::SUCCESS)
    throw bad("missing or bad list '" + std::string(key) + "'");
  std::vector<std::uint64_t> out;
  out.reserve(a.size());
  for (simdjson::dom::element x : a) {
    std::uint64_t v = 0;
    if (x.get(v) != simdjson::SUCCESS) {
      throw bad("'" + std::string(key) + "' entry " + std::to_string(out.size() / group) +
                " is not a number");
    }
    out.push_back(v);
  }
  if (out.size() % group != 0) {
    throw bad("'" + std::string(key) + "' holds " + std::to_string(out.size()) +
              " numbers, not groups of " + std::to_string(group));
  }
  return out;
}

void put_list(std::string& out, const char* key, const std::vector<std::uint64_t>& v) {
  out += ",\"";
  out += key;
  out += "\":[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += ']';
}

// The copies as (tag, hi, lo) numbers straight into `out` (no list of
// numbers in between: the table can be a million copies).
void put_copies(std::string& out, const char* key,
                const std::vector<core::CrossInputRetraction>& copies) {
  out += ",\"";
  out += key;
  out += "\":[";
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(copies[i].tag);
    out += ',';
    out += std::to_string(copies[i].hash.hi);
    out += ',';
    out += std::to_string(copies[i].hash.lo);
  }
  out += ']';
}

// Whether `offset` (a decompressed offset) lies in what input `p` had read
// at the cut: before its cursor, or a split input's range cursors (a copy
// that was decided was read; a compressed input's offsets are past its
// size).
bool read_at_cut(const InputProgress& p, std::uint64_t offset) {
  if (p.ranges.empty()) return offset < p.cursor.decompressed_offset;
  if (p.done) return offset < p.file.size;  // joined: every range read
  return std::any_of(p.ranges.begin(), p.ranges.end(), [&](const RangeProgress& r) {
    return offset >= r.begin && offset < r.cursor.decompressed_offset;
  });
}

// (tag, hi, lo) triples: each tag names a record that an input of `m` had
// read at the cut, in ascending (tag, hash) order.
std::vector<core::CrossInputRetraction> copies(const std::vector<std::uint64_t>& v, const char* key,
                                               const RunManifest& m) {
  std::vector<core::CrossInputRetraction> out;
  out.reserve(v.size() / 3);
  for (std::size_t j = 0; j < v.size(); j += 3) {
    const core::OrderTag t = v[j];
    const std::string entry = "'" + std::string(key) + "' entry " + std::to_string(j / 3);
    if (t == 0 || core::order_input(t) >= m.inputs.size() ||
        !read_at_cut(m.inputs[core::order_input(t)], core::order_offset(t))) {
      throw bad(entry + ": tag " + std::to_string(t) + " names no record an input had read");
    }
    const core::CrossInputRetraction c{t, {v[j + 1], v[j + 2]}};
    if (!out.empty() && std::tie(out.back().tag, out.back().hash.hi, out.back().hash.lo) >=
                            std::tie(c.tag, c.hash.hi, c.hash.lo)) {
      throw bad(entry + " is out of order");
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

namespace {

// "" or why the row `c` of `dataset` names no record an input of `m` had
// read at the cut ("<where>: dataset D, tier-2 slice S: the <what> of tag T ...").
std::string unread_row_problem(const core::CrossInputRetraction& c, const RunManifest& m,
                               std::uint32_t slice, const std::string& where, const char* dataset,
                               const char* what, std::string& row) {
  row = where + ": dataset " + dataset + ", tier-2 slice " + std::to_string(slice) + ": the " +
        what + " of tag " + std::to_string(c.tag);
  if (c.tag == 0 || core::order_input(c.tag) >= m.inputs.size() ||
      !read_at_cut(m.inputs[core::order_input(c.tag)], core::order_offset(c.tag))) {
    return row + " names no record an input of the manifest had read";
  }
  return {};
}

}  // namespace

std::string kept_row_problem(const core::CrossInputRetraction& c, const RunManifest& m,
                             std::uint64_t watermark, std::uint32_t slice,
                             const std::string& where) {
  std::string row;
  if (std::string e =
          unread_row_problem(c, m, slice, where, store::kInputOrderRows, "kept copy", row);
      !e.empty()) {
    return e;
  }
  if (core::order_position(c.tag) < watermark) return row + " lies before the watermark";
  return {};
}

std::string retracted_row_problem(const core::CrossInputRetraction& c, const RunManifest& m,
                                  std::uint32_t slice, const std::string& where) {
  std::string row;
  return unread_row_problem(c, m, slice, where, store::kInputOrderRetractedRows, "retraction", row);
}

std::string input_order_mark_problem(const store::CheckpointHeader& h, const RunManifest& m) {
  if (m.input_order.has_value() != h.input_order) {
    return std::string("its manifest ") + (h.input_order ? "lacks" : "has") +
           " an input_order object but its normalization text " +
           (h.input_order ? "has" : "lacks") + " the input-order mark";
  }
  const std::uint64_t marked = h.input_order_retracted_rows ? kInputOrderVersion
                               : h.input_order_rows         ? kInputOrderRowsVersion
                                                            : kInputOrderListVersion;
  if (m.input_order && m.input_order->version != marked) {
    return "its manifest's input_order is version " + std::to_string(m.input_order->version) +
           " but its normalization text has the input-order/v" + std::to_string(marked) + " mark";
  }
  return {};
}

void put_input_order(std::string& out, const InputOrderProgress& p) {
  if (p.version < kInputOrderListVersion || p.version > kInputOrderVersion) {
    throw std::logic_error("input_order: no writer for version " + std::to_string(p.version));
  }
  if (kept_as_rows(p.version) && !p.kept.empty()) {
    throw std::logic_error("input_order: version " + std::to_string(p.version) +
                           " keeps its kept copies as rows, not a list");
  }
  if (retracted_as_rows(p.version) && !p.retracted.empty()) {
    throw std::logic_error("input_order: version " + std::to_string(p.version) +
                           " keeps its retractions as rows, not a list");
  }
  out += ",\n\"input_order\":{\"version\":" + std::to_string(p.version) +
         ",\"watermark\":" + std::to_string(p.watermark);
  // Sized once: growing a string of tens of MB by doubling holds two copies.
  out.reserve(out.size() + 64 +
              (p.kept.size() + p.retracted.size()) *
                  static_cast<std::size_t>(core::kInputOrderManifestBytesPerKey));
  if (!kept_as_rows(p.version)) {
    put_copies(out, "kept", p.kept);
  } else {
    out += ",\"rows\":\"";
    out += store::kInputOrderRows;
    out += "\",\"kept_rows\":" + std::to_string(p.kept_rows);
  }
  if (!retracted_as_rows(p.version)) {
    put_copies(out, "retracted", p.retracted);
  } else {
    out += ",\"retracted_dataset\":\"";
    out += store::kInputOrderRetractedRows;
    out += "\",\"retracted_rows\":" + std::to_string(p.retracted_rows);
  }
  std::vector<std::uint64_t> cuts;
  for (const CutOutput& c : p.cut_outputs) cuts.insert(cuts.end(), {c.input, c.length});
  put_list(out, "cut_outputs", cuts);
  out += '}';
}

InputOrderProgress read_input_order(simdjson::dom::element e, const RunManifest& m) {
  if (!e.is_object()) throw bad("not an object");
  const std::uint64_t version = json_number(e, "version");
  if (version < kInputOrderListVersion || version > kInputOrderVersion) {
    throw bad("version " + std::to_string(version) + "; this build reads versions " +
              std::to_string(kInputOrderListVersion) + " to " + std::to_string(kInputOrderVersion));
  }
  InputOrderProgress p;
  p.version = version;
  p.watermark = json_number(e, "watermark");
  if (!kept_as_rows(version)) {
    p.kept = copies(numbers(e, "kept", 3), "kept", m);
    for (std::size_t j = 0; j < p.kept.size(); ++j) {
      if (core::order_position(p.kept[j].tag) < p.watermark) {
        throw bad("'kept' entry " + std::to_string(j) + " lies before the watermark");
      }
    }
  } else {
    if (e["kept"].error() != simdjson::NO_SUCH_FIELD) {
      throw bad("version " + std::to_string(version) +
                " has a 'kept' list (its kept copies are the generation's rows)");
    }
    std::string_view rows;
    if (e["rows"].get(rows) != simdjson::SUCCESS || rows != store::kInputOrderRows) {
      throw bad("version " + std::to_string(version) + " must name its rows' dataset " +
                std::string(store::kInputOrderRows) + " in 'rows'");
    }
    p.kept_rows = json_number(e, "kept_rows");
  }
  if (!retracted_as_rows(version)) {
    p.retracted = copies(numbers(e, "retracted", 3), "retracted", m);
  } else {
    if (e["retracted"].error() != simdjson::NO_SUCH_FIELD) {
      throw bad("version " + std::to_string(version) +
                " has a 'retracted' list (its retractions are the generation's rows)");
    }
    std::string_view rows;
    if (e["retracted_dataset"].get(rows) != simdjson::SUCCESS ||
        rows != store::kInputOrderRetractedRows) {
      throw bad("version " + std::to_string(version) + " must name its retractions' dataset " +
                std::string(store::kInputOrderRetractedRows) + " in 'retracted_dataset'");
    }
    p.retracted_rows = json_number(e, "retracted_rows");
  }
  const std::vector<std::uint64_t> cuts = numbers(e, "cut_outputs", 2);
  for (std::size_t j = 0; j < cuts.size(); j += 2) {
    const std::string entry = "'cut_outputs' entry " + std::to_string(j / 2);
    const std::uint64_t i = cuts[j];
    if (i >= m.inputs.size() || !m.inputs[i].done || m.inputs[i].output_length != cuts[j + 1]) {
      throw bad(entry + " names no finished input of that output length");
    }
    if (!p.cut_outputs.empty() && p.cut_outputs.back().input >= i)
      throw bad(entry + " is out of order");
    p.cut_outputs.push_back({static_cast<std::size_t>(i), cuts[j + 1]});
  }
  return p;
}

}  // namespace bloomshard::app
