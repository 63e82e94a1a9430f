// See checkpoint_data.hpp: the MPI-IO data path. Tier 2 is merged once,
// slice by slice, into a batch buffer of about kBatchBytes (checksummed
// while hot in cache); each batch is one collective write per dataset.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "comm/heartbeat.hpp"
#include "io/checkpoint/checkpoint_data.hpp"

namespace bloomshard::io {
namespace {

// Tier-2 write buffer per rank: whole slices of about this many bytes per
// batch (more if one slice is larger). 64 MiB keeps the three collective
// writes per batch large enough to run at disk speed while the buffer stays
// small next to the memory a rank is allowed (Bloom bits + delta budget).
constexpr std::uint64_t kBatchBytes = std::uint64_t{64} << 20;

// Starts the kernel's write-out of the file's dirty pages after each batch
// (sync_file_range, asynchronous; a hint: errors are ignored, the commit's
// fsync is what counts). Without it the page cache held the whole file and
// the final fsync wrote it all while the CPUs idled.
class EarlyWriteback {
 public:
  explicit EarlyWriteback(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~EarlyWriteback() {
    if (fd_ >= 0) ::close(fd_);
  }
  EarlyWriteback(const EarlyWriteback&) = delete;
  EarlyWriteback& operator=(const EarlyWriteback&) = delete;
  void kick() const noexcept {
    if (fd_ >= 0) (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
  }

 private:
  int fd_;
};

std::uint64_t merged_bytes(std::uint64_t keys, std::uint64_t bytes) {
  return keys * 16 + 8 + bytes;
}

}  // namespace

std::string write_data_mpiio(const comm::Communicator& comm, const core::TwoTierSet& set,
                             const CheckpointDataTargets& targets, LocalTier2& t,
                             const Tier2Starts& starts, hid_t dxpl,
                             const std::filesystem::path& file, CheckpointDataProgress& progress) {
  const EarlyWriteback writeback(file);
  const core::SliceRange owned = set.owned();
  const std::size_t n = owned.size();
  for (std::size_t l = 0; l < targets.bloom_layers.size(); ++l) {
    const std::uint64_t per_slice = targets.bloom_words_per_slice[l];
    const std::uint64_t* words = n == 0 ? nullptr : set.bloom().slice_words(l, owned.first).data();
    write_1d_collective(comm, targets.bloom_layers[l], dxpl, H5T_NATIVE_UINT64,
                        owned.first * per_slice, words, n * per_slice, 8, &progress.tracker);
    progress.written += n * per_slice * 8;
  }

  if (!targets.tier2) return {};

  struct Batch {
    std::size_t first, last;
    std::uint64_t keys, bytes;
  };
  std::vector<Batch> batches;
  std::uint64_t max_keys = 0, max_bytes = 0;
  for (std::size_t i = 0; i < n;) {
    Batch b{i, i, 0, 0};
    while (b.last < n && (b.last == i || merged_bytes(b.keys + t.keys[b.last],
                                                      b.bytes + t.bytes[b.last]) <= kBatchBytes)) {
      b.keys += t.keys[b.last];
      b.bytes += t.bytes[b.last];
      ++b.last;
    }
    max_keys = std::max(max_keys, b.keys);
    max_bytes = std::max(max_bytes, b.bytes);
    batches.push_back(b);
    i = b.last;
  }
  std::size_t max_slices = 0;
  for (const Batch& b : batches) max_slices = std::max(max_slices, b.last - b.first);
  // Not value-initialized: every element is written by the merge.
  const auto fp_buf = std::make_unique_for_overwrite<std::uint64_t[]>(max_keys + 1);
  const auto off_buf = std::make_unique_for_overwrite<std::uint64_t[]>(max_keys + max_slices + 1);
  const auto byte_buf = std::make_unique_for_overwrite<char[]>(max_bytes + 1);

  std::string err;
  const std::uint64_t rounds = comm.allreduce_max(std::uint64_t{batches.size()});
  Tier2Starts at = starts;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    comm::heartbeat();  // a batch is progress, for the stall watchdog
    std::uint64_t nk = 0, no = 0, nb = 0;
    const auto m0 = std::chrono::steady_clock::now();
    if (r < batches.size()) {
      for (std::size_t i = batches[r].first; i < batches[r].last; ++i) {
        const std::span<std::uint64_t> f(fp_buf.get() + nk, t.keys[i]);
        const std::span<std::uint64_t> o(off_buf.get() + no, t.keys[i] + 1);
        const std::span<char> b(byte_buf.get() + nb, t.bytes[i]);
        t.checksums[i] = merge_slice_checked(set, static_cast<std::uint32_t>(owned.first + i),
                                             t.depth, f, o, b, err);
        collect_slice_forms(t, i, {f, o, b}, err);
        nk += f.size();
        no += o.size();
        nb += b.size();
      }
    }
    progress.merge_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m0).count();
    write_1d_collective(comm, targets.fingerprints, dxpl, H5T_NATIVE_UINT64, at.keys, fp_buf.get(),
                        nk, 8, &progress.tracker);
    write_1d_collective(comm, targets.offsets, dxpl, H5T_NATIVE_UINT64, at.offsets, off_buf.get(),
                        no, 8, &progress.tracker);
    write_1d_collective(comm, targets.bytes, dxpl, H5T_NATIVE_UINT8, at.bytes, byte_buf.get(), nb,
                        1, &progress.tracker);
    at.keys += nk;
    at.offsets += no;
    at.bytes += nb;
    progress.written += nk * 8 + no * 8 + nb;
    writeback.kick();
  }
  return err;
}

}  // namespace bloomshard::io
