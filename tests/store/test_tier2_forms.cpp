// Slice views over the confirmation forms beside a run's tier 2
// (store/tier2_forms.hpp): 3 keys in 2 slices with 4-byte forms written
// into a temp file at the address its source reports, read back through a
// real mapping; a flipped byte, a truncated file, a dataset of another
// size and a missing one each give a problem naming file, slice and
// dataset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bloomshard/store/format_error.hpp"
#include "bloomshard/store/layout.hpp"
#include "bloomshard/store/tier2_forms.hpp"
#include "memory_source.hpp"

namespace bloomshard::store {
namespace {

namespace fs = std::filesystem;
using testing::MemorySource;

constexpr std::uint64_t kFormsAt = 64;
constexpr std::uint64_t kFormBytes = 4;

// Slice 0 holds 2 keys, slice 1 one key; form k is 4 bytes of value k + 1.
struct SmallForms {
  std::vector<std::uint8_t> forms{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  Tier2Index index;
  fs::path path;
  MemorySource src;

  explicit SmallForms(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".run")) {
    index.slice_keys = {2, 1};
    index.key_start = {0, 2};
    index.keys = 3;
    auto& d = src.dataset(ckpt::kTier2Forms);
    d.dims = {forms.size()};
    d.placement = {true, kFormsAt};
    write();
  }
  ~SmallForms() { fs::remove(path); }
  void write(std::uint64_t cut = 0) const {
    std::string file(kFormsAt + forms.size(), '\0');
    std::memcpy(file.data() + kFormsAt, forms.data(), forms.size());
    file.resize(file.size() - cut);
    std::ofstream(path, std::ios::binary) << file;
  }
  [[nodiscard]] Tier2Forms open() const { return {src, FileMapping::map(path), index, kFormBytes}; }
  [[nodiscard]] std::uint64_t good_checksum(std::uint32_t s) const {
    const std::vector<std::uint8_t> intact{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    const std::size_t first = s == 0 ? 0 : 8;
    return tier2_forms_checksum(std::span(intact).subspan(first, s == 0 ? 8 : 4));
  }
};

TEST(StoreTier2Forms, ViewsEachSlicesFormsInKeyOrder) {
  const SmallForms run("forms-views");
  const Tier2Forms f = run.open();
  EXPECT_EQ(f.form_bytes(), kFormBytes);
  const std::vector<std::uint8_t> s0(f.view(0).begin(), f.view(0).end());
  const std::vector<std::uint8_t> s1(f.view(1).begin(), f.view(1).end());
  EXPECT_EQ(s0, (std::vector<std::uint8_t>{1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(s1, (std::vector<std::uint8_t>{3, 3, 3, 3}));
  EXPECT_EQ(f.check(0, run.good_checksum(0), "run.h5"), "");
  EXPECT_EQ(f.check(1, run.good_checksum(1), "run.h5"), "");
}

// Every byte of slice 0's forms, one at a time: a checksum mismatch of
// slice 0 naming the dataset; slice 1 still holds.
TEST(StoreTier2Forms, AFlippedFormByteIsRefused) {
  SmallForms run("forms-flips");
  for (std::size_t b = 0; b < 8; ++b) {
    run.forms[b] ^= 0x10;
    run.write();
    const Tier2Forms f = run.open();
    const std::string p = f.check(0, run.good_checksum(0), "run.h5");
    EXPECT_EQ(p.rfind("run.h5 forms of tier-2 slice 0: XXH3 checksum mismatch over "
                      "/tier2/forms (stored ",
                      0),
              0U)
        << "byte " << b << ": " << p;
    EXPECT_EQ(f.check(1, run.good_checksum(1), "run.h5"), "") << "byte " << b;
    run.forms[b] ^= 0x10;
  }
}

TEST(StoreTier2Forms, ATruncatedFileIsRefusedNamingTheDataset) {
  const SmallForms run("forms-cut");
  run.write(2);  // slice 1's last form is cut short
  const Tier2Forms f = run.open();
  EXPECT_EQ(f.check(0, run.good_checksum(0), "run.h5"), "");
  const std::string p = f.check(1, run.good_checksum(1), "run.h5");
  EXPECT_NE(p.find("run.h5 forms of tier-2 slice 1: "), std::string::npos) << p;
  EXPECT_NE(p.find("/tier2/forms"), std::string::npos) << p;
  EXPECT_THROW((void)f.view(1), CheckpointError);
}

TEST(StoreTier2Forms, ADatasetOfAnotherSizeOrNoneIsRefused) {
  SmallForms run("forms-shape");
  run.src.dataset(ckpt::kTier2Forms).dims = {11};
  try {
    (void)run.open();
    FAIL() << "a dataset one byte short was taken";
  } catch (const CheckpointError& e) {
    EXPECT_STREQ(e.what(),
                 "dataset /tier2/forms is not 1-D of 12 bytes (3 keys x 4 bytes of forms)");
  }
  run.src.dataset(ckpt::kTier2Forms).dims = {12};
  run.src.dataset(ckpt::kTier2Forms).placement = {false, kFormsAt};
  EXPECT_THROW((void)run.open(), CheckpointError);
  run.src.erase_dataset(ckpt::kTier2Forms);
  try {
    (void)run.open();
    FAIL() << "a run without forms was taken";
  } catch (const CheckpointError& e) {
    EXPECT_STREQ(e.what(), "dataset /tier2/forms is missing");
  }
}

}  // namespace
}  // namespace bloomshard::store
