// The Python extension `bloomshard._bloomshard`: ReadOnlyState for Python.
// Keys (str as UTF-8, bytes, bytearray) are read while the GIL is held and
// looked up with the GIL released, so threads sharing one state run their
// batches in parallel. The pure-Python package (python/bloomshard) wraps it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <string>
#include <vector>

#include "bloomshard/core/bloom_kernel.hpp"
#include "bloomshard/core/bloom_math.hpp"
#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/normalize.hpp"
#include "core/tier2/run_compaction.hpp"
#include "read_only_state.hpp"

namespace py = pybind11;
using bloomshard::python::Answer;
using bloomshard::python::OpenOptions;
using bloomshard::python::ReadOnlyState;
using bloomshard::python::StateError;

namespace {

constexpr Py_ssize_t kObjectPrefetch = 8;

// The keys of one call as byte views. str and bytes objects own their
// buffers (kept alive by `seq`); bytearray contents are copied, since
// another thread could resize one while the GIL is released.
struct KeyBatch {
  py::object seq;
  std::vector<std::string_view> views;
  std::vector<std::string> copies;
};

std::string_view key_view(PyObject* item, std::size_t index, std::string* copy) {
  if (PyUnicode_Check(item)) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(item, &n);
    if (s == nullptr) throw py::error_already_set();  // e.g. a lone surrogate
    return {s, static_cast<std::size_t>(n)};
  }
  if (PyBytes_Check(item)) {
    return {PyBytes_AS_STRING(item), static_cast<std::size_t>(PyBytes_GET_SIZE(item))};
  }
  if (PyByteArray_Check(item) && copy != nullptr) {
    copy->assign(PyByteArray_AS_STRING(item), static_cast<std::size_t>(PyByteArray_GET_SIZE(item)));
    return *copy;
  }
  throw py::type_error("key " + std::to_string(index) + " is " + Py_TYPE(item)->tp_name +
                       ", not str or bytes");
}

KeyBatch read_keys(const py::handle& keys) {
  KeyBatch b;
  if (PyUnicode_Check(keys.ptr()) || PyBytes_Check(keys.ptr())) {
    throw py::type_error(
        "keys must be an iterable of str or bytes, not one key "
        "(use contains_one)");
  }
  b.seq = py::reinterpret_steal<py::object>(PySequence_Fast(keys.ptr(), "keys must be iterable"));
  if (!b.seq) throw py::error_already_set();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(b.seq.ptr());
  PyObject** items = PySequence_Fast_ITEMS(b.seq.ptr());
  b.views.resize(static_cast<std::size_t>(n));
  std::size_t arrays = 0;
  for (Py_ssize_t i = 0; i < n; ++i) arrays += PyByteArray_Check(items[i]) ? 1U : 0U;
  b.copies.resize(arrays);
  std::size_t next = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    // The key objects lie wherever Python allocated them (a shuffled list:
    // one cache miss each); fetch a few ahead.
    if (i + kObjectPrefetch < n) __builtin_prefetch(items[i + kObjectPrefetch]);
    std::string* copy = PyByteArray_Check(items[i]) ? &b.copies[next++] : nullptr;
    b.views[static_cast<std::size_t>(i)] = key_view(items[i], static_cast<std::size_t>(i), copy);
  }
  return b;
}

// A --unit minhash state holds 16-byte band keys: a text (str) or a key of
// another size cannot be one, so it is refused rather than answered False.
void check_band_key(const ReadOnlyState& st, PyObject* item, std::string_view bytes,
                    std::size_t index) {
  if (st.key_scheme().unit != bloomshard::core::KeyUnit::kMinHash) return;
  if (PyUnicode_Check(item)) {
    throw py::value_error("key " + std::to_string(index) +
                          " is a str: a --unit minhash state holds 16-byte band keys (bytes, "
                          "docs/near-duplicates.md section 4); the module does not sketch text");
  }
  if (bytes.size() != 16) {
    throw py::value_error("key " + std::to_string(index) + " has " + std::to_string(bytes.size()) +
                          " bytes: a --unit minhash state holds 16-byte band keys");
  }
}

py::list lookup(const ReadOnlyState& st, const py::handle& keys, bool exact) {
  KeyBatch b = read_keys(keys);
  for (std::size_t i = 0; i < b.views.size(); ++i) {
    check_band_key(st, PySequence_Fast_ITEMS(b.seq.ptr())[i], b.views[i], i);
  }
  std::vector<Answer> out(b.views.size());
  {
    py::gil_scoped_release release;
    st.lookup(b.views, out, exact);
  }
  py::list result(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    PyObject* v = out[i] == Answer::kPresent ? Py_True : Py_False;
    Py_INCREF(v);
    PyList_SET_ITEM(result.ptr(), static_cast<Py_ssize_t>(i), v);
  }
  return result;
}

bool lookup_one(const ReadOnlyState& st, const py::handle& key, bool exact) {
  std::string copy;
  const std::string_view v = key_view(key.ptr(), 0, &copy);
  check_band_key(st, key.ptr(), v, 0);
  Answer a{};
  st.lookup({&v, 1}, {&a, 1}, exact);
  return a == Answer::kPresent;
}

// The fields of `bloomshard info --json` that come from the checkpoint
// header, runs and layers (the Python side adds the manifest's).
py::dict info_base(const ReadOnlyState& st) {
  const auto& s = st.summary();
  const auto& h = s.header;
  py::dict d;
  d["file"] = st.generation_file().string();
  d["generation"] = h.generation;
  d["run_id"] = h.run_id;
  d["state"] = h.finished ? "finished" : "unfinished";
  d["format_version"] = h.format_version;
  d["tool_version"] = h.tool_version;
  d["hash_scheme"] = h.hash_scheme;
  d["normalization"] = h.normalization;
  d["key_field"] = h.key_field;
  // As `bloomshard info --json` words it (app::describe_key_scheme).
  d["key_scheme"] = "normalize=" + bloomshard::core::policy_label(st.key_scheme().normalize) +
                    "; " + bloomshard::core::key_scheme_items(st.key_scheme());
  d["slices"] = h.params.num_slices;
  d["written_by_ranks"] = s.written_by_ranks;
  d["exact_keys"] = s.tier2_keys;
  d["exact_key_bytes"] = s.tier2_bytes;
  // As `bloomshard info --json`: a confirming minhash state's forms, one per key.
  d["confirmation_forms"] = st.form_bytes() != 0 ? s.tier2_keys : 0;
  d["confirmation_form_bytes"] = st.form_bytes();
  d["confirmation_form_origins"] = st.form_bytes() != 0 && st.origins() ? s.tier2_keys : 0;
  py::list runs;
  const std::vector<std::filesystem::path> files = st.run_files();
  std::uint64_t run_file_bytes = 0;
  for (std::size_t i = 0; i < s.runs.size(); ++i) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(files[i], ec);
    const std::uint64_t bytes = ec ? 0 : static_cast<std::uint64_t>(size);
    run_file_bytes += bytes;
    py::dict r;
    r["file"] = files[i].filename().string();
    r["level"] = s.runs[i].level;
    r["keys"] = s.runs[i].keys;
    r["key_bytes"] = s.runs[i].bytes;
    r["file_bytes"] = bytes;
    runs.append(r);
  }
  d["run_count"] = s.runs.size();
  d["run_file_bytes"] = run_file_bytes;
  d["runs"] = runs;
  py::list layers;
  double cardinality = 0, fpr = 0;
  for (const auto& l : s.layers) {
    // The same estimates as `bloomshard info` (src/app/state/state_commands.cpp).
    const double bits = static_cast<double>(l.geometry.blocks_per_slice) * 512.0 *
                        static_cast<double>(h.params.num_slices);
    const double n = static_cast<double>(l.inserted);
    const double layer_fpr = n > 0 ? bloomshard::core::blocked_fpr(bits / n, l.geometry.k) : 0.0;
    cardinality += n;
    fpr += layer_fpr;
    py::dict e;
    e["capacity"] = l.geometry.capacity;
    e["inserted"] = l.inserted;
    e["k"] = l.geometry.k;
    e["bits"] = static_cast<std::uint64_t>(bits);
    e["fill_estimate"] = 1.0 - std::exp(-static_cast<double>(l.geometry.k) * n / bits);
    e["fpr_target"] = l.geometry.fpr_target;
    e["fpr_estimate"] = layer_fpr;
    layers.append(e);
  }
  d["layers"] = layers;
  d["cardinality_estimate"] = cardinality;
  d["fpr_estimate"] = fpr;
  // `bloomshard info` checks no slice (false); the module does with verify=True.
  d["checksums_verified"] = st.verified_at_open();
  // An open state passed the header check (open refuses one that fails),
  // as `bloomshard info` reports it.
  d["header_checked"] = true;
  return d;
}

py::dict check_progress(const ReadOnlyState& st) {
  const bloomshard::python::CheckProgress c = st.check_progress();
  py::dict d;
  d["bloom_slices"] = c.bloom_slices;
  d["bloom_checked"] = c.bloom_good;
  d["tier2_slices"] = c.tier2_slices;
  d["tier2_checked"] = c.tier2_good;
  d["checks_run"] = c.checks_run;
  return d;
}

}  // namespace

PYBIND11_MODULE(_bloomshard, m) {
  m.doc() = "bloomshard saved states, read-only (C++ extension; use the bloomshard package)";
  static py::exception<StateError> state_error(m, "StateError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StateError& e) {
      PyErr_SetString(state_error.ptr(), e.what());
    } catch (const bloomshard::core::InvalidUtf8Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::class_<ReadOnlyState>(m, "_State")
      .def_static(
          "open",
          [](const std::filesystem::path& path, bool verify, std::optional<std::uint64_t> g) {
            return ReadOnlyState::open(path, OpenOptions{verify, g});
          },
          py::arg("path"), py::arg("verify") = false, py::arg("generation") = py::none())
      .def("info_base", &info_base)
      .def("check_progress", &check_progress)
      .def_property_readonly(
          "manifest_json", [](const ReadOnlyState& s) { return s.summary().header.manifest_json; })
      .def_property_readonly("generation",
                             [](const ReadOnlyState& s) { return s.summary().header.generation; })
      .def_property_readonly("hash_seed",
                             [](const ReadOnlyState& s) { return s.summary().header.hash_seed; })
      .def_property_readonly(
          "normalization", [](const ReadOnlyState& s) { return s.summary().header.normalization; })
      .def(
          "normalize",
          [](const ReadOnlyState& s, const py::handle& key) {
            std::string copy;
            return py::bytes(s.normalize(key_view(key.ptr(), 0, &copy)));
          },
          py::arg("key"))
      .def(
          "contains",
          [](const ReadOnlyState& s, const py::handle& k) { return lookup(s, k, true); },
          py::arg("keys"))
      .def(
          "maybe", [](const ReadOnlyState& s, const py::handle& k) { return lookup(s, k, false); },
          py::arg("keys"))
      .def(
          "contains_one",
          [](const ReadOnlyState& s, const py::handle& k) { return lookup_one(s, k, true); },
          py::arg("key"))
      .def(
          "maybe_one",
          [](const ReadOnlyState& s, const py::handle& k) { return lookup_one(s, k, false); },
          py::arg("key"));

  // For tests and docs: the C++ hash of the key bytes (after normalization
  // by the caller), as (hi, lo), and the probe ISA the batch path uses.
  m.def(
      "hash_key",
      [](const py::bytes& key, std::uint64_t seed) {
        const auto h = bloomshard::core::hash_key(std::string_view(key), seed);
        return py::make_tuple(h.hi, h.lo);
      },
      py::arg("key"), py::arg("seed") = bloomshard::core::kDefaultHashSeed);
  m.def("probe_isa", [] {
    return std::string(bloomshard::core::probe_isa_name(bloomshard::core::probe_isa()));
  });
  m.def("unicode_version",
        [] { return std::string(bloomshard::core::normalization_unicode_version()); });
}
