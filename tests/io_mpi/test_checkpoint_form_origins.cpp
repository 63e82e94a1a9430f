// The origins of confirmation forms (key scheme item confirm-origins=v1,
// docs/checkpoint-format.md "Confirmation forms"), at the rank count the
// binary runs with (1-4): each run file holds each key's (run, position)
// beside its form, in stored order, through both data paths and a
// compaction; they load on any reader count with the forms; a flipped
// origin byte, a missing origins dataset and origins without their item
// are refused naming file, slice and dataset; a confirming state without
// the item still loads, without origins.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/layout.hpp"
#include "core/minhash/band_confirmation.hpp"
#include "core/minhash/minhash_jaccard.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/hdf5/hdf5_parallel.hpp"
#include "test_checkpoint_util.hpp"

// Its own namespace: the helpers share names with test_checkpoint_forms.cpp,
// its unity batch neighbour (cmake/check_unity_names.py).
namespace bloomshard::io::form_origins {
namespace {

using test::layer_infos;
using test::owned_by;
using test::SharedTempDir;
using test::SubComm;
using test::test_params;

constexpr std::uint32_t kValues = 14 * 8;
constexpr std::uint32_t kBits = 4;
constexpr double kThreshold = 0.8;
constexpr int kKeysPerBatch = 600;

core::BandKey band_key(int i) {
  const XXH128_hash_t h = XXH3_128bits(&i, sizeof i);
  core::BandKey k;
  std::memcpy(k.data(), &h, sizeof h);
  return k;
}
std::string key_bytes(const core::BandKey& k) {
  return {reinterpret_cast<const char*>(k.data()), k.size()};
}
std::vector<std::uint8_t> form_of(int i) {
  std::vector<std::uint8_t> f(core::bbit_bytes(kValues, kBits));
  for (std::size_t j = 0; j < f.size(); ++j)
    f[j] = static_cast<std::uint8_t>(static_cast<std::size_t>(i) * 13 + j * 5);
  return f;
}
// Key i's origin: the second batch is another run (an incremental one).
core::FormOrigin origin_of(int i) {
  return {static_cast<std::uint64_t>(i / kKeysPerBatch),
          (std::uint64_t{static_cast<unsigned>(i % 7) + 1} << 42) | (std::uint64_t(i) * 977)};
}

// A confirming minhash state's header, with or without origins.
CheckpointHeader confirming_header(std::uint64_t g, bool origins = true) {
  CheckpointHeader h = test::test_header(g);
  core::KeyScheme key;
  key.fields = {"text"};
  key.unit = core::KeyUnit::kMinHash;
  key.confirm_jaccard = kThreshold;
  key.confirm_origins = origins;
  h.normalization = "none unicode 15.0 key-scheme/v1";
  h.key_field = "text";
  h.key_scheme = core::key_scheme_attribute(key);
  return h;
}

void insert_keys(core::TwoTierSet& set, core::BandConfirmer& forms, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    const core::BandKey k = band_key(i);
    const std::string bytes = key_bytes(k);
    const core::KeyHash h = core::hash_key(bytes);
    if (!set.owned().contains(core::slice_of(h, test_params().num_slices))) continue;
    if (core::is_kept(set.decide({h, bytes}))) (void)forms.adopt_form(k, form_of(i), origin_of(i));
  }
}

// Collective over c: every owned key has its own form and origin.
void check_loaded_origins(const comm::Communicator& c, const std::filesystem::path& file) {
  LoadedCheckpoint loaded = load_checkpoint(c, file, owned_by(c), true, true);
  ASSERT_NE(loaded.forms, nullptr);
  ASSERT_TRUE(loaded.forms->keeps_positions());
  std::size_t mine = 0;
  for (int i = 0; i < 2 * kKeysPerBatch; ++i) {
    const core::BandKey k = band_key(i);
    const core::KeyHash h = core::hash_key(key_bytes(k));
    if (!owned_by(c).contains(core::slice_of(h, test_params().num_slices))) continue;
    ++mine;
    const core::FormOrigin got = loaded.forms->find_origin(k);
    ASSERT_EQ(got, origin_of(i)) << "key " << i << " at " << c.size() << " readers";
    const std::span<const std::uint8_t> form = loaded.forms->find_form(k);
    const std::vector<std::uint8_t> want = form_of(i);
    ASSERT_TRUE(std::equal(form.begin(), form.end(), want.begin(), want.end())) << "key " << i;
  }
  EXPECT_EQ(loaded.forms->forms(), mine) << c.size() << " readers";
}

class CheckpointFormOrigins : public ::testing::Test {
 protected:
  // Two generations of kKeysPerBatch keys each (runs 0 and 1): a delta
  // run, then a compaction of both (fanout 2), written by every rank.
  std::filesystem::path write_two(const std::filesystem::path& dir, CheckpointDataPath path,
                                  bool origins = true) {
    core::TwoTierSet set(test_params(), owned_by(world_));
    set.bloom().set_auto_grow(false);
    core::BandConfirmer forms(kThreshold, kValues, kBits, true);
    const CheckpointWriteOptions options{
        .keep = 2, .data_path = path, .compaction = {2, 4}, .forms = &forms};
    insert_keys(set, forms, 0, kKeysPerBatch);
    std::filesystem::path file = write_checkpoint(world_, dir, confirming_header(1, origins),
                                                  layer_infos(world_, set), set, options);
    rebase_on_checkpoint(world_, file, set);
    insert_keys(set, forms, kKeysPerBatch, kKeysPerBatch);
    file = write_checkpoint(world_, dir, confirming_header(2, origins), layer_infos(world_, set),
                            set, options);
    return file;
  }

  comm::Communicator world_;
};

TEST_F(CheckpointFormOrigins, EveryKeysOriginLoadsOnAnyReaderCount) {
  for (const CheckpointDataPath path : {CheckpointDataPath::kMpiIo, CheckpointDataPath::kAuto}) {
    SharedTempDir dir(world_);
    const std::filesystem::path file = write_two(dir.path(), path);
    EXPECT_EQ(read_checkpoint_summary(file).runs.size(), 1U) << "the second write compacts";
    const VerifyReport report = verify_checkpoint(world_, file);
    EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems.front());
    EXPECT_EQ(report.forms, 2U * kKeysPerBatch);
    EXPECT_EQ(report.origins, 2U * kKeysPerBatch);
    for (int readers = 1; readers <= world_.size(); ++readers) {
      SubComm sub(world_, readers);  // collective over world: every rank comes here
      if (!sub.member()) continue;
      try {
        check_loaded_origins(sub.comm(), file);
      } catch (const std::exception& e) {
        ADD_FAILURE() << readers << " readers: " << e.what();
      }
    }
  }
}

TEST_F(CheckpointFormOrigins, AStateWithoutOriginsLoadsWithoutThem) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto, false);
  const std::filesystem::path run = run_path(dir.path(), read_checkpoint_summary(file).runs[0].id);
  if (world_.rank() == 0) {
    quiet_hdf5_errors();
    Hid f = file_hid(H5Fopen(run.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
    EXPECT_LE(H5Lexists(f.get(), store::ckpt::kTier2FormOrigins, H5P_DEFAULT), 0);
    f.close("H5Fclose");
  }
  LoadedCheckpoint loaded = load_checkpoint(world_, file, owned_by(world_), true, true);
  ASSERT_NE(loaded.forms, nullptr);
  EXPECT_FALSE(loaded.forms->keeps_positions());
  const VerifyReport report = verify_checkpoint(world_, file);
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(report.origins, 0U);
}

TEST_F(CheckpointFormOrigins, AFlippedOriginByteIsRefusedNamingFileSliceAndDataset) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto);
  const std::filesystem::path run = run_path(dir.path(), read_checkpoint_summary(file).runs[0].id);
  if (world_.rank() == 0) {
    const test::DatasetPlace at = test::dataset_place(run, store::ckpt::kTier2FormOrigins);
    test::flip_byte(run, at.offset + at.bytes / 2);
  }
  world_.barrier();
  try {
    (void)load_checkpoint(world_, file, owned_by(world_), true, true);
    FAIL() << "a flipped origin byte was loaded";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string() + " form origins of tier-2 slice "), std::string::npos)
        << what;
    EXPECT_NE(what.find("XXH3 checksum mismatch over /tier2/form_origins"), std::string::npos)
        << what;
  }
  const VerifyReport report = verify_checkpoint(world_, file);
  ASSERT_FALSE(report.ok);
  EXPECT_NE(report.problems.front().find("/tier2/form_origins"), std::string::npos)
      << report.problems.front();
}

TEST_F(CheckpointFormOrigins, OriginsWithoutTheItemAreRefused) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto);
  // The generation's key scheme without confirm-origins, the run's origins kept.
  if (world_.rank() == 0) {
    quiet_hdf5_errors();
    Hid f = file_hid(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
    check_h5(H5Adelete(f.get(), store::ckpt::kKeyScheme), "H5Adelete");
    write_attr_string(f.get(), store::ckpt::kKeyScheme, confirming_header(2, false).key_scheme);
    f.close("H5Fclose");
  }
  world_.barrier();
  try {
    (void)load_checkpoint(world_, file, owned_by(world_));
    FAIL() << "origins without their item were loaded";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("holds dataset /tier2/form_origins, but the key scheme has no "
                        "confirm-origins item"),
              std::string::npos)
        << what;
  }
}

TEST_F(CheckpointFormOrigins, AMissingOriginsDatasetIsRefusedNamingIt) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto);
  const std::filesystem::path run = run_path(dir.path(), read_checkpoint_summary(file).runs[0].id);
  if (world_.rank() == 0) {
    quiet_hdf5_errors();
    Hid r = file_hid(H5Fopen(run.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
    check_h5(H5Ldelete(r.get(), store::ckpt::kTier2FormOrigins, H5P_DEFAULT), "H5Ldelete");
    r.close("H5Fclose");
  }
  world_.barrier();
  try {
    (void)load_checkpoint(world_, file, owned_by(world_), true, true);
    FAIL() << "a state of confirm-origins without origins was loaded";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string() + ": dataset /tier2/form_origins is missing, but the key "
                                       "scheme says confirm-origins"),
              std::string::npos)
        << what;
  }
  EXPECT_FALSE(verify_checkpoint(world_, file).ok);
}

TEST_F(CheckpointFormOrigins, TheWriterRefusesOriginsFromFormsWithoutPositions) {
  SharedTempDir dir(world_);
  core::TwoTierSet set(test_params(), owned_by(world_));
  set.bloom().set_auto_grow(false);
  core::BandConfirmer forms(kThreshold, kValues, kBits, false);
  insert_keys(set, forms, 0, 50);
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), confirming_header(1),
                                      layer_infos(world_, set), set, {.forms = &forms}),
               CheckpointError);
  EXPECT_TRUE(list_generations(dir.path()).empty());
}

}  // namespace
}  // namespace bloomshard::io::form_origins
