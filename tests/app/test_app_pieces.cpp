#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "app/feed/input_manifest.hpp"
#include "app/report/json_writer.hpp"
#include "app/report/progress.hpp"
#include "app/round/round_batch.hpp"

namespace bloomshard::app {
namespace {

TEST(InputManifest, RoundTripsAnyPathBytes) {
  std::vector<io::InputFile> files(2);
  files[0].absolute_path = std::string("/data/a\tb\nc\0d.jsonl", 19);
  files[0].relative_path = "a/b.jsonl";
  files[0].size = 123;
  files[0].mtime_ns = -5;
  files[0].format = io::Format::kJsonLines;
  files[0].compression = io::Compression::kZstd;
  files[1].absolute_path = "/x";
  files[1].relative_path = "x";
  const std::vector<io::InputFile> back = decode_inputs(encode_inputs(files));
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[0].absolute_path, files[0].absolute_path);
  EXPECT_EQ(back[0].relative_path, files[0].relative_path);
  EXPECT_EQ(back[0].size, 123U);
  EXPECT_EQ(back[0].mtime_ns, -5);
  EXPECT_EQ(back[0].format, io::Format::kJsonLines);
  EXPECT_EQ(back[0].compression, io::Compression::kZstd);
  EXPECT_EQ(back[1].absolute_path, "/x");
}

TEST(InputManifest, TruncatedBytesThrow) {
  std::vector<io::InputFile> files(1);
  files[0].absolute_path = "/data/file";
  const std::string bytes = encode_inputs(files);
  EXPECT_THROW((void)decode_inputs(std::string_view(bytes).substr(0, bytes.size() - 3)),
               std::runtime_error);
}

TEST(JsonWriter, ProducesParsableEscapedJson) {
  JsonWriter j;
  j.begin_object();
  j.value("text", std::string_view("quote\" backslash\\ nl\n ctl\x01 é"));
  j.value("n", std::uint64_t{18446744073709551615ULL});
  j.value("x", 0.25);
  j.value("nan", std::numeric_limits<double>::quiet_NaN());
  j.begin_array("list");
  j.begin_object();
  j.value("k", true);
  j.end_object();
  j.end_array();
  j.end_object();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(j.str()).get(doc), simdjson::SUCCESS) << j.str();
  std::string_view text;
  ASSERT_EQ(doc["text"].get(text), simdjson::SUCCESS);
  EXPECT_EQ(text, "quote\" backslash\\ nl\n ctl\x01 é");
  std::uint64_t n = 0;
  ASSERT_EQ(doc["n"].get(n), simdjson::SUCCESS);
  EXPECT_EQ(n, 18446744073709551615ULL);
  EXPECT_TRUE(doc["nan"].is_null());
  bool k = false;
  ASSERT_EQ(doc["list"].at(0)["k"].get(k), simdjson::SUCCESS);
  EXPECT_TRUE(k);
}

TEST(Progress, LineIsPlainWithRateAndEta) {
  const std::string line =
      ProgressReporter::format_line({1000, 300, 2, 50ULL << 20, 100ULL << 20}, 10.0);
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_NE(line.find("1000 records"), std::string::npos) << line;
  EXPECT_NE(line.find("100 rec/s"), std::string::npos) << line;
  EXPECT_NE(line.find("dup 30.00%"), std::string::npos) << line;
  EXPECT_NE(line.find("50.0/100.0 MiB"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 10s"), std::string::npos) << line;
}

TEST(RoundBatch, KeepsRecordsAndKeysAcrossArenaGrowth) {
  RoundBatch batch;
  std::vector<std::string> lines;
  for (int i = 0; i < 5000; ++i)
    lines.push_back("line-" + std::to_string(i) + std::string(50, 'x'));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string key = "key-" + std::to_string(i);  // not inside the line: copied
    // Every other record's key is a piece of its line (stored once).
    const std::string_view k =
        i % 2 ? std::string_view(lines[i]).substr(0, 6) : std::string_view(key);
    batch.add(static_cast<std::uint32_t>(i % 3), lines[i], i % 4 ? "\n" : "\r\n", core::hash_key(k),
              k);
  }
  const auto keys = batch.keys();
  ASSERT_EQ(keys.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(batch.record_bytes(i), lines[i] + (i % 4 ? "\n" : "\r\n"));
    EXPECT_EQ(batch.file_slot(i), i % 3);
    const std::string expect = i % 2 ? lines[i].substr(0, 6) : "key-" + std::to_string(i);
    EXPECT_EQ(keys[i].bytes, expect);
    EXPECT_EQ(keys[i].hash, core::hash_key(expect));
  }
  batch.clear();
  EXPECT_EQ(batch.size(), 0U);
  EXPECT_TRUE(batch.keys().empty());
}

// add_kept (zero copy): a record whose line stays in a kept
// buffer reads back like a copied one, its key inside the line or copied,
// mixed with copied records and with keyless records (paragraph mode), and
// counts in bytes() like a copy; clear() lets go of the buffers.
TEST(RoundBatch, KeptRecordsReadBackLikeCopiedOnes) {
  RoundBatch copied;
  RoundBatch mixed;
  const std::vector<std::string> lines = {"alpha line", "beta", "gamma gamma", "delta", "eps"};
  std::weak_ptr<const void> watch;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string other_key = "k" + std::to_string(i);
    const auto slot = static_cast<std::uint32_t>(i);
    if (i % 2 == 0) {
      auto buffer = std::make_shared<std::string>(lines[i] + "\r\n");
      if (i == 0) watch = buffer;
      const std::string_view line(buffer->data(), lines[i].size());
      const std::string_view key = i == 0 ? line.substr(0, 5) : std::string_view(other_key);
      mixed.keep(buffer);
      mixed.keep(buffer);  // again: kept once
      mixed.add_kept(slot, line, "\r\n", core::hash_key(key), key);
      const std::string_view ckey = i == 0 ? std::string_view(lines[i]).substr(0, 5) : key;
      copied.add(slot, lines[i], "\r\n", core::hash_key(ckey), ckey);
    } else if (i == 3) {
      mixed.add_record(slot, lines[i], "\r\n");
      mixed.add_key(core::hash_key(other_key), other_key);
      mixed.add_key(core::hash_key("second"), "second");
      copied.add_record(slot, lines[i], "\r\n");
      copied.add_key(core::hash_key(other_key), other_key);
      copied.add_key(core::hash_key("second"), "second");
    } else {
      mixed.add(slot, lines[i], "\r\n", core::hash_key(other_key), other_key);
      copied.add(slot, lines[i], "\r\n", core::hash_key(other_key), other_key);
    }
  }
  EXPECT_EQ(mixed.bytes(), copied.bytes());
  const auto want = copied.keys();
  const auto got = mixed.keys();
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), lines.size() + 1);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(mixed.record_bytes(i), copied.record_bytes(i));
    EXPECT_EQ(mixed.record_bytes(i), lines[i] + "\r\n");
    EXPECT_EQ(mixed.file_slot(i), i);
    EXPECT_EQ(mixed.first_key(i), copied.first_key(i));
    EXPECT_EQ(mixed.key_count(i), copied.key_count(i));
  }
  for (std::size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].bytes, want[k].bytes);
    EXPECT_EQ(got[k].hash, want[k].hash);
  }
  EXPECT_FALSE(watch.expired());  // kept until clear()
  mixed.clear();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(mixed.bytes(), 0U);
  EXPECT_EQ(mixed.size(), 0U);
}

// A copied record larger than an arena chunk gets its own chunk.
TEST(RoundBatch, RecordsLargerThanAnArenaChunk) {
  RoundBatch batch;
  const std::string big(3U << 20, 'b');
  batch.add(0, "small", "\n", core::hash_key("small"), "small");
  batch.add(1, big, "", core::hash_key("k"), "k");
  batch.add(2, "after", "\n", core::hash_key("after"), std::string_view("after"));
  EXPECT_EQ(batch.record_bytes(0), "small\n");
  EXPECT_EQ(batch.record_bytes(1), big);
  EXPECT_EQ(batch.record_bytes(2), "after\n");
  EXPECT_EQ(batch.keys()[1].bytes, "k");
  batch.clear();
  batch.add(0, "again", "\n", core::hash_key("again"), "again");
  EXPECT_EQ(batch.record_bytes(0), "again\n");
}

}  // namespace
}  // namespace bloomshard::app
