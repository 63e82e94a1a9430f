// libFuzzer target: the checkpoint loader's checks of what it read from an
// untrusted state. The first byte chooses the mode:
//   even: structures fed straight to the pure validators
//         (io/checkpoint/checkpoint_validate.hpp), each answer compared with an
//         independent oracle (128-bit sums, plain loops);
//   odd:  a copy of the checked-in tiny state (checkpoint_seed/: one format-2
//         generation and its run files) changed THROUGH THE HDF5 API by up
//         to 8 fuzzed edits (attribute values, types and presence; dataset
//         elements, lengths, types and presence), then read back by
//         read_checkpoint_summary, load_checkpoint (tier-2 checks on or off)
//         and verify_checkpoint. Each must refuse with CheckpointError or
//         succeed; a loaded set then answers lookups of the seed's keys (the
//         tier-2 views the loader attached are searched). No other exception,
//         crash, sanitizer report or leak is allowed.
// Editing through HDF5 rather than flipping file bytes keeps the fuzzing on
// what we own: HDF5's own parser is not hardened against hostile files
// (docs/reliability.md); BLOOMSHARD_FUZZ_RAW_BYTES=1 adds raw byte flips of
// the copy for a separate, reported-apart run.
//
// Runs as an MPI singleton (1 rank); Open MPI's own allocations at exit are
// suppressed for LeakSanitizer, nothing else is.
#include <hdf5.h>
#include <sanitizer/lsan_interface.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "comm/environment.hpp"
#include "io/checkpoint/checkpoint_error.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/checkpoint/checkpoint_validate.hpp"

#ifndef BLOOMSHARD_FUZZ_CHECKPOINT_SEED
#error "BLOOMSHARD_FUZZ_CHECKPOINT_SEED (the seed state dir) must be defined"
#endif

// TLS is not scanned for roots: LeakSanitizer's check at exit crashed
// ("Tracer caught signal 11: addr=0xc80") on a dynamic TLS block of a
// module unloaded at run time whose DTV entry is left stale (with
// LSAN_OPTIONS=verbosity=1: "DTLS 8 at 0x000000000c7f-0x000400002981"; seen
// on every run of 2026-12-06, fresh clone, Debian 12). Not scanning TLS can
// only add reports (a block reachable only from TLS would count as leaked),
// never hide one; none is reported.
extern "C" const char* __lsan_default_options() { return "use_tls=0"; }

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libhwloc.so\n"
         "leak:libpmix.so\nleak:libevent\nleak:mca_\n";
}

namespace {

namespace fs = std::filesystem;
namespace io = bloomshard::io;
namespace core = bloomshard::core;
using u128 = unsigned __int128;

// A little reader over the fuzz input; reads past the end give zeros.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t{u8()} << (8 * i);
    return v;
  }
  // A value that is often small, an edge, or anything.
  std::uint64_t value() {
    switch (u8() % 4) {
      case 0:
        return u8();
      case 1:
        return std::numeric_limits<std::uint64_t>::max() - u8();
      case 2:
        return std::uint64_t{1} << (u8() % 64);
      default:
        return u64();
    }
  }
  bool empty() const { return pos_ >= size_; }
  std::size_t left() const { return size_ - std::min(pos_, size_); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// ---- mode 0: the pure validators against an oracle ----

std::vector<std::uint64_t> column(Bytes& in, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = in.value();
  return v;
}

void fuzz_tier2_extents(Bytes& in) {
  const std::size_t p = in.u8() % 40;
  const std::size_t q = in.u8() % 8 == 0 ? in.u8() % 40 : p;  // sometimes unequal
  const std::vector<std::uint64_t> keys = column(in, p), bytes = column(in, q);
  bool want_throw = p != q;
  u128 k = 0, b = 0;
  std::vector<u128> ks{0}, bs{0};
  const u128 max = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < std::min(p, q) && !want_throw; ++i) {
    k += keys[i];
    b += bytes[i];
    if (k > max || b > max) want_throw = true;
    ks.push_back(k);
    bs.push_back(b);
  }
  if (!want_throw && (k * 8 > max || (k + p) * 8 > max)) want_throw = true;
  try {
    const io::Tier2Extents e = io::tier2_extents(keys, bytes, "fuzz");
    if (want_throw) std::abort();
    if (e.key_start.size() != p + 1 || e.byte_start.size() != p + 1) std::abort();
    for (std::size_t i = 0; i <= p; ++i) {
      if (e.key_start[i] != ks[i] || e.byte_start[i] != bs[i]) std::abort();
    }
    if (e.keys != k || e.bytes != b) std::abort();
  } catch (const io::CheckpointError& err) {
    if (!want_throw) std::abort();
    if (std::string_view(err.what()).find("fuzz") != 0) std::abort();  // names what
  }
}

void fuzz_check_offsets(Bytes& in) {
  const std::size_t n = in.u8() % 40;
  std::vector<std::uint64_t> off(n);
  // Mostly non-decreasing runs from 0, so the later checks get reached.
  std::uint64_t at = 0;
  for (auto& x : off) {
    const std::uint8_t how = in.u8();
    if (how % 8 == 0) {
      x = in.value();
    } else {
      at += how % 16;
      x = at;
    }
  }
  if (!off.empty() && in.u8() % 2 == 0) off[0] = 0;
  const std::uint64_t bytes = in.u8() % 2 == 0 && !off.empty() ? off.back() : in.value();
  bool ok = !off.empty() && off.front() == 0 && off.back() == bytes;
  for (std::size_t i = 1; i < n; ++i) ok = ok && off[i] >= off[i - 1];
  const std::string problem = io::check_offsets(off, bytes);
  if (problem.empty() != ok) std::abort();
}

void fuzz_check_run_list(Bytes& in) {
  std::size_t r = in.u8() % 24;
  if (in.u8() % 64 == 0) r = io::kMaxRunsPerGeneration + in.u8() % 2;
  std::vector<std::size_t> len(4, r);
  if (in.u8() % 8 == 0) len[in.u8() % 4] = in.u8() % 24;
  std::vector<std::uint64_t> ids(len[0]), levels(len[1]), keys(len[2]), bytes(len[3]);
  for (auto& x : ids) x = in.u8() % 4 == 0 ? in.value() : in.u8();  // duplicates likely
  for (auto& x : levels) x = in.u8() % 8 == 0 ? in.value() : in.u8() % 4;
  for (auto& x : keys) x = in.value();
  for (auto& x : bytes) x = in.value();
  bool want_throw =
      len[0] != r || len[1] != r || len[2] != r || len[3] != r || r > io::kMaxRunsPerGeneration;
  u128 k = 0, b = 0;
  for (std::size_t i = 0; i < r && !want_throw; ++i) {
    if (levels[i] > std::numeric_limits<std::uint32_t>::max()) want_throw = true;
    k += keys[i];
    b += bytes[i];
    if (k > std::numeric_limits<std::uint64_t>::max() ||
        b > std::numeric_limits<std::uint64_t>::max()) {
      want_throw = true;
    }
    for (std::size_t j = 0; j < i; ++j) want_throw = want_throw || ids[j] == ids[i];
  }
  try {
    io::check_run_list(ids, levels, keys, bytes);
    if (want_throw) std::abort();
  } catch (const io::CheckpointError& err) {
    if (!want_throw || std::strlen(err.what()) == 0) std::abort();
  }
}

void fuzz_checked_arith(Bytes& in) {
  const std::uint64_t a = in.value(), b = in.value();
  const u128 max = std::numeric_limits<std::uint64_t>::max();
  try {
    if (io::checked_add(a, b, "add") != static_cast<std::uint64_t>(u128{a} + b)) std::abort();
    if (u128{a} + b > max) std::abort();
  } catch (const io::CheckpointError&) {
    if (u128{a} + b <= max) std::abort();
  }
  try {
    if (io::checked_mul(a, b, "mul") != static_cast<std::uint64_t>(u128{a} * b)) std::abort();
    if (u128{a} * b > max) std::abort();
  } catch (const io::CheckpointError&) {
    if (u128{a} * b <= max) std::abort();
  }
}

void fuzz_validators(Bytes& in) {
  while (!in.empty()) {
    switch (in.u8() % 4) {
      case 0:
        fuzz_tier2_extents(in);
        break;
      case 1:
        fuzz_check_offsets(in);
        break;
      case 2:
        fuzz_check_run_list(in);
        break;
      default:
        fuzz_checked_arith(in);
        break;
    }
  }
}

// ---- mode 1: a real state, edited through HDF5, then loaded ----

// Something an edit can reach: an attribute (attr non-empty) of an object,
// or a dataset (attr empty), in seed file `file`.
struct Target {
  std::size_t file;
  std::string object;
  std::string attr;
};

struct Seed {
  fs::path dir;
  std::vector<std::string> files;  // names in dir, sorted
  std::string generation;          // ckpt-<g>.h5
  std::vector<Target> targets;
  std::vector<std::string> keys;  // keys the seed state holds (from keys.txt)
};

const Seed* g_seed = nullptr;  // set once by LLVMFuzzerInitialize

herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

void add_object(Seed& seed, std::size_t f, hid_t file, const std::string& path, bool dataset) {
  if (dataset) seed.targets.push_back({f, path, ""});
  std::vector<std::string> attrs;
  hsize_t idx = 0;
  H5Aiterate_by_name(file, path.c_str(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &attrs,
                     H5P_DEFAULT);
  for (auto& a : attrs) seed.targets.push_back({f, path, a});
}

struct VisitCtx {
  Seed* seed;
  std::size_t f;
};

herr_t visit_link(hid_t file, const char* name, const H5L_info_t*, void* data) {
  auto* ctx = static_cast<VisitCtx*>(data);
  const std::string path = std::string("/") + name;
  const hid_t d = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (d >= 0) H5Dclose(d);
  add_object(*ctx->seed, ctx->f, file, path, d >= 0);
  return 0;
}

Seed load_seed() {
  Seed s;
  s.dir = BLOOMSHARD_FUZZ_CHECKPOINT_SEED;
  for (const auto& e : fs::directory_iterator(s.dir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".h5") s.files.push_back(name);
    if (name.rfind("ckpt-", 0) == 0) s.generation = name;
  }
  std::sort(s.files.begin(), s.files.end());
  if (s.generation.empty()) {
    std::fprintf(stderr, "fuzz_checkpoint_loader: no ckpt-<g>.h5 in %s\n", s.dir.c_str());
    std::abort();
  }
  for (std::size_t f = 0; f < s.files.size(); ++f) {
    const hid_t file = H5Fopen((s.dir / s.files[f]).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) std::abort();
    add_object(s, f, file, "/", false);
    VisitCtx ctx{&s, f};
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &ctx);
    H5Fclose(file);
  }
  std::ifstream keys(s.dir / "keys.txt");
  for (std::string k; std::getline(keys, k);) s.keys.push_back(k);
  return s;
}

// Whole dataset or attribute as u64 values (integers) or raw bytes (others).
struct Cells {
  hid_t type = -1;  // a copy of the stored type
  H5T_class_t cls = H5T_NO_CLASS;
  std::vector<hsize_t> dims;
  std::size_t n = 0;
  std::vector<std::uint64_t> ints;
  std::vector<char> raw;
};

// Stored type as a HDF5 memory type for reading `c` back.
hid_t mem_type(const Cells& c) { return c.cls == H5T_INTEGER ? H5T_NATIVE_UINT64 : c.type; }

bool read_cells(hid_t obj, bool attr, Cells& c) {
  c.type = attr ? H5Aget_type(obj) : H5Dget_type(obj);
  if (c.type < 0) return false;
  c.cls = H5Tget_class(c.type);
  if (c.cls == H5T_STRING && H5Tis_variable_str(c.type) > 0) return false;
  const hid_t space = attr ? H5Aget_space(obj) : H5Dget_space(obj);
  const int rank = H5Sget_simple_extent_ndims(space);
  c.dims.assign(static_cast<std::size_t>(std::max(rank, 0)), 0);
  if (rank > 0) H5Sget_simple_extent_dims(space, c.dims.data(), nullptr);
  c.n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  H5Sclose(space);
  if (c.n > (std::size_t{1} << 20)) return false;  // the seed is tiny
  if (c.cls == H5T_INTEGER) {
    c.ints.resize(c.n);
    if (c.n == 0) return true;
    return (attr ? H5Aread(obj, H5T_NATIVE_UINT64, c.ints.data())
                 : H5Dread(obj, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.ints.data())) >=
           0;
  }
  c.raw.resize(c.n * H5Tget_size(c.type));
  if (c.n == 0) return true;
  return (attr ? H5Aread(obj, c.type, c.raw.data())
               : H5Dread(obj, c.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.raw.data())) >= 0;
}

// Datasets are written in place. Attributes are not: HDF5 1.10.8 itself
// overruns a heap buffer in H5Awrite on an attribute that an earlier edit
// deleted and recreated with another length (found by this target, inside
// libhdf5, in the harness's own editing), so an edited attribute is
// written by rewrite_attribute() into a fresh one instead.
void write_cells(hid_t obj, bool attr, const Cells& c) {
  const void* buf = c.cls == H5T_INTEGER ? static_cast<const void*>(c.ints.data())
                                         : static_cast<const void*>(c.raw.data());
  if (c.n == 0 || attr) return;
  H5Dwrite(obj, mem_type(c), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
}

void rewrite_attribute(hid_t file, const Target& t, const Cells& c) {
  H5Adelete_by_name(file, t.object.c_str(), t.attr.c_str(), H5P_DEFAULT);
  std::vector<hsize_t> dims(c.dims.begin(), c.dims.end());
  const hid_t space = dims.empty()
                          ? H5Screate(H5S_SCALAR)
                          : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t a = H5Acreate_by_name(file, t.object.c_str(), t.attr.c_str(), c.type, space,
                                    H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Sclose(space);
  if (a < 0) return;
  const void* buf = c.cls == H5T_INTEGER ? static_cast<const void*>(c.ints.data())
                                         : static_cast<const void*>(c.raw.data());
  if (c.n > 0) H5Awrite(a, mem_type(c), buf);
  H5Aclose(a);
}

// Replaces target `t` by a new object of `type` and `dims` holding `c`'s
// values (converted) or nothing more than their prefix.
void recreate(hid_t file, const Target& t, hid_t type, std::vector<hsize_t> dims, Cells c) {
  std::size_t n = 1;
  for (hsize_t d : dims) n *= static_cast<std::size_t>(d);
  const bool attr = !t.attr.empty();
  if (attr) {
    H5Adelete_by_name(file, t.object.c_str(), t.attr.c_str(), H5P_DEFAULT);
  } else {
    H5Ldelete(file, t.object.c_str(), H5P_DEFAULT);
  }
  const hid_t space = dims.empty()
                          ? H5Screate(H5S_SCALAR)
                          : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t obj = -1;
  if (attr) {
    obj = H5Acreate_by_name(file, t.object.c_str(), t.attr.c_str(), type, space, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT);
  } else {
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(dcpl, H5D_CONTIGUOUS);
    obj = H5Dcreate2(file, t.object.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
  }
  H5Sclose(space);
  if (obj < 0) return;
  const H5T_class_t new_cls = H5Tget_class(type);
  if (new_cls == H5T_INTEGER || new_cls == H5T_FLOAT) {
    std::vector<std::uint64_t> v(n, 0);
    for (std::size_t i = 0; i < std::min(n, c.ints.size()); ++i) v[i] = c.ints[i];
    if (n > 0) {
      if (attr) {
        H5Awrite(obj, H5T_NATIVE_UINT64, v.data());
      } else {
        H5Dwrite(obj, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      }
    }
  } else if (new_cls == H5T_STRING) {
    std::vector<char> v(n * H5Tget_size(type), 'x');
    // Integers become their decimal text ("5" for a count), others their bytes.
    std::string text = c.raw.empty() && !c.ints.empty() ? std::to_string(c.ints[0])
                                                        : std::string(c.raw.begin(), c.raw.end());
    std::copy_n(text.begin(), std::min(v.size(), text.size()), v.begin());
    if (n > 0) {
      if (attr) {
        H5Awrite(obj, type, v.data());
      } else {
        H5Dwrite(obj, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      }
    }
  }
  if (attr) {
    H5Aclose(obj);
  } else {
    H5Dclose(obj);
  }
}

// One edit: kind, target, index, value from the input.
void edit(hid_t file, const Target& t, Bytes& in) {
  const std::uint8_t kind = in.u8();
  const std::uint32_t index = in.u32();
  const std::uint64_t value = in.value();
  const bool attr = !t.attr.empty();
  const hid_t obj =
      attr ? H5Aopen_by_name(file, t.object.c_str(), t.attr.c_str(), H5P_DEFAULT, H5P_DEFAULT)
           : H5Dopen2(file, t.object.c_str(), H5P_DEFAULT);
  if (obj < 0) return;  // removed by an earlier edit
  Cells c;
  const bool ok = read_cells(obj, attr, c);
  static const bool trace = std::getenv("BLOOMSHARD_FUZZ_TRACE") != nullptr;
  if (trace) {  // to read a reproducer: which edit of what
    std::fprintf(
        stderr, "edit %u of %s%s%s (class %d, %zu values, %zu dims): index %u value %llu\n",
        kind % 8U, t.object.c_str(), attr ? " @" : "", t.attr.c_str(), static_cast<int>(c.cls), c.n,
        c.dims.size(), index, static_cast<unsigned long long>(value));
  }
  const auto close_obj = [&] {
    if (attr) {
      H5Aclose(obj);
    } else {
      H5Dclose(obj);
    }
  };
  if (!ok) {
    if (c.type >= 0) H5Tclose(c.type);
    close_obj();
    return;
  }
  const std::size_t at = c.n == 0 ? 0 : index % c.n;
  switch (kind % 8) {
    case 0:  // set one value
    case 1:  // or nudge it by -2..+2 (off by one is what a bug writes)
      if (c.n == 0) break;
      if (c.cls == H5T_INTEGER) {
        c.ints[at] = kind % 8 == 0 ? value : c.ints[at] + (value % 5) - 2;
      } else if (c.cls == H5T_FLOAT && H5Tget_size(c.type) == 8) {
        double d = 0;
        std::memcpy(&d, c.raw.data() + at * 8, 8);
        d = kind % 8 == 0 ? static_cast<double>(static_cast<std::int64_t>(value)) / 1024.0
                          : d * (1.0 + static_cast<double>(value % 5) - 2.0);
        if (value % 17 == 0) std::memcpy(&d, &value, 8);  // NaN, inf, denormals
        std::memcpy(c.raw.data() + at * 8, &d, 8);
      } else if (!c.raw.empty()) {
        c.raw[index % c.raw.size()] = static_cast<char>(value);
      }
      write_cells(obj, attr, c);
      break;
    case 2:  // swap two values (order, not content)
      if (c.n < 2) break;
      if (c.cls == H5T_INTEGER) {
        std::swap(c.ints[at], c.ints[value % c.n]);
      } else if (!c.raw.empty()) {
        std::swap(c.raw[index % c.raw.size()], c.raw[value % c.raw.size()]);
      }
      write_cells(obj, attr, c);
      break;
    case 3:  // flip one bit
      if (c.cls == H5T_INTEGER && c.n > 0) {
        c.ints[at] ^= std::uint64_t{1} << (value % 64);
      } else if (!c.raw.empty()) {
        c.raw[index % c.raw.size()] ^= static_cast<char>(1 << (value % 8));
      }
      write_cells(obj, attr, c);
      break;
    case 4: {  // remove it
      close_obj();
      if (attr) {
        H5Adelete_by_name(file, t.object.c_str(), t.attr.c_str(), H5P_DEFAULT);
      } else {
        H5Ldelete(file, t.object.c_str(), H5P_DEFAULT);
      }
      H5Tclose(c.type);
      return;
    }
    case 5: {  // another length (or rank: 1-D of n', or 2-D when it was 1-D)
      close_obj();
      std::vector<hsize_t> dims{value % (2 * c.n + 3)};
      if (c.dims.size() == 1 && index % 4 == 0) dims = {2, c.dims[0]};
      if (c.dims.empty() && index % 2 == 0) dims.clear();  // stays scalar
      const hid_t type = H5Tcopy(c.type);
      recreate(file, t, type, dims, c);
      H5Tclose(type);
      H5Tclose(c.type);
      return;
    }
    default: {  // another type: u8, u32, f64 or a short fixed string
      close_obj();
      hid_t type = -1;
      switch (value % 4) {
        case 0:
          type = H5Tcopy(H5T_STD_U8LE);
          break;
        case 1:
          type = H5Tcopy(H5T_STD_I32LE);
          break;
        case 2:
          type = H5Tcopy(H5T_IEEE_F64LE);
          break;
        default:
          type = H5Tcopy(H5T_C_S1);
          H5Tset_size(type, 1 + index % 40);
          break;
      }
      recreate(file, t, type, c.dims, c);
      H5Tclose(type);
      H5Tclose(c.type);
      return;
    }
  }
  close_obj();
  if (attr && kind % 8 <= 3) rewrite_attribute(file, t, c);
  H5Tclose(c.type);
}

// The seed's files copied to a scratch dir (tmpfs), once per input; removed
// at exit (the path is never destroyed, so the exit handler can use it).
const fs::path& scratch_dir() {
  static const fs::path* dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    auto* d = new fs::path(base / ("bloomshard-fuzz-ckpt-" + std::to_string(::getpid())));
    fs::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

void flip_raw_bytes(const fs::path& file, Bytes& in) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  const auto size = static_cast<std::uint64_t>(fs::file_size(file));
  for (int i = 0; i < 4 && size > 0; ++i) {
    f.seekp(static_cast<std::streamoff>(in.u32() % size));
    f.put(static_cast<char>(in.u8()));
  }
}

void exercise(const io::LoadedCheckpoint& loaded, const Seed& seed) {
  core::TwoTierSet& set = *loaded.set;
  const std::uint64_t hash_seed = loaded.summary.header.hash_seed;
  // Every key of the seed: Bloom "maybe" sends it to the tier-2 views.
  for (const std::string& k : seed.keys) {
    const core::KeyRef ref{core::hash_key(k, hash_seed), k};
    try {
      (void)set.decide(ref);
    } catch (const std::invalid_argument&) {
      // A key whose slice this set does not own: fine.
    }
  }
}

void fuzz_state(Bytes& in, const Seed& seed, const bloomshard::comm::Communicator& comm) {
  const fs::path dir = scratch_dir();
  for (const auto& e : fs::directory_iterator(dir)) fs::remove(e.path());
  for (const std::string& f : seed.files) {
    fs::copy_file(seed.dir / f, dir / f, fs::copy_options::overwrite_existing);
  }
  const std::uint8_t flags = in.u8();
  const std::size_t edits = 1 + in.u8() % 8;
  for (std::size_t i = 0; i < edits && !in.empty(); ++i) {
    const Target& t = seed.targets[in.u32() % seed.targets.size()];
    const hid_t file = H5Fopen((dir / seed.files[t.file]).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (file < 0) continue;
    edit(file, t, in);
    H5Fclose(file);
  }
  static const bool raw = std::getenv("BLOOMSHARD_FUZZ_RAW_BYTES") != nullptr;
  if (raw && (flags & 4U) != 0) {
    flip_raw_bytes(dir / seed.files[in.u8() % seed.files.size()], in);
  }
  const fs::path gen = dir / seed.generation;
  try {
    (void)io::read_checkpoint_summary(gen);
  } catch (const io::CheckpointError&) {
  }
  try {
    const bool verify = (flags & 1U) != 0;
    std::uint32_t p = 0;
    try {
      p = io::read_checkpoint_summary(gen).header.params.num_slices;
    } catch (const io::CheckpointError&) {
      p = 4;
    }
    // All slices, or a part: a rank of a larger job.
    const core::SliceRange owned =
        (flags & 2U) != 0 ? core::SliceRange{0, p} : core::SliceRange{p / 2, p};
    const io::LoadedCheckpoint loaded = io::load_checkpoint(comm, gen, owned, verify);
    exercise(loaded, seed);
  } catch (const io::CheckpointError&) {
  }
  const io::VerifyReport report = io::verify_checkpoint(comm, gen);
  if (!report.ok && report.problems.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Open MPI's start-up (MPI_Init, and the MPI-IO components the first
  // parallel HDF5 open loads) keeps allocations in components it later
  // unloads, which LeakSanitizer can then neither free nor name: they are
  // made here with leak tracking off, before any input. Every input is
  // leak-checked by libFuzzer as usual, MPI and HDF5 calls included. MPI is
  // never finalized (finalizing unloads the components).
  __lsan_disable();
  static auto* env =
      new bloomshard::comm::Environment(*argc, *argv, bloomshard::comm::ThreadLevel::kSingle);
  (void)env;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  g_seed = new Seed([] {
    Seed s = load_seed();
    // The unedited seed must load and verify: otherwise every input would
    // be a refusal and the target would test nothing.
    const bloomshard::comm::Communicator comm;
    const fs::path gen = s.dir / s.generation;
    const io::LoadedCheckpoint loaded = io::load_checkpoint(
        comm, gen, {0, io::read_checkpoint_summary(gen).header.params.num_slices});
    if (!io::verify_checkpoint(comm, gen).ok || s.keys.empty()) std::abort();
    for (const std::string& k : s.keys) {
      const core::KeyRef ref{core::hash_key(k, loaded.summary.header.hash_seed), k};
      if (loaded.set->decide(ref) != core::Verdict::kDuplicate) std::abort();
    }
    return s;
  }());
  __lsan_enable();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  Bytes in(data + 1, size - 1);
  if ((data[0] & 1U) == 0) {
    fuzz_validators(in);
    return 0;
  }
  static const bloomshard::comm::Communicator comm;
  fuzz_state(in, *g_seed, comm);
  return 0;
}
