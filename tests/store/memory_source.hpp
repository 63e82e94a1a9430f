// An in-memory FileSource for the store's tests: attributes and datasets
// set by the test, so the index reader and slice views run without HDF5.
// A dataset placed in a real file (placement) lets slice views map it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bloomshard/store/file_source.hpp"

namespace bloomshard::store::testing {

class MemorySource final : public FileSource {
 public:
  using Value = std::variant<std::uint64_t, double, std::string>;
  struct Dataset {
    std::vector<std::uint64_t> dims;
    std::vector<std::uint64_t> values;  // read_u64
    std::optional<std::string> text;    // read_fixed_string
    std::uint64_t storage = 0;
    DatasetPlacement placement{true, std::nullopt};
  };

  void attr(const std::string& object, const std::string& name, Value v) {
    attrs_[{object, name}] = std::move(v);
  }
  void erase_attr(const std::string& object, const std::string& name) {
    attrs_.erase({object, name});
  }
  void group(const std::string& path) { groups_[path] = true; }
  void erase_group(const std::string& path) { groups_.erase(path); }
  Dataset& dataset(const std::string& path) { return datasets_[path]; }
  void u64s(const std::string& path, std::vector<std::uint64_t> values) {
    Dataset& d = datasets_[path];
    d.dims = {values.size()};
    d.storage = values.size() * 8;
    d.values = std::move(values);
  }
  void erase_dataset(const std::string& path) { datasets_.erase(path); }

  bool has_attr(const std::string& object, const char* name) const override {
    return attrs_.count({object, name}) != 0;
  }
  std::uint64_t attr_u64(const std::string& object, const char* name) const override {
    return std::get<std::uint64_t>(get(object, name));
  }
  double attr_f64(const std::string& object, const char* name) const override {
    const Value& v = get(object, name);
    if (const auto* u = std::get_if<std::uint64_t>(&v)) return static_cast<double>(*u);
    return std::get<double>(v);
  }
  std::string attr_string(const std::string& object, const char* name) const override {
    return std::get<std::string>(get(object, name));
  }
  bool has_link(const std::string& path) const override {
    return datasets_.count(path) != 0 || groups_.count(path) != 0;
  }
  std::vector<std::uint64_t> dims(const std::string& path) const override {
    return find(path).dims;
  }
  std::uint64_t storage_bytes(const std::string& path) const override { return find(path).storage; }
  std::vector<std::uint64_t> read_u64(const std::string& path) const override {
    return find(path).values;
  }
  std::optional<std::string> read_fixed_string(const std::string& path) const override {
    return find(path).text;
  }
  DatasetPlacement placement(const std::string& path) const override {
    return find(path).placement;
  }

 private:
  const Value& get(const std::string& object, const char* name) const {
    const auto it = attrs_.find({object, name});
    if (it == attrs_.end()) throw std::logic_error("no attribute " + object + " " + name);
    return it->second;
  }
  const Dataset& find(const std::string& path) const {
    const auto it = datasets_.find(path);
    if (it == datasets_.end()) throw std::logic_error("no dataset " + path);
    return it->second;
  }
  std::map<std::pair<std::string, std::string>, Value> attrs_;
  std::map<std::string, Dataset> datasets_;
  std::map<std::string, bool> groups_;
};

}  // namespace bloomshard::store::testing
