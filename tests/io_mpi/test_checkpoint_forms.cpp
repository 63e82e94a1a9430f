// Confirmation forms beside tier 2 (--confirm-jaccard states,
// docs/checkpoint-format.md "Confirmation forms"), at the rank count the
// binary runs with (1-4): each run file holds the form of each of its keys,
// in stored order, through both data paths and a compaction; the forms of
// the owned slices load on any reader count into a confirmer; a flipped
// form byte, a missing forms dataset, forms without the scheme item and a
// writer given no forms are refused naming file, slice and dataset.
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

namespace bloomshard::io {
namespace {

using test::layer_infos;
using test::owned_by;
using test::SharedTempDir;
using test::SubComm;
using test::test_params;

constexpr std::uint32_t kValues = 14 * 8;  // forms of 14 x 8 values
constexpr std::uint32_t kBits = 4;
constexpr double kThreshold = 0.8;
constexpr int kKeysPerBatch = 700;

// Band key i: 16 bytes of an XXH3-128 digest, as a real band key is.
core::BandKey band_key(int i) {
  const XXH128_hash_t h = XXH3_128bits(&i, sizeof i);
  core::BandKey k;
  std::memcpy(k.data(), &h, sizeof h);
  return k;
}
std::string key_bytes(const core::BandKey& k) {
  return {reinterpret_cast<const char*>(k.data()), k.size()};
}
// Key i's form: 56 bytes that differ from key to key.
std::vector<std::uint8_t> form_of(int i) {
  std::vector<std::uint8_t> f(core::bbit_bytes(kValues, kBits));
  for (std::size_t j = 0; j < f.size(); ++j)
    f[j] = static_cast<std::uint8_t>(static_cast<std::size_t>(i) * 31 + j * 7);
  return f;
}

// A confirming minhash state's header (key_scheme confirm-jaccard=0.8/b4).
CheckpointHeader confirming_header(std::uint64_t g, bool confirms = true) {
  CheckpointHeader h = test::test_header(g);
  core::KeyScheme key;
  key.fields = {"text"};
  key.unit = core::KeyUnit::kMinHash;
  key.confirm_jaccard = confirms ? kThreshold : 0.0;
  h.normalization = "none unicode 15.0 key-scheme/v1";
  h.key_field = "text";
  h.key_scheme = core::key_scheme_attribute(key);
  return h;
}

// Inserts keys [first, first + count) of the owned slices into `set`, their
// forms into `forms` (as an owner's decide would).
void insert_keys(core::TwoTierSet& set, core::BandConfirmer& forms, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    const core::BandKey k = band_key(i);
    const std::string bytes = key_bytes(k);
    const core::KeyHash h = core::hash_key(bytes);
    if (!set.owned().contains(core::slice_of(h, test_params().num_slices))) continue;
    if (core::is_kept(set.decide({h, bytes}))) (void)forms.adopt_form(k, form_of(i));
  }
}

// Collective over c: loads `file` with its forms on c's ranks and checks
// that every owned key has its own form, and no other.
void check_loaded_forms(const comm::Communicator& c, const std::filesystem::path& file) {
  LoadedCheckpoint loaded = load_checkpoint(c, file, owned_by(c), true, true);
  ASSERT_NE(loaded.forms, nullptr);
  EXPECT_DOUBLE_EQ(loaded.forms->threshold(), kThreshold);
  std::size_t mine = 0;
  for (int i = 0; i < 2 * kKeysPerBatch; ++i) {
    const core::BandKey k = band_key(i);
    const core::KeyHash h = core::hash_key(key_bytes(k));
    if (!owned_by(c).contains(core::slice_of(h, test_params().num_slices))) continue;
    ++mine;
    const std::span<const std::uint8_t> got = loaded.forms->find_form(k);
    const std::vector<std::uint8_t> want = form_of(i);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()))
        << "key " << i << " at " << c.size() << " readers";
  }
  EXPECT_EQ(loaded.forms->forms(), mine) << c.size() << " readers";
  // Without load_forms only the presence and size are checked.
  EXPECT_EQ(load_checkpoint(c, file, owned_by(c)).forms, nullptr);
}

class CheckpointForms : public ::testing::Test {
 protected:
  // Two generations of `keys` x 2 keys: a delta run, then a compaction of
  // both (fanout 2), written by every rank of world.
  std::filesystem::path write_two(const std::filesystem::path& dir, CheckpointDataPath path) {
    core::TwoTierSet set(test_params(), owned_by(world_));
    set.bloom().set_auto_grow(false);
    core::BandConfirmer forms(kThreshold, kValues, kBits);
    const CheckpointWriteOptions options{
        .keep = 2, .data_path = path, .compaction = {2, 4}, .forms = &forms};
    insert_keys(set, forms, 0, kKeysPerBatch);
    std::filesystem::path file =
        write_checkpoint(world_, dir, confirming_header(1), layer_infos(world_, set), set, options);
    rebase_on_checkpoint(world_, file, set);
    insert_keys(set, forms, kKeysPerBatch, kKeysPerBatch);
    file =
        write_checkpoint(world_, dir, confirming_header(2), layer_infos(world_, set), set, options);
    return file;
  }

  comm::Communicator world_;
};

TEST_F(CheckpointForms, EveryKeysFormLoadsOnAnyReaderCount) {
  for (const CheckpointDataPath path : {CheckpointDataPath::kMpiIo, CheckpointDataPath::kAuto}) {
    SharedTempDir dir(world_);
    const std::filesystem::path file = write_two(dir.path(), path);
    EXPECT_EQ(read_checkpoint_summary(file).runs.size(), 1U) << "the second write compacts";
    const VerifyReport report = verify_checkpoint(world_, file);
    EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems.front());
    EXPECT_EQ(report.forms, 2U * kKeysPerBatch);
    EXPECT_EQ(report.form_bytes, 56U);
    for (int readers = 1; readers <= world_.size(); ++readers) {
      SubComm sub(world_, readers);  // collective over world: every rank comes here
      if (!sub.member()) continue;
      try {
        check_loaded_forms(sub.comm(), file);
      } catch (const std::exception& e) {  // agreed by the readers; the others go on
        ADD_FAILURE() << readers << " readers: " << e.what();
      }
    }
  }
}

TEST_F(CheckpointForms, AFlippedFormByteIsRefusedNamingFileSliceAndDataset) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto);
  const std::filesystem::path run = run_path(dir.path(), read_checkpoint_summary(file).runs[0].id);
  if (world_.rank() == 0) {
    const test::DatasetPlace at = test::dataset_place(run, store::ckpt::kTier2Forms);
    test::flip_byte(run, at.offset + at.bytes / 2);
  }
  world_.barrier();
  try {
    (void)load_checkpoint(world_, file, owned_by(world_), true, true);
    FAIL() << "a flipped form byte was loaded";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string() + " forms of tier-2 slice "), std::string::npos) << what;
    EXPECT_NE(what.find("XXH3 checksum mismatch over /tier2/forms"), std::string::npos) << what;
  }
  const VerifyReport report = verify_checkpoint(world_, file);
  ASSERT_FALSE(report.ok);
  EXPECT_NE(report.problems.front().find("/tier2/forms"), std::string::npos)
      << report.problems.front();
}

// Serial, rank 0: removes `dataset` from `file`.
void delete_dataset(const std::filesystem::path& file, const char* dataset) {
  quiet_hdf5_errors();
  Hid f = file_hid(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
  check_h5(H5Ldelete(f.get(), dataset, H5P_DEFAULT), "H5Ldelete");
  f.close("H5Fclose");
}

TEST_F(CheckpointForms, AMissingFormsDatasetIsRefusedNamingIt) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto);
  const std::filesystem::path run = run_path(dir.path(), read_checkpoint_summary(file).runs[0].id);
  if (world_.rank() == 0) delete_dataset(run, store::ckpt::kTier2Forms);
  world_.barrier();
  for (const bool load_forms : {false, true}) {
    try {
      (void)load_checkpoint(world_, file, owned_by(world_), true, load_forms);
      FAIL() << "a confirming state without forms was loaded";
    } catch (const CheckpointError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(run.string() + ": dataset /tier2/forms is missing, but the key scheme "
                                         "says confirm-jaccard"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_FALSE(verify_checkpoint(world_, file).ok);
}

TEST_F(CheckpointForms, FormsWithoutTheSchemeItemAreRefused) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_two(dir.path(), CheckpointDataPath::kAuto);
  // The generation's key scheme without its confirm-jaccard item.
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
    FAIL() << "forms without a confirming scheme were loaded";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("holds dataset /tier2/forms, but the key scheme has no confirm-jaccard"),
              std::string::npos)
        << what;
  }
}

TEST_F(CheckpointForms, TheWriterRefusesAConfirmingSchemeWithoutForms) {
  SharedTempDir dir(world_);
  core::TwoTierSet set(test_params(), owned_by(world_));
  set.bloom().set_auto_grow(false);
  core::BandConfirmer forms(kThreshold, kValues, kBits);
  insert_keys(set, forms, 0, 50);
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), confirming_header(1),
                                      layer_infos(world_, set), set, {}),
               CheckpointError);
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), confirming_header(1, false),
                                      layer_infos(world_, set), set, {.forms = &forms}),
               CheckpointError);
  // A key without a form (the owner lost it) fails the write on every rank.
  const std::string stray = key_bytes(band_key(-1));
  const core::KeyHash h = core::hash_key(stray);
  if (set.owned().contains(core::slice_of(h, test_params().num_slices))) {
    (void)set.decide({h, stray});
  }
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), confirming_header(1),
                                      layer_infos(world_, set), set, {.forms = &forms}),
               CheckpointError);
  EXPECT_TRUE(list_generations(dir.path()).empty());
}

}  // namespace
}  // namespace bloomshard::io
