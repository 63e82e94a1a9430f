// Read-phase throughput (target: read + parse + hash >= 1 GB/s per rank):
// one rank's share of a corpus run through app::InputFeed::fill() and
// RoundBatch::keys() exactly as `bloomshard dedup` times its read phase
// (phase_seconds.read), without MPI, the exchange or the writes. The share
// is the job's: the same input discovery, split into line-aligned ranges
// (--split-min-bytes 64 MiB) and assignment to rank RANK of RANKS. Prints
// the bytes read, records, seconds and GB/s per repeat, and the median.
// Not a ctest test: build with `cmake --build <dir> --target
// bloomshard_read_phase_throughput`.
//
// --stage picks how much of the phase runs, to price its parts apart:
//   reader   RecordReader::peek_lines()/consume() (read, split lines; no prefix
//            digest, as in fill() of a job without --state)
//   extract  + KeyExtractor::extract_lines() (JSON validation, key lookup)
//   feed     the whole fill(): + key build, XXH3-128, the round batch (default)
//   write    + the kept records' bytes written to one file (--scratch): every
//            record whose key hash falls in the first --keep-permille of 1000
//            (700: the 10M-record corpus's unique share); no verdicts, so a
//            floor for the job's read and write, not its decisions
//
// usage: bloomshard_read_phase_throughput CORPUS_DIR [--rank R] [--ranks N]
//          [--repeat K] [--stage reader|extract|feed|write] [--key-field F]
//          [--batch-bytes B] [--scratch DIR] [--keep-permille K]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/round/round_batch.hpp"
#include "app/run/run_manifest.hpp"
#include "app/split/rank_tasks.hpp"
#include "app/split/split_inputs.hpp"
#include "io/records/input_file.hpp"
#include "io/records/key_extractor.hpp"
#include "io/records/record_reader.hpp"
#include "process_cpu_seconds.hpp"

namespace {

namespace app = bloomshard::app;
namespace io = bloomshard::io;
namespace fs = std::filesystem;

struct Options {
  fs::path corpus;
  int rank = 0;
  int ranks = 2;
  int repeat = 5;
  std::string stage = "feed";
  std::string key_field = "id";
  std::uint64_t batch_bytes = 8ULL << 20;
  fs::path scratch = fs::temp_directory_path() / "bloomshard_read_phase";
  int keep_permille = 700;
};

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) throw std::invalid_argument("missing CORPUS_DIR");
  o.corpus = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--rank") {
      o.rank = std::stoi(value);
    } else if (flag == "--ranks") {
      o.ranks = std::stoi(value);
    } else if (flag == "--repeat") {
      o.repeat = std::stoi(value);
    } else if (flag == "--stage") {
      o.stage = value;
    } else if (flag == "--key-field") {
      o.key_field = value;
    } else if (flag == "--batch-bytes") {
      o.batch_bytes = std::stoull(value);
    } else if (flag == "--scratch") {
      o.scratch = value;
    } else if (flag == "--keep-permille") {
      o.keep_permille = std::stoi(value);
    } else {
      throw std::invalid_argument("unknown option " + flag);
    }
  }
  if (o.stage != "reader" && o.stage != "extract" && o.stage != "feed" && o.stage != "write") {
    throw std::invalid_argument("--stage must be reader, extract, feed or write");
  }
  return o;
}

// The rank's tasks as `bloomshard dedup` would give them at a first start.
std::vector<app::FileTask> tasks_of(const Options& o, const app::DedupConfig& config) {
  const std::vector<fs::path> paths{o.corpus};
  app::RunManifest m;
  m.output_dir = config.output_dir;
  for (const io::InputFile& f : io::discover_inputs(paths)) {
    if (fs::path(f.relative_path).filename().string().starts_with('_')) continue;  // _SYNTH.json
    m.inputs.push_back({f, {}, false, 0, {}, {}, {}});
  }
  app::split_large_inputs(m, o.ranks, config.split_min_bytes);
  std::uint64_t total = 0;
  return app::tasks_of_rank(m, o.rank, o.ranks, total);
}

struct Outcome {
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;
  std::uint64_t keys = 0;
  std::uint64_t rejected = 0;
  std::uint64_t check = 0;  // keeps the compiler from dropping work
};

// Appends the bytes to `fd` through a 1 MiB buffer, as the job's writer
// hands the kernel large writes.
class BufferedFile {
 public:
  explicit BufferedFile(const fs::path& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot create " + path.string());
    buffer_.reserve(kBytes);
  }
  ~BufferedFile() { ::close(fd_); }
  BufferedFile(const BufferedFile&) = delete;
  BufferedFile& operator=(const BufferedFile&) = delete;
  void append(std::string_view bytes) {
    if (buffer_.size() + bytes.size() > kBytes) flush();
    buffer_.append(bytes);
  }
  void flush() {
    const char* at = buffer_.data();
    std::size_t left = buffer_.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, at, left);
      if (n < 0) throw std::runtime_error(std::string("write: ") + std::strerror(errno));
      at += n;
      left -= static_cast<std::size_t>(n);
    }
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kBytes = std::size_t{1} << 20;
  int fd_;
  std::string buffer_;
};

Outcome run_feed(const app::DedupConfig& config, std::vector<app::FileTask> tasks,
                 const fs::path& rejects, const fs::path* written, int keep_permille) {
  app::InputFeed feed(config, std::move(tasks), rejects, false);
  app::RoundBatch batch;
  Outcome out;
  std::unique_ptr<BufferedFile> file;
  if (written != nullptr) file = std::make_unique<BufferedFile>(*written);
  while (!feed.exhausted()) {
    feed.fill(batch);
    const auto keys = batch.keys();
    out.keys += keys.size();
    if (!keys.empty()) out.check ^= keys.back().hash.lo;
    if (!file) continue;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (batch.key_count(i) == 0) continue;
      const std::uint64_t h = keys[batch.first_key(i)].hash.hi;
      if (static_cast<int>(h % 1000) < keep_permille) file->append(batch.record_bytes(i));
    }
  }
  if (file) file->flush();
  out.bytes = feed.counters().read_bytes;
  out.records = feed.counters().records;
  out.rejected = feed.counters().rejected;
  return out;
}

// The reader (and the extractor) as fill() drives them: lines peeked many
// at a time, parsed by extract_lines(), consumed; next() where no complete
// line is buffered.
Outcome run_reader(const app::DedupConfig& config, const std::vector<app::FileTask>& tasks,
                   bool extract) {
  io::RecordReader reader(
      io::ReaderOptions{.max_line_bytes = config.max_line_bytes, .prefix_digest = false});
  io::KeyExtractor json({.format = io::Format::kJsonLines,
                         .key_path = config.key.fields.front(),
                         .max_key_bytes = io::kDefaultMaxKeyBytes,
                         .key_paths = {}});
  io::KeyExtractor plain({.format = io::Format::kPlainLines,
                          .key_path = "id",
                          .max_key_bytes = io::kDefaultMaxKeyBytes,
                          .key_paths = {}});
  Outcome out;
  std::vector<io::Record> peeked(256);
  std::vector<std::string_view> lines;
  io::Record r;
  const auto count = [&](std::size_t, const io::FieldsResult& f) {
    if (!f.ok()) {
      ++out.rejected;
    } else {
      ++out.keys;
      out.check += f.values.front().size();
    }
    return true;
  };
  for (const app::FileTask& t : tasks) {
    if (t.range) {
      reader.open_range(t.file, t.bytes.begin, t.bytes.end);
    } else {
      reader.open(t.file);
    }
    io::KeyExtractor& x = t.file.format == io::Format::kJsonLines ? json : plain;
    for (;;) {
      const std::size_t n = reader.peek_lines(peeked);
      if (n > 0) {
        out.records += n;
        if (extract) {
          lines.clear();
          for (std::size_t i = 0; i < n; ++i) lines.push_back(peeked[i].line);
          x.extract_lines(lines, count);
        }
        reader.consume(std::span<const io::Record>(peeked).first(n));
        continue;
      }
      if (!reader.next(r)) break;
      ++out.records;
      if (extract && !r.too_long) count(0, x.extract_fields(r.line));
    }
    out.bytes += reader.cursor().decompressed_offset - (t.range ? t.bytes.begin : 0);
    out.check ^= reader.prefix_digest();
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    app::DedupConfig config;
    config.key.fields = {o.key_field};
    config.batch_bytes = o.batch_bytes;
    config.output_dir = (o.scratch / "out").string();
    fs::create_directories(o.scratch / "out");
    const std::vector<app::FileTask> tasks = tasks_of(o, config);
    std::uint64_t share = 0;
    for (const app::FileTask& t : tasks) {
      share += t.range ? t.bytes.end - t.bytes.begin : t.file.size;
    }
    std::printf("rank %d of %d: %zu tasks, %llu bytes; stage %s\n", o.rank, o.ranks, tasks.size(),
                static_cast<unsigned long long>(share), o.stage.c_str());
    std::vector<double> rates;
    std::vector<double> cpu_rates;
    for (int i = 0; i < o.repeat; ++i) {
      const double cpu_start = bloomshard::bench::process_cpu_seconds();
      const auto start = std::chrono::steady_clock::now();
      const fs::path written = o.scratch / "out" / "kept.jsonl";
      const bool feeds = o.stage == "feed" || o.stage == "write";
      const Outcome r = feeds ? run_feed(config, tasks, o.scratch / "rejects.jsonl",
                                         o.stage == "write" ? &written : nullptr, o.keep_permille)
                              : run_reader(config, tasks, o.stage == "extract");
      const double s = seconds_since(start);
      const double cpu = bloomshard::bench::process_cpu_seconds() - cpu_start;
      rates.push_back(static_cast<double>(r.bytes) / s / 1e9);
      cpu_rates.push_back(static_cast<double>(r.bytes) / cpu / 1e9);
      std::printf(
          "run %d: %llu bytes, %llu records, %llu keys, %llu rejected, %.3f s (%.3f s CPU), "
          "%.3f GB/s (%.3f GB/s per CPU second) (check %llx)\n",
          i + 1, static_cast<unsigned long long>(r.bytes),
          static_cast<unsigned long long>(r.records), static_cast<unsigned long long>(r.keys),
          static_cast<unsigned long long>(r.rejected), s, cpu, rates.back(), cpu_rates.back(),
          static_cast<unsigned long long>(r.check));
    }
    std::sort(rates.begin(), rates.end());
    std::sort(cpu_rates.begin(), cpu_rates.end());
    std::printf("median %.3f GB/s wall, %.3f GB/s per CPU second\n", rates[rates.size() / 2],
                cpu_rates[cpu_rates.size() / 2]);
    fs::remove_all(o.scratch / "out");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomshard_read_phase_throughput: %s\n", e.what());
    std::fprintf(stderr,
                 "usage: bloomshard_read_phase_throughput CORPUS_DIR [--rank R] [--ranks N] "
                 "[--repeat K] [--stage reader|extract|feed|write] [--key-field F] "
                 "[--batch-bytes B] [--scratch DIR] [--keep-permille K]\n");
    return 1;
  }
  return 0;
}
