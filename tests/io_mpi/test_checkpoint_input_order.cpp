// The input order's kept copies as rows of a generation (input-order/v2
// states, docs/checkpoint-format.md "The input order's saved memory"), and
// its retractions as a second table of the same form (input-order/v3), at
// the rank count the binary runs with (1-4): every rank writes its own
// remembered copies in really collective HDF5 transfers, and a reader on
// any count (1..N) gets exactly the rows of the slices it owns; verify
// counts and checks them; a flipped row, checksum or offset, a missing
// dataset, and rows without their mark are refused naming file, dataset
// and slice.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "bloomshard/store/input_order_rows.hpp"
#include "io/checkpoint/checkpoint_store.hpp"
#include "io/hdf5/hdf5_call.hpp"
#include "io/hdf5/hdf5_parallel.hpp"
#include "test_checkpoint_util.hpp"

namespace bloomshard::io {
namespace {

using store::InputOrderRow;
using test::layer_infos;
using test::owned_by;
using test::SharedTempDir;
using test::SubComm;
using test::test_params;

constexpr int kCopies = 3000;

// Copy i: a key hash and a tag (never 0; some copies share a key).
InputOrderRow copy(int i) {
  return {std::uint64_t{1} << 42 | static_cast<std::uint64_t>(i * 37 + 1),
          core::hash_key("copy-" + std::to_string(i % 2500))};
}

// The copies whose key lies in `owned`, in the order a reader gets them:
// slice after slice, each by (tag, hi, lo).
std::vector<InputOrderRow> copies_of(core::SliceRange owned) {
  std::vector<InputOrderRow> out;
  for (int i = 0; i < kCopies; ++i) {
    const InputOrderRow r = copy(i);
    if (owned.contains(core::slice_of(r.hash, test_params().num_slices))) out.push_back(r);
  }
  const auto key = [](const InputOrderRow& r) {
    return std::make_tuple(core::slice_of(r.hash, test_params().num_slices), r.tag, r.hash.hi,
                           r.hash.lo);
  };
  std::sort(out.begin(), out.end(),
            [&](const InputOrderRow& a, const InputOrderRow& b) { return key(a) < key(b); });
  return out;
}

CheckpointHeader rows_header(std::uint64_t g) {
  CheckpointHeader h = test::test_header(g);
  h.input_order = true;
  h.input_order_rows = true;
  return h;
}

// input-order/v3: the retractions are a second table of rows.
CheckpointHeader retracted_header(std::uint64_t g) {
  CheckpointHeader h = rows_header(g);
  h.input_order_retracted_rows = true;
  return h;
}

// The retractions of `owned`: every third copy with another tag (a table
// of its own, so that a reader that mixed the two up would see it).
std::vector<InputOrderRow> retractions_of(core::SliceRange owned) {
  std::vector<InputOrderRow> out;
  for (const InputOrderRow& r : copies_of(owned)) {
    if (r.tag % 3 == 0) out.push_back({r.tag + (std::uint64_t{1} << 43), r.hash});
  }
  return out;
}

class CheckpointInputOrder : public ::testing::Test {
 protected:
  // One generation of every rank's copies (its owned slices'), written by world.
  std::filesystem::path write_rows(const std::filesystem::path& dir) {
    const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
    // Reversed: the writer groups them, whatever order the table lists them in.
    std::vector<InputOrderRow> mine = copies_of(owned_by(world_));
    std::reverse(mine.begin(), mine.end());
    return write_checkpoint(world_, dir, rows_header(1), layer_infos(world_, *set), *set,
                            {.input_order_rows = &mine});
  }

  // One input-order/v3 generation: every rank's copies and retractions.
  std::filesystem::path write_both(const std::filesystem::path& dir) {
    const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
    const std::vector<InputOrderRow> mine = copies_of(owned_by(world_));
    std::vector<InputOrderRow> retracted = retractions_of(owned_by(world_));
    std::reverse(retracted.begin(), retracted.end());
    return write_checkpoint(world_, dir, retracted_header(1), layer_infos(world_, *set), *set,
                            {.input_order_rows = &mine, .input_order_retracted = &retracted});
  }

  // Collective over world: load_checkpoint's refusal text ("" if it loads).
  std::string load_refusal(const std::filesystem::path& file) {
    try {
      (void)load_checkpoint(world_, file, owned_by(world_));
    } catch (const CheckpointError& e) {
      return e.what();
    }
    return {};
  }

  comm::Communicator world_;
};

TEST_F(CheckpointInputOrder, EveryRanksRowsLoadOnAnyReaderCount) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_rows(dir.path());
  const CheckpointHeader h = read_checkpoint_summary(file).header;
  EXPECT_TRUE(h.input_order);
  EXPECT_TRUE(h.input_order_rows);
  const VerifyReport report = verify_checkpoint(world_, file);
  EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems.front());
  EXPECT_EQ(report.input_order_rows, copies_of({0, test_params().num_slices}).size());
  for (int readers = 1; readers <= world_.size(); ++readers) {
    SubComm sub(world_, readers);  // collective over world: every rank comes here
    if (!sub.member()) continue;
    try {
      const comm::Communicator c = sub.comm();
      const LoadedCheckpoint loaded = load_checkpoint(c, file, owned_by(c));
      EXPECT_EQ(loaded.input_order_rows, copies_of(owned_by(c)))
          << "rank " << c.rank() << " of " << readers << " readers";
    } catch (const std::exception& e) {  // agreed by the readers; the others go on
      ADD_FAILURE() << readers << " readers: " << e.what();
    }
  }
}

TEST_F(CheckpointInputOrder, RetractionsAreASecondTableEveryReaderCountGetsItsOwn) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_both(dir.path());
  const CheckpointHeader h = read_checkpoint_summary(file).header;
  EXPECT_TRUE(h.input_order_rows);
  EXPECT_TRUE(h.input_order_retracted_rows);
  const core::SliceRange all{0, test_params().num_slices};
  ASSERT_GT(retractions_of(all).size(), 100U);
  const VerifyReport report = verify_checkpoint(world_, file);
  EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems.front());
  EXPECT_EQ(report.input_order_rows, copies_of(all).size());
  EXPECT_EQ(report.input_order_retracted_rows, retractions_of(all).size());
  for (int readers = 1; readers <= world_.size(); ++readers) {
    SubComm sub(world_, readers);  // collective over world: every rank comes here
    if (!sub.member()) continue;
    try {
      const comm::Communicator c = sub.comm();
      const LoadedCheckpoint loaded = load_checkpoint(c, file, owned_by(c));
      EXPECT_EQ(loaded.input_order_rows, copies_of(owned_by(c)));
      EXPECT_EQ(loaded.input_order_retracted, retractions_of(owned_by(c)))
          << "rank " << c.rank() << " of " << readers << " readers";
    } catch (const std::exception& e) {
      ADD_FAILURE() << readers << " readers: " << e.what();
    }
  }
  // A v2 generation has no retracted rows: none loaded, none verified.
  SharedTempDir dir2(world_);
  const std::filesystem::path v2 = write_rows(dir2.path());
  EXPECT_TRUE(load_checkpoint(world_, v2, owned_by(world_)).input_order_retracted.empty());
  EXPECT_EQ(verify_checkpoint(world_, v2).input_order_retracted_rows, 0U);
}

TEST_F(CheckpointInputOrder, DamagedOrMissingRetractedRowsAreRefusedNamingThem) {
  {
    SharedTempDir dir(world_);
    const std::filesystem::path file = write_both(dir.path());
    if (world_.rank() == 0) {
      const test::DatasetPlace at = test::dataset_place(file, store::kInputOrderRetractedRows);
      test::flip_byte(file, at.offset + at.bytes / 2);
    }
    world_.barrier();
    const std::string what = load_refusal(file);
    const VerifyReport report = verify_checkpoint(world_, file);
    for (const std::string& text :
         {what, report.problems.empty() ? std::string() : report.problems.front()}) {
      EXPECT_NE(text.find(file.string() + " input-order retracted rows of tier-2 slice "),
                std::string::npos)
          << text;
      EXPECT_NE(text.find("XXH3 checksum mismatch over /input_order/retracted_rows"),
                std::string::npos)
          << text;
    }
    EXPECT_FALSE(report.ok);
  }
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_both(dir.path());
  if (world_.rank() == 0) {
    quiet_hdf5_errors();
    Hid f = file_hid(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
    check_h5(H5Ldelete(f.get(), store::kInputOrderRetractedOffsets, H5P_DEFAULT), "H5Ldelete");
    f.close("H5Fclose");
  }
  world_.barrier();
  const std::string what = load_refusal(file);
  EXPECT_NE(what.find(file.string() + ": dataset /input_order/retracted_offsets is missing, but "
                                      "the normalization text has the input-order/v3 mark"),
            std::string::npos)
      << what;
  // Retracted rows for a v2 header, or none for a v3 one: nothing written.
  const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
  std::vector<InputOrderRow> none;
  EXPECT_THROW(
      (void)write_checkpoint(world_, dir.path(), rows_header(2), layer_infos(world_, *set), *set,
                             {.input_order_rows = &none, .input_order_retracted = &none}),
      CheckpointError);
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), retracted_header(2),
                                      layer_infos(world_, *set), *set, {.input_order_rows = &none}),
               CheckpointError);
  EXPECT_FALSE(std::filesystem::exists(generation_path(dir.path(), 2)));
}

TEST_F(CheckpointInputOrder, TheRowsAreWrittenCollectively) {
  SharedTempDir dir(world_);
  const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
  const std::vector<InputOrderRow> mine = copies_of(owned_by(world_));
  CheckpointWriteStats with, without;
  (void)write_checkpoint(world_, dir.path(), rows_header(1), layer_infos(world_, *set), *set,
                         {.input_order_rows = &mine}, &with);
  (void)write_checkpoint(world_, dir.path(), test::test_header(2), layer_infos(world_, *set), *set,
                         {}, &without);
  // Three more collective transfers (rows, offsets, checksums), none that
  // HDF5 broke down to independent I/O, and the rows' bytes counted.
  EXPECT_EQ(with.transfers, without.transfers + 3);
  EXPECT_EQ(with.non_collective, 0U);
  EXPECT_EQ(with.no_collective_cause, static_cast<std::uint32_t>(H5D_MPIO_COLLECTIVE));
  EXPECT_GE(with.bytes_written, mine.size() * sizeof(InputOrderRow));
  // The retractions: three more than the kept rows alone, as collective
  // (both written as generation 2 of a state of their own, through MPI-IO:
  // the O_DIRECT path's edge writes vary with where the datasets lie).
  const std::vector<InputOrderRow> retracted = retractions_of(owned_by(world_));
  CheckpointWriteStats kept_only, both;
  for (CheckpointWriteStats* stats : {&kept_only, &both}) {
    SharedTempDir other(world_);
    (void)write_checkpoint(world_, other.path(), test::test_header(1), layer_infos(world_, *set),
                           *set);
    if (stats == &kept_only) {
      (void)write_checkpoint(world_, other.path(), rows_header(2), layer_infos(world_, *set), *set,
                             {.data_path = CheckpointDataPath::kMpiIo, .input_order_rows = &mine},
                             stats);
    } else {
      (void)write_checkpoint(world_, other.path(), retracted_header(2), layer_infos(world_, *set),
                             *set,
                             {.data_path = CheckpointDataPath::kMpiIo,
                              .input_order_rows = &mine,
                              .input_order_retracted = &retracted},
                             stats);
    }
  }
  EXPECT_EQ(both.transfers, kept_only.transfers + 3);
  EXPECT_EQ(both.non_collective, 0U);
  EXPECT_EQ(both.no_collective_cause, static_cast<std::uint32_t>(H5D_MPIO_COLLECTIVE));
}

TEST_F(CheckpointInputOrder, AStateWithoutRowsLoadsNone) {
  SharedTempDir dir(world_);
  const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
  const std::filesystem::path file =
      write_checkpoint(world_, dir.path(), test::test_header(1), layer_infos(world_, *set), *set);
  EXPECT_TRUE(load_checkpoint(world_, file, owned_by(world_)).input_order_rows.empty());
  const VerifyReport report = verify_checkpoint(world_, file);
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(report.input_order_rows, 0U);
}

TEST_F(CheckpointInputOrder, DamagedRowsChecksumsAndOffsetsAreRefusedNamingThem) {
  struct Damage {
    const char* dataset;
    bool last;  // the last 8 bytes (the offset table's end), else the middle
    const char* says;
  };
  for (const Damage& d : {Damage{store::kInputOrderRows, false, "XXH3 checksum mismatch over"},
                          Damage{store::kInputOrderChecksums, false, "XXH3 checksum mismatch"},
                          Damage{store::kInputOrderOffsets, true, "ends at row"}}) {
    SharedTempDir dir(world_);
    const std::filesystem::path file = write_rows(dir.path());
    if (world_.rank() == 0) {
      const test::DatasetPlace at = test::dataset_place(file, d.dataset);
      test::flip_byte(file, d.last ? at.offset + at.bytes - 8 : at.offset + at.bytes / 2);
    }
    world_.barrier();
    const std::string what = load_refusal(file);
    const VerifyReport report = verify_checkpoint(world_, file);
    for (const std::string& text :
         {what, report.problems.empty() ? std::string() : report.problems.front()}) {
      EXPECT_NE(text.find(file.string()), std::string::npos) << d.dataset << ": " << text;
      EXPECT_NE(text.find(d.says), std::string::npos) << d.dataset << ": " << text;
      if (d.last) {
        EXPECT_NE(text.find(store::kInputOrderOffsets), std::string::npos) << text;
      } else {
        EXPECT_NE(text.find("input-order rows of tier-2 slice "), std::string::npos) << text;
      }
    }
    EXPECT_FALSE(report.ok) << d.dataset;
  }
}

TEST_F(CheckpointInputOrder, MissingRowsAndRowsWithoutTheirMarkAreRefused) {
  SharedTempDir dir(world_);
  const std::filesystem::path file = write_rows(dir.path());
  if (world_.rank() == 0) {
    quiet_hdf5_errors();
    Hid f = file_hid(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "H5Fopen");
    check_h5(H5Ldelete(f.get(), store::kInputOrderChecksums, H5P_DEFAULT), "H5Ldelete");
    f.close("H5Fclose");
  }
  world_.barrier();
  const std::string what = load_refusal(file);
  EXPECT_NE(what.find(file.string() + ": dataset /input_order/checksums is missing, but the "
                                      "normalization text has the input-order/v2 mark"),
            std::string::npos)
      << what;
  // A writer given rows for a header without them (or none for one with
  // them) writes nothing.
  const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
  std::vector<InputOrderRow> none;
  EXPECT_THROW((void)write_checkpoint(world_, dir.path(), test::test_header(2),
                                      layer_infos(world_, *set), *set, {.input_order_rows = &none}),
               CheckpointError);
  EXPECT_THROW(
      (void)write_checkpoint(world_, dir.path(), rows_header(2), layer_infos(world_, *set), *set),
      CheckpointError);
  EXPECT_FALSE(std::filesystem::exists(generation_path(dir.path(), 2)));
}

TEST_F(CheckpointInputOrder, ACopyOutsideTheOwnedSlicesIsNotWritten) {
  if (world_.size() < 2) GTEST_SKIP() << "one rank owns every slice";
  SharedTempDir dir(world_);
  const std::unique_ptr<core::TwoTierSet> set = test::build_set(owned_by(world_), 1, 200);
  // Every rank lists rank 0's copies: all but rank 0 hold foreign ones.
  const comm::Communicator& w = world_;
  std::vector<InputOrderRow> foreign =
      copies_of(core::slices_of_rank(0, w.usize(), test_params().num_slices));
  try {
    (void)write_checkpoint(world_, dir.path(), rows_header(1), layer_infos(world_, *set), *set,
                           {.input_order_rows = &foreign});
    FAIL() << "copies of another rank's slices were written";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("lies outside the slices"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bloomshard::io
