#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "app/cli/exit_codes.hpp"
#include "app/feed/input_windows.hpp"
#include "app/guard/output_guard.hpp"
#include "app/run/checkpointer.hpp"
#include "app/run/run_manifest.hpp"
#include "app/run/run_state.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {
namespace {

namespace fs = std::filesystem;

class RunStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bloomshard-runstate-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "in/a.jsonl") << "{\"id\":\"a\"}\n";
    std::ofstream(dir_ / "in/b.txt") << "b\n";
    config_.inputs = {(dir_ / "in").string()};
    config_.output_dir = (dir_ / "out").string();
    config_.state_dir = (dir_ / "state").string();
    config_.hash_seed = 7;
    args_ = {dir_ / "in"};
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<io::InputFile> inputs() const { return io::discover_inputs(args_); }

  fs::path dir_;
  DedupConfig config_;
  std::vector<fs::path> args_;
};

TEST(RunManifest, RoundTripsEveryField) {
  RunManifest m;
  m.run_id = "0123456789abcdef";
  m.output_dir = "/out/dir \"quoted\" é";
  InputProgress p;
  p.file.absolute_path = "/in/x.jsonl.zst";
  p.file.relative_path = "sub/x.jsonl.zst";
  p.file.size = 12345;
  p.file.mtime_ns = 1700000000123456789;
  p.file.format = io::Format::kJsonLines;
  p.file.compression = io::Compression::kZstd;
  p.cursor = {42, 4096};
  p.done = false;
  p.output_length = 777;
  m.inputs.push_back(p);
  p.file.relative_path = "y.txt";
  p.done = true;
  p.skipped = "truncated gzip stream \"x\" at compressed byte 9";
  p.prefix_digest = 0xFEDCBA9876543210ULL;
  p.cursor.frame = io::FrameStart{1000, 2048};  // optional frame start
  m.inputs.push_back(p);
  m.rejects = {{"rank-0.jsonl", 10}, {"rank-1.resume-g3.jsonl", 0}};
  m.counters.records = 100;
  m.counters.kept = 70;
  m.counters.duplicates = 29;
  m.counters.rejected = 1;
  m.counters.rounds = 5;
  m.counters.rejected_by_reason["malformed JSON"] = 1;

  const RunManifest back = manifest_from_json(manifest_to_json(m));
  EXPECT_EQ(back.run_id, m.run_id);
  EXPECT_EQ(back.output_dir, m.output_dir);
  ASSERT_EQ(back.inputs.size(), 2U);
  EXPECT_EQ(back.inputs[0].file.absolute_path, m.inputs[0].file.absolute_path);
  EXPECT_EQ(back.inputs[0].file.relative_path, "sub/x.jsonl.zst");
  EXPECT_EQ(back.inputs[0].file.size, 12345U);
  EXPECT_EQ(back.inputs[0].file.mtime_ns, 1700000000123456789);
  EXPECT_EQ(back.inputs[0].file.format, io::Format::kJsonLines);
  EXPECT_EQ(back.inputs[0].file.compression, io::Compression::kZstd);
  EXPECT_EQ(back.inputs[0].cursor, (io::InputCursor{42, 4096}));
  EXPECT_FALSE(back.inputs[0].cursor.frame.has_value());
  EXPECT_EQ(back.inputs[1].cursor, (io::InputCursor{42, 4096, io::FrameStart{1000, 2048}}));
  EXPECT_FALSE(back.inputs[0].done);
  EXPECT_TRUE(back.inputs[1].done);
  EXPECT_TRUE(back.inputs[0].skipped.empty());
  EXPECT_EQ(back.inputs[1].skipped, m.inputs[1].skipped);
  EXPECT_FALSE(back.inputs[0].prefix_digest.has_value());
  EXPECT_EQ(back.inputs[1].prefix_digest, 0xFEDCBA9876543210ULL);
  EXPECT_EQ(back.inputs[0].output_length, 777U);
  ASSERT_EQ(back.rejects.size(), 2U);
  EXPECT_EQ(back.rejects[1].name, "rank-1.resume-g3.jsonl");
  EXPECT_EQ(back.rejects[0].length, 10U);
  EXPECT_EQ(back.counters.records, 100U);
  EXPECT_EQ(back.counters.kept, 70U);
  EXPECT_EQ(back.counters.rounds, 5U);
  EXPECT_EQ(back.counters.rejected_by_reason.at("malformed JSON"), 1U);
}

TEST(RunManifest, RefusesNamesThatAreNotUtf8AndMissingFields) {
  RunManifest m;
  m.run_id = "x";
  InputProgress p;
  p.file.relative_path = std::string("bad\xff", 4);
  m.inputs.push_back(p);
  EXPECT_THROW((void)manifest_to_json(m), std::runtime_error);
  EXPECT_THROW((void)manifest_from_json("{\"run_id\":\"x\"}"), std::runtime_error);
  EXPECT_THROW((void)manifest_from_json("not json"), std::runtime_error);
  // Enum fields out of range are refused, not cast: a manifest is read from disk.
  m.inputs[0].file.relative_path = "a";
  std::string json = manifest_to_json(m);
  const std::size_t at = json.find("\"compression\":0");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 15, "\"compression\":7");
  EXPECT_THROW((void)manifest_from_json(json), std::runtime_error);
}

// Accepted changes of an unfinished run (docs/inputs.md) and the refusals.
TEST(RunManifest, ReconcileInputsAcceptsOnlyChangesThatLoseNothingSilently) {
  const auto input = [](const std::string& rel, std::uint64_t size) {
    InputProgress p;
    p.file.relative_path = rel;
    p.file.size = size;
    p.file.mtime_ns = 1;
    return p;
  };
  RunManifest m;
  m.inputs = {input("done", 10), input("half", 20), input("fresh", 30), input("gone", 40)};
  m.input_windows_version = kInputWindowsVersion;  // a checkpoint of this version
  m.inputs[0].done = true;
  m.inputs[1].cursor = {3, 12};
  std::vector<io::InputFile> today;
  for (const auto& p : m.inputs) today.push_back(p.file);

  {  // the same files: nothing to say
    RunManifest c = m;
    const InputChanges ch = reconcile_inputs(c, today);
    EXPECT_TRUE(ch.refusal.empty());
    EXPECT_TRUE(ch.notes.empty());
    EXPECT_EQ(c.inputs.size(), 4U);
  }
  {  // an unstarted input removed, another changed
    RunManifest c = m;
    std::vector<io::InputFile> now = {today[0], today[1], today[2]};
    now[2].size = 31;
    const InputChanges ch = reconcile_inputs(c, now);
    EXPECT_TRUE(ch.refusal.empty()) << ch.refusal;
    EXPECT_EQ(ch.notes.size(), 2U);
    ASSERT_EQ(c.inputs.size(), 3U);
    EXPECT_EQ(c.inputs[2].file.size, 31U);  // read with its new content
  }
  {  // the unfinished started input removed: counted up to its cursor, skipped
    RunManifest c = m;
    const std::vector<io::InputFile> now = {today[0], today[2], today[3]};
    const InputChanges ch = reconcile_inputs(c, now);
    EXPECT_TRUE(ch.refusal.empty()) << ch.refusal;
    ASSERT_EQ(c.inputs.size(), 4U);
    EXPECT_TRUE(c.inputs[1].done);
    EXPECT_FALSE(c.inputs[1].skipped.empty());
    EXPECT_EQ(c.inputs[1].cursor, (io::InputCursor{3, 12}));
  }
  {  // the unfinished started input changed: refused
    RunManifest c = m;
    std::vector<io::InputFile> now = today;
    now[1].size = 21;
    EXPECT_NE(reconcile_inputs(c, now).refusal.find("'half' changed after 3"), std::string::npos);
  }
  {  // ... unless revalidated; its frame start may no longer hold
    RunManifest c = m;
    c.inputs[1].cursor.frame = io::FrameStart{5, 6};
    std::vector<io::InputFile> now = today;
    now[1].size = 21;
    const RevalidateFn same = [](const InputProgress&, const io::InputFile&) {
      return std::string();
    };
    const InputChanges ch = reconcile_inputs(c, now, &same);
    EXPECT_TRUE(ch.refusal.empty()) << ch.refusal;
    EXPECT_EQ(c.inputs[1].cursor, (io::InputCursor{3, 12}));
    EXPECT_FALSE(c.inputs[1].cursor.frame.has_value());
  }
  {  // unchanged: the frame start is kept
    RunManifest c = m;
    c.inputs[1].cursor.frame = io::FrameStart{5, 6};
    EXPECT_TRUE(reconcile_inputs(c, today).refusal.empty());
    EXPECT_EQ(c.inputs[1].cursor.frame, (io::FrameStart{5, 6}));
  }
  {  // a new input: refused
    RunManifest c = m;
    std::vector<io::InputFile> now = today;
    now.push_back(today[0]);
    now.back().relative_path = "new";
    EXPECT_NE(reconcile_inputs(c, now).refusal.find("'new' is not part"), std::string::npos);
  }
}

// A finished input that changed is never silently left unread: refused
// (naming it, the sizes and the UTC mtimes), or revalidated and read on.
TEST(RunManifest, ReconcileInputsRefusesAFinishedInputThatChanged) {
  InputProgress done;
  done.file.relative_path = "d.jsonl";
  done.file.size = 100;
  done.file.mtime_ns = 1700000000123456789;
  done.done = true;
  done.cursor = {7, 100};
  done.output_length = 60;
  done.cursor.frame = io::FrameStart{40, 50};
  RunManifest m;
  m.inputs = {done};
  io::InputFile grown = done.file;
  grown.size = 160;
  grown.mtime_ns = 1700000060000000000;
  const std::vector<io::InputFile> now = {grown};
  {
    RunManifest c = m;
    const std::string refusal = reconcile_inputs(c, now).refusal;
    EXPECT_NE(refusal.find("input 'd.jsonl' changed after it was finished"), std::string::npos)
        << refusal;
    EXPECT_NE(refusal.find("size 100 -> 160 bytes (grew by 60)"), std::string::npos) << refusal;
    EXPECT_NE(
        refusal.find("mtime 2023-11-14T22:13:20.123456789Z -> 2023-11-14T22:14:20.000000000Z"),
        std::string::npos)
        << refusal;
    EXPECT_NE(refusal.find("--revalidate-inputs"), std::string::npos) << refusal;
  }
  {  // revalidation fails: refused with its reason
    RunManifest c = m;
    const RevalidateFn differs = [](const InputProgress&, const io::InputFile&) {
      return std::string("its first 7 records are not the ones read before");
    };
    const std::string refusal = reconcile_inputs(c, now, &differs).refusal;
    EXPECT_NE(refusal.find("cannot be revalidated: its first 7 records"), std::string::npos)
        << refusal;
  }
  {  // revalidated: unfinished again, read on after the cursor into its output
    RunManifest c = m;
    const RevalidateFn same = [](const InputProgress&, const io::InputFile&) {
      return std::string();
    };
    const InputChanges ch = reconcile_inputs(c, now, &same);
    EXPECT_TRUE(ch.refusal.empty()) << ch.refusal;
    ASSERT_EQ(c.inputs.size(), 1U);
    EXPECT_FALSE(c.inputs[0].done);
    EXPECT_EQ(c.inputs[0].cursor, (io::InputCursor{7, 100}));
    EXPECT_FALSE(c.inputs[0].cursor.frame.has_value());
    EXPECT_EQ(c.inputs[0].output_length, 60U);
    EXPECT_EQ(c.inputs[0].file.size, 160U);
    ASSERT_EQ(ch.notes.size(), 1U);
    EXPECT_NE(ch.notes[0].find("appended after them are read now"), std::string::npos);
  }
  {  // a shrunk one: refused too
    RunManifest c = m;
    std::vector<io::InputFile> shrunk = {done.file};
    shrunk[0].size = 90;
    EXPECT_NE(reconcile_inputs(c, shrunk).refusal.find("(shrank by 10)"), std::string::npos);
  }
  {  // a split input that changed: refused even with --revalidate-inputs
    RunManifest c = m;
    c.inputs[0].ranges = {RangeProgress{0, 50, {3, 50}, true, 0, 0, {}, {}},
                          RangeProgress{50, 100, {4, 100}, true, 0, 0, {}, {}}};
    const RevalidateFn same = [](const InputProgress&, const io::InputFile&) {
      return std::string();
    };
    const std::string refusal = reconcile_inputs(c, now, &same).refusal;
    EXPECT_NE(refusal.find("split into byte ranges"), std::string::npos) << refusal;
  }
}

// Same size and mtime: a started input is compared by its window digest.
TEST(RunManifest, ReconcileInputsRefusesAReplacedInputOfTheSameSizeAndMtime) {
  InputProgress half;
  half.file.relative_path = "h.txt";
  half.file.size = 100;
  half.file.mtime_ns = 5;
  half.cursor = {3, 30};
  half.window = InputWindow{30, 1234};
  InputProgress fresh = half;
  fresh.file.relative_path = "z.txt";
  fresh.cursor = {};
  fresh.window.reset();
  RunManifest m;
  m.inputs = {half, fresh};
  m.input_windows_version = kInputWindowsVersion;
  const std::vector<io::InputFile> now = {half.file, fresh.file};
  int calls = 0;
  const WindowCheckFn replaced = [&](const InputProgress&, const io::InputFile&) {
    ++calls;
    return std::string("its first 100 bytes are not the ones the checkpoint saw");
  };
  {
    RunManifest c = m;
    const std::string refusal = reconcile_inputs(c, now, nullptr, &replaced).refusal;
    EXPECT_NE(refusal.find("input 'h.txt' was replaced after some of its records were read"),
              std::string::npos)
        << refusal;
    EXPECT_NE(refusal.find("100 bytes, 1970-01-01T00:00:00.000000005Z"), std::string::npos)
        << refusal;
    EXPECT_EQ(calls, 1);  // the unstarted input is not checked: its new content is read
  }
  {  // revalidated: goes on, reading from byte 0 (no frame start)
    RunManifest c = m;
    const RevalidateFn same = [](const InputProgress&, const io::InputFile&) {
      return std::string();
    };
    EXPECT_TRUE(reconcile_inputs(c, now, &same, &replaced).refusal.empty());
    EXPECT_FALSE(c.inputs[0].window.has_value());
  }
  {  // an older checkpoint without windows: size and mtime only, and it says so
    RunManifest c = m;
    c.input_windows_version = 0;
    c.inputs[0].window.reset();
    const InputChanges ch = reconcile_inputs(c, now, nullptr, &replaced);
    EXPECT_TRUE(ch.refusal.empty());
    ASSERT_EQ(ch.notes.size(), 1U);
    EXPECT_NE(ch.notes[0].find("checked by size and mtime only"), std::string::npos);
  }
  {  // the other ranks follow rank 0's plan without reading windows: no note
    RunManifest c = m;
    const InputChanges ch = reconcile_inputs(c, now);
    EXPECT_TRUE(ch.refusal.empty());
    EXPECT_TRUE(ch.notes.empty());
  }
}

TEST(RunManifest, MtimesPrintAsUtcIso8601) {
  EXPECT_EQ(iso_utc(0), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(iso_utc(1700000000123456789), "2023-11-14T22:13:20.123456789Z");
  EXPECT_EQ(iso_utc(-1), "1969-12-31T23:59:59.999999999Z");
  io::InputFile a;
  a.size = 10;
  a.mtime_ns = 0;
  io::InputFile b = a;
  EXPECT_EQ(describe_file_change(a, b),
            "size 10 -> 10 bytes (same size), mtime "
            "1970-01-01T00:00:00.000000000Z (same)");
}

TEST(RunManifest, WindowFieldsRoundTripWithTheirVersionMark) {
  RunManifest m;
  m.run_id = "x";
  InputProgress p;
  p.file.relative_path = "a";
  p.file.size = 9000;
  p.cursor = {2, 8000};
  p.window = InputWindow{8000, 42};
  m.inputs.push_back(p);
  m.input_windows_version = kInputWindowsVersion;
  m.input_window_bytes = kInputWindowBytes;
  const std::string json = manifest_to_json(m);
  const RunManifest back = manifest_from_json(json);
  EXPECT_EQ(back.input_windows_version, kInputWindowsVersion);
  EXPECT_EQ(back.inputs[0].window, (InputWindow{8000, 42}));
  // Without the mark (a manifest of an older build): no windows at all.
  RunManifest old = m;
  old.input_windows_version = 0;
  old.inputs[0].window.reset();
  EXPECT_EQ(manifest_from_json(manifest_to_json(old)).input_windows_version, 0U);
  // Window fields without the mark, or a version this build does not read: refused.
  old.inputs[0].window = InputWindow{8000, 42};
  EXPECT_THROW((void)manifest_from_json(manifest_to_json(old)), std::runtime_error);
  std::string newer = json;
  newer.replace(newer.find("\"input_windows\":1"), 17, "\"input_windows\":2");
  EXPECT_THROW((void)manifest_from_json(newer), std::runtime_error);
}

// The windows over real bytes: the first bytes and those just before the
// end, nothing between (the documented limit).
TEST_F(RunStateTest, WindowDigestCoversTheFirstBytesAndThoseBeforeTheEnd) {
  const fs::path f = dir_ / "w.bin";
  std::string bytes(20000, 'x');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 26);
  const auto write = [&](const std::string& b) { std::ofstream(f, std::ios::binary) << b; };
  write(bytes);
  const std::uint64_t base = input_window_digest(f, bytes.size(), 15000);
  const auto with_byte = [&](std::size_t at) {
    std::string b = bytes;
    b[at] = '#';
    write(b);
    return input_window_digest(f, b.size(), 15000);
  };
  EXPECT_NE(with_byte(0), base);
  EXPECT_NE(with_byte(4095), base);
  EXPECT_NE(with_byte(14999), base);
  EXPECT_NE(with_byte(15000 - 4096), base);
  EXPECT_EQ(with_byte(15000 - 4097), base);  // between the windows: not seen
  EXPECT_EQ(with_byte(15000), base);         // after the end: not seen
  write(bytes.substr(0, 10000));
  EXPECT_THROW((void)input_window_digest(f, bytes.size(), 15000), std::runtime_error);
  // A small file: one window, the whole file.
  write("abc");
  EXPECT_NE(input_window_digest(f, 3, 3), base);
  InputProgress p;
  p.file.absolute_path = f;
  p.file.size = 3;
  p.cursor = {1, 3};
  p.window = InputWindow{3, input_window_digest(f, 3, 3)};
  EXPECT_EQ(window_difference(p, p.file), "");
  write("abd");
  EXPECT_NE(window_difference(p, p.file).find("its first 3 bytes"), std::string::npos);
}

TEST(RunManifest, RejectFileNamesDifferPerSegment) {
  EXPECT_EQ(reject_file_name(0, 0), "rank-0.jsonl");
  EXPECT_EQ(reject_file_name(3, 12), "rank-3.resume-g12.jsonl");
}

TEST_F(RunStateTest, IdentityFollowsInputsAndPolicy) {
  const std::string id = run_identity(config_, inputs());
  EXPECT_EQ(id.size(), 16U);
  EXPECT_EQ(run_identity(config_, inputs()), id);  // deterministic
  DedupConfig other = config_;
  other.key.fields = {"url"};
  EXPECT_NE(run_identity(other, inputs()), id);
  other = config_;
  other.key.normalize = core::NormalizePolicy::kNfc;
  EXPECT_NE(run_identity(other, inputs()), id);
  std::ofstream(dir_ / "in/b.txt", std::ios::app) << "more\n";
  EXPECT_NE(run_identity(config_, inputs()), id);
}

TEST_F(RunStateTest, FreshRunRecordsItsIdentityAndRestartsOverItsOwnOutputs) {
  const StartDecision first = decide_start(config_, args_, inputs());
  ASSERT_TRUE(first.error.empty()) << first.error;
  EXPECT_EQ(first.plan.kind, StartKind::kFresh);
  EXPECT_TRUE(fs::exists(dir_ / "state" / kRunIdentityName));
  EXPECT_TRUE(fs::exists(dir_ / "out" / kRejectsDirName));

  // Killed before the first checkpoint: partial outputs exist. The same run
  // starts again from scratch without --overwrite.
  std::ofstream(dir_ / "out/a.jsonl") << "partial";
  const StartDecision again = decide_start(config_, args_, inputs());
  ASSERT_TRUE(again.error.empty()) << again.error;
  EXPECT_EQ(again.plan.kind, StartKind::kFresh);
  EXPECT_FALSE(fs::exists(dir_ / "out/a.jsonl"));  // its own partial output was removed
}

TEST_F(RunStateTest, AnotherRunsStateOrOutputsAreRefused) {
  ASSERT_TRUE(decide_start(config_, args_, inputs()).error.empty());
  DedupConfig other = config_;
  other.key.fields = {"url"};  // another run, same state dir
  const StartDecision d = decide_start(other, args_, inputs());
  EXPECT_EQ(d.exit_code, kExitUsage);
  EXPECT_NE(d.error.find("belongs to another run"), std::string::npos) << d.error;

  // Without --state: a non-empty output dir is another run's.
  DedupConfig stateless = config_;
  stateless.state_dir.clear();
  const StartDecision e = decide_start(stateless, args_, inputs());
  EXPECT_EQ(e.exit_code, kExitOutputInUse) << e.error;
  EXPECT_NE(e.error.find("a run without --state saves nothing to resume"), std::string::npos)
      << e.error;

  // With a new --state: the outputs are another run's than this state's;
  // the refusal names the state and does not speak of a run without one.
  DedupConfig new_state = config_;
  new_state.state_dir = (dir_ / "other-state").string();
  const StartDecision f = decide_start(new_state, args_, inputs());
  EXPECT_EQ(f.exit_code, kExitOutputInUse) << f.error;
  EXPECT_NE(f.error.find("the state in '" + new_state.state_dir + "' did not write"),
            std::string::npos)
      << f.error;
  EXPECT_EQ(f.error.find("without --state"), std::string::npos) << f.error;
  EXPECT_FALSE(fs::exists(dir_ / "other-state" / kRunIdentityName));  // nothing recorded
}

TEST_F(RunStateTest, OverlappingInputAndOutputIsRefused) {
  DedupConfig c = config_;
  c.output_dir = (dir_ / "in" / "out").string();
  const StartDecision d = decide_start(c, args_, inputs());
  EXPECT_EQ(d.exit_code, kExitUsage);
  EXPECT_NE(d.error.find("overlap"), std::string::npos) << d.error;
}

TEST(StartPlan, EncodesAndDecodes) {
  StartPlan p;
  p.kind = StartKind::kResume;
  p.run_id = "abcdef0123456789";
  p.num_slices = 4096;
  p.candidates = {7, 6, 3};
  const StartPlan back = decode_plan(encode_plan(p));
  EXPECT_EQ(back.kind, StartKind::kResume);
  EXPECT_EQ(back.run_id, p.run_id);
  EXPECT_EQ(back.num_slices, 4096U);
  EXPECT_EQ(back.candidates, p.candidates);
  EXPECT_TRUE(back.base_run_id.empty());
  p.base_run_id = "00000000deadbeef";
  p.base_finished = true;
  const StartPlan again = decode_plan(encode_plan(p));
  EXPECT_EQ(again.base_run_id, "00000000deadbeef");
  EXPECT_TRUE(again.base_finished);
  EXPECT_EQ(again.candidates, p.candidates);
}

TEST(StartPlan, FallbackStaysWithinTheRun) {
  StartPlan p;
  p.kind = StartKind::kResume;
  p.base_run_id = "aaaa";
  p.base_finished = false;
  EXPECT_EQ(foreign_generation(p, 7, "aaaa", false), "");
  const std::string other = foreign_generation(p, 6, "bbbb", true);
  EXPECT_NE(other.find("generation 6 skipped: it holds finished run bbbb"), std::string::npos)
      << other;
  EXPECT_NE(foreign_generation(p, 5, "aaaa", true), "");  // same id, other finished flag
  p.kind = StartKind::kIncremental;
  p.base_finished = true;
  EXPECT_EQ(foreign_generation(p, 5, "aaaa", true), "");
  EXPECT_NE(foreign_generation(p, 6, "cccc", false), "");  // an abandoned incremental run
}

TEST(StartPlan, ErrorsBecomeOneLine) {
  EXPECT_EQ(one_line("short"), "short");
  EXPECT_EQ(one_line("first\nsecond\nthird\n"),
            "first (+14 more characters, 2 more lines; `bloomshard verify --state DIR` lists "
            "all)");
  const std::string huge(5000, 'x');
  const std::string cut = one_line(huge);
  EXPECT_LT(cut.size(), 500U);
  EXPECT_NE(cut.find("(+4600 more characters;"), std::string::npos) << cut;
}

TEST_F(RunStateTest, RunJsonOnAFullDiskFailsTheStartAndLeavesNoEmptyFile) {
  // /dev/full: every write fails with ENOSPC, like a state dir that filled.
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  fs::create_directories(dir_ / "state");
  fs::create_symlink("/dev/full", dir_ / "state" / (std::string(kRunIdentityName) + ".tmp"));
  const StartDecision d = decide_start(config_, args_, inputs());
  EXPECT_EQ(d.exit_code, kExitFailure) << d.error;
  EXPECT_NE(d.error.find("cannot write"), std::string::npos) << d.error;
  EXPECT_FALSE(fs::exists(dir_ / "state" / kRunIdentityName));
  // Space back: the same start goes ahead as a fresh run.
  fs::remove(dir_ / "state" / (std::string(kRunIdentityName) + ".tmp"));
  const StartDecision again = decide_start(config_, args_, inputs());
  EXPECT_TRUE(again.error.empty()) << again.error;
  EXPECT_EQ(again.plan.kind, StartKind::kFresh);
}

// The frame start of a cursor is optional, but only as a pair of
// fields, and must lie before the cursor's offset.
TEST(RunManifest, FrameStartFieldsComeAsAPairBeforeTheOffset) {
  RunManifest m;
  m.run_id = "x";
  InputProgress p;
  p.file.relative_path = "a.txt.zst";
  p.cursor = {3, 5000, io::FrameStart{700, 4096}};
  m.inputs.push_back(p);
  const std::string json = manifest_to_json(m);
  ASSERT_NE(json.find("\"frame_compressed_offset\":700,\"frame_decompressed_offset\":4096"),
            std::string::npos)
      << json;
  const auto without = [&](std::string_view field) {
    std::string j = json;
    const std::size_t at = j.find(std::string(",\"") + std::string(field));
    j.erase(at, j.find_first_of(",}", at + 1) - at);
    return j;
  };
  EXPECT_THROW((void)manifest_from_json(without("frame_compressed_offset")), std::runtime_error);
  EXPECT_THROW((void)manifest_from_json(without("frame_decompressed_offset")), std::runtime_error);
  std::string late = json;
  late.replace(late.find("4096"), 4, "5000");
  EXPECT_THROW((void)manifest_from_json(late), std::runtime_error);
}

}  // namespace
}  // namespace bloomshard::app
