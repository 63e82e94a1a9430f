#include "test_checkpoint_util.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "comm/mpi_error.hpp"
#include "io/hdf5/hdf5_parallel.hpp"

namespace bloomshard::io::test {

SharedTempDir::SharedTempDir(const comm::Communicator& comm) : comm_(comm) {
  std::string name;
  if (comm.rank() == 0) {
    std::string tmpl = "/tmp/bloomshard_ckpt_XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) name = tmpl;
  }
  name = comm.broadcast(name);
  if (name.empty()) throw std::runtime_error("mkdtemp failed on rank 0");
  path_ = name;
}

SharedTempDir::~SharedTempDir() {
  comm_.barrier();
  if (comm_.rank() == 0) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

SubComm::SubComm(const comm::Communicator& world, int n) {
  const int color = world.rank() < n ? 0 : MPI_UNDEFINED;
  comm::check_mpi(MPI_Comm_split(world.mpi_comm(), color, world.rank(), &comm_), "MPI_Comm_split");
}

SubComm::~SubComm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

core::ScalableBloomParams test_params() {
  core::ScalableBloomParams p;
  p.num_slices = 48;
  p.initial_capacity = 1500;
  p.fpr_target = 0.01;
  return p;
}

core::SliceRange owned_by(const comm::Communicator& c) {
  return core::slices_of_rank(c.urank(), c.usize(), test_params().num_slices);
}

std::vector<std::string> test_keys(int batch, int count) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const int id = batch * 100000 + i;
    std::string k = "key-" + std::to_string(id);
    k.append(static_cast<std::size_t>(id % 23), static_cast<char>('a' + id % 26));
    if (i % 97 == 0) k.push_back('\0');
    if (i % 89 == 0) k += "\xc3\xa9\xff";
    keys.push_back(std::move(k));
    if (i % 10 == 0) keys.push_back(keys[keys.size() / 2]);  // duplicates
  }
  if (batch == 0 && count > 0) keys.emplace_back();  // the empty key
  return keys;
}

std::unique_ptr<core::TwoTierSet> build_set(core::SliceRange owned, int batches, int count) {
  auto set = std::make_unique<core::TwoTierSet>(test_params(), owned);
  set->bloom().set_auto_grow(false);
  const std::uint32_t p = test_params().num_slices;
  for (int b = 0; b < batches; ++b) {
    if (b > 0) set->bloom().add_layer();
    for (const std::string& k : test_keys(b, count)) {
      const core::KeyHash h = core::hash_key(k);
      if (owned.contains(core::slice_of(h, p))) (void)set->decide({h, k});
    }
  }
  return set;
}

std::vector<CheckpointLayerInfo> layer_infos(const comm::Communicator& comm,
                                             const core::TwoTierSet& set) {
  std::vector<CheckpointLayerInfo> out;
  for (std::size_t l = 0; l < set.bloom().num_layers(); ++l) {
    const core::BloomLayerStats s = set.bloom().layer_stats(l);
    out.push_back({s.geometry, comm.allreduce_sum(s.inserted)});
  }
  return out;
}

CheckpointHeader test_header(std::uint64_t g) {
  CheckpointHeader h;
  h.tool_version = "test-1.2.3";
  h.hash_scheme = std::string(core::kHashSchemeName);
  h.hash_seed = core::kDefaultHashSeed;
  h.bloom_layout = std::string(core::kBloomLayoutName);
  h.normalization = "nfc/utf8proc-2.8/unicode-15";
  h.key_field = "id";
  h.key_encoding = "bytes";
  h.params = test_params();
  h.generation = g;
  h.run_id = "run-" + std::to_string(g * 7);
  h.finished = g % 2 == 1;
  h.manifest_json = R"({"inputs":[{"path":"a.jsonl","cursor":)" + std::to_string(g) + "}]}";
  return h;
}

void flip_byte(const std::filesystem::path& file, std::uint64_t offset) {
  const int fd = ::open(file.c_str(), O_RDWR);
  if (fd < 0) throw std::runtime_error("open for corruption failed");
  unsigned char b = 0;
  const auto off = static_cast<off_t>(offset);
  const bool ok = ::pread(fd, &b, 1, off) == 1 && (b ^= 0x5a, ::pwrite(fd, &b, 1, off) == 1);
  ::close(fd);
  if (!ok) throw std::runtime_error("flip_byte failed");
}

DatasetPlace dataset_place(const std::filesystem::path& file, const std::string& dataset) {
  Hid f = open_serial_file(file);
  Hid d = open_dataset(f.get(), dataset);
  Hid type = datatype_hid(H5Dget_type(d.get()), "H5Dget_type");
  std::uint64_t n = 1;
  for (auto v : dataset_dims(d.get())) n *= v;
  const auto addr = dataset_file_offset(d.get());
  if (!addr) throw std::runtime_error("dataset has no address: " + dataset);
  return {*addr, n * H5Tget_size(type.get())};
}

void set_format_version(const std::filesystem::path& file, std::uint32_t version) {
  quiet_hdf5_errors();
  Hid f = file_hid(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
  Hid a = attribute_hid(H5Aopen(f.get(), "format_version", H5P_DEFAULT), "H5Aopen");
  check_h5(H5Awrite(a.get(), H5T_NATIVE_UINT32, &version), "H5Awrite");
  a.close("H5Aclose");
  f.close("H5Fclose");
}

}  // namespace bloomshard::io::test
