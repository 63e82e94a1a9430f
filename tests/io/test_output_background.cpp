// OutputWriter's compression thread (OutputOptions::background_buffers):
// the same bytes as the caller's-thread drain for every codec, many buffers
// and frames ended at odd points; committed lengths that a resume can
// truncate to; an error met on the thread thrown at the writer's next call.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/errors.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"
#include "io_test_util.hpp"

namespace bloomshard::io {
namespace {

using test::TempDir;

struct Codec {
  const char* name;
  Compression compression;
  OutputOptions options;
};

// Every drain variant there is: libdeflate members, zlib's streamed member,
// zstd frames with and without the one-pass content size. Small buffers, so
// that a few hundred KB are many hand-offs.
std::vector<Codec> codecs(std::size_t background) {
  const OutputOptions base{.buffer_bytes = 4096, .background_buffers = background};
  OutputOptions zlib = base;
  zlib.gzip_with_zlib = true;
  OutputOptions streamed = base;
  streamed.zstd_content_size = false;
  return {{"gz", Compression::kGzip, base},
          {"gz-zlib", Compression::kGzip, zlib},
          {"zst", Compression::kZstd, base},
          {"zst-streamed", Compression::kZstd, streamed}};
}

std::string record(int i) {
  return "{\"id\":" + std::to_string(i) + ",\"text\":\"" + std::string(std::size_t(i % 97), 'x') +
         std::to_string(i * 7919) + "\"}";
}

// What one run writes and the lengths its calls returned.
struct WriteRun {
  std::string bytes;
  std::vector<std::uint64_t> lengths;
  std::vector<std::string> committed_text;  // the text written up to each length
};

// Records with frames ended at odd points (every 37th record), a flush
// every 501 and a flush_and_sync every 1237, as the feed's rounds and
// checkpoint cuts do.
WriteRun write_run(const std::filesystem::path& path, const Codec& codec) {
  WriteRun run;
  std::string text;
  auto w = OutputWriter::create(path, codec.compression, codec.options);
  for (int i = 0; i < 6000; ++i) {
    const std::string line = record(i);
    w.write(line, "\n");
    text += line + "\n";
    if (i % 37 == 36) w.end_frame();
    if (i % 501 == 500) {
      run.lengths.push_back(w.flush());
      run.committed_text.push_back(text);
    }
    if (i % 1237 == 1236) {
      run.lengths.push_back(w.flush_and_sync());
      run.committed_text.push_back(text);
      run.lengths.push_back(w.file_length());
      run.committed_text.push_back(text);
    }
  }
  w.close();
  run.bytes = test::read_file(path);
  EXPECT_EQ(test::decompress(codec.compression, run.bytes), text);
  return run;
}

TEST(IoOutputBackground, SameBytesAndLengthsAsTheCallersThread) {
  TempDir dir;
  const auto sync = codecs(0);
  for (const std::size_t background : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    const auto async = codecs(background);
    for (std::size_t c = 0; c < sync.size(); ++c) {
      SCOPED_TRACE(std::string(sync[c].name) + ", " + std::to_string(background) + " queued");
      const WriteRun want = write_run(dir / "sync", sync[c]);
      const WriteRun got = write_run(dir / "async", async[c]);
      // Many buffers of 4 KiB.
      EXPECT_GT(test::decompress(sync[c].compression, want.bytes).size(), 100U * 4096);
      EXPECT_EQ(got.bytes, want.bytes);
      EXPECT_EQ(got.lengths, want.lengths);
    }
  }
}

// Every length flush / flush_and_sync / file_length returned is a frame
// boundary that holds exactly the text written before it, and a resume at
// it appends a valid continuation.
TEST(IoOutputBackground, CommittedLengthsAreTruncatable) {
  TempDir dir;
  for (const Codec& codec : codecs(2)) {
    SCOPED_TRACE(codec.name);
    const auto path = dir / "out";
    const WriteRun run = write_run(path, codec);
    ASSERT_FALSE(run.lengths.empty());
    for (std::size_t k = 0; k < run.lengths.size(); ++k) {
      ASSERT_LE(run.lengths[k], run.bytes.size());
      EXPECT_EQ(test::decompress(codec.compression,
                                 std::string_view(run.bytes).substr(0, run.lengths[k])),
                run.committed_text[k])
          << "length " << k;
    }
    const std::size_t k = run.lengths.size() / 2;
    {
      auto w =
          OutputWriter::open_for_resume(path, codec.compression, run.lengths[k], codec.options);
      for (int i = 0; i < 3000; ++i) w.write("resumed-" + std::to_string(i), "\n");
      w.close();
    }
    std::string want = run.committed_text[k];
    for (int i = 0; i < 3000; ++i) want += "resumed-" + std::to_string(i) + "\n";
    EXPECT_EQ(test::decompress(codec.compression, test::read_file(path)), want);
  }
}

// The file size limit makes the thread's write fail (EFBIG, a real kernel
// write error like ENOSPC: a unit test cannot mount a full file system,
// faults.disk_full_output does that with gz and zst outputs). The error is
// thrown on the caller's thread at the next call, names the file and the
// cause, and stays: every later call that would write throws it again.
TEST(IoOutputBackground, AnErrorOnTheThreadSurfacesAtTheNextCall) {
  TempDir dir;
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto restore_signal = std::signal(SIGXFSZ, SIG_IGN);
  // Incompressible: every 4 KiB buffer becomes ~4 KiB of file, so the
  // fifth hand-off fails.
  std::mt19937_64 rng(7);
  std::string noise(5 * 4096 + 1, '\0');
  for (char& ch : noise) ch = static_cast<char>(rng());
  for (const Codec& codec : codecs(2)) {
    SCOPED_TRACE(codec.name);
    const auto path = dir / (std::string("limited.") + codec.name);
    rlimit limited = old;
    limited.rlim_cur = 20000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    {
      auto w = OutputWriter::create(path, codec.compression, codec.options);
      std::vector<std::string> errors;
      // Five hand-offs and the frame's end, past the limit (the streaming
      // codecs write only at the frame's end): a hand-off that finds the
      // thread failed already throws here.
      try {
        w.write_bytes(noise);
        w.end_frame();
      } catch (const OutputError& e) {
        errors.emplace_back(e.what());
      }
      // file_length() waits for the thread and throws nothing: the error
      // stays pending for the next call.
      EXPECT_LE(w.file_length(), 20000U);
      const auto expect_error = [&](auto&& call) {
        try {
          call();
          ADD_FAILURE() << "no error";
        } catch (const OutputError& e) {
          errors.emplace_back(e.what());
        }
      };
      expect_error([&] { w.write("next", "\n"); });
      expect_error([&] { w.end_frame(); });
      expect_error([&] { (void)w.flush(); });
      expect_error([&] { (void)w.flush_and_sync(); });
      expect_error([&] { w.close(); });
      for (const std::string& what : errors) {
        EXPECT_NE(what.find(path.string()), std::string::npos) << what;
        EXPECT_NE(what.find("File too large"), std::string::npos) << what;
      }
    }  // the destructor joins the thread and throws nothing
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
    EXPECT_LE(std::filesystem::file_size(path), 20000U);
  }
  std::signal(SIGXFSZ, restore_signal);
}

// A writer dropped with buffers still queued (an exception unwinding past
// it) closes them out and joins; one moved from keeps its thread.
TEST(IoOutputBackground, DestroyedOrMovedWithBuffersQueued) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += record(i) + "\n";
  for (const Codec& codec : codecs(2)) {
    SCOPED_TRACE(codec.name);
    const auto path = dir / "dropped";
    {
      auto w = OutputWriter::create(path, codec.compression, codec.options);
      w.write_bytes(text);
      OutputWriter moved = std::move(w);
      moved.write_bytes(text);
    }
    EXPECT_EQ(test::decompress(codec.compression, test::read_file(path)), text + text);
  }
}

}  // namespace
}  // namespace bloomshard::io
