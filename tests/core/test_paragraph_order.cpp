// The order of paragraphs under --kept-copy first --unit paragraph
// (core/order/paragraph_order.hpp): a paragraph's tag is its record's plus
// its index, so the tags of a record's paragraphs run in text order and stay
// below the next record's; with them, the across-inputs FileOrder keeps each
// paragraph key in its first record in the one order, whatever order the
// records reach the owner in.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bloomshard/core/key_hash.hpp"
#include "bloomshard/core/paragraph_split.hpp"
#include "core/order/file_order.hpp"
#include "core/order/paragraph_order.hpp"

namespace bloomshard::core {
namespace {

OrderTag record_tag(std::uint64_t input, std::uint64_t offset) {
  return *order_tag_base(input, std::uint64_t{1} << 30, false) | offset;
}

// A JSONL line holding `text` as its "text" field, escaped as JSON writes it.
std::string json_line(const std::string& text) {
  std::string line = "{\"text\":\"";
  for (const char c : text) {
    switch (c) {
      case '\n':
        line += "\\n";
        break;
      case '\r':
        line += "\\r";
        break;
      case '\t':
        line += "\\t";
        break;
      case '"':
        line += "\\\"";
        break;
      case '\\':
        line += "\\\\";
        break;
      default:
        line += c;
    }
  }
  return line + "\"}";
}

TEST(ParagraphOrder, TagsRunInTextOrderBelowTheNextRecord) {
  std::mt19937_64 rng(7);
  const std::string alphabet = "ab \n\n\r\t\"\\";
  for (const ParagraphSplit rule : {ParagraphSplit::kNewline, ParagraphSplit::kBlankline}) {
    std::uint64_t offset = 0;
    OrderTag last = 0;
    for (int r = 0; r < 2000; ++r) {
      std::string text;
      const std::size_t n = rng() % 40;
      for (std::size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
      if (r % 7 == 0) text = std::string(rng() % 5, '\n');  // nothing but separators
      const std::string line = json_line(text);
      std::vector<ParagraphSpan> spans;
      split_paragraphs(rule, text, spans);
      ASSERT_LT(spans.size(), line.size()) << "the index bound of the tag";
      const OrderTag base = record_tag(3, offset);
      for (std::size_t p = 0; p < spans.size(); ++p) {
        const OrderTag t = paragraph_order_tag(base, p, line.size());
        ASSERT_NE(t, 0u);
        ASSERT_GT(t, last) << "tags ascend in the one order";
        ASSERT_LT(order_offset(t), offset + line.size()) << "inside the record's line";
        ASSERT_EQ(order_input(t), 3u);
        last = t;
      }
      offset += line.size() + 1;  // the terminator
    }
  }
}

TEST(ParagraphOrder, UntaggedWhereTheTagCannotHold) {
  EXPECT_EQ(paragraph_order_tag(0, 0, 10), 0u);                    // an untagged record
  EXPECT_EQ(paragraph_order_tag(record_tag(0, 100), 10, 10), 0u);  // would meet the next record
  EXPECT_EQ(paragraph_order_tag(record_tag(0, 100), 9, 10), record_tag(0, 109));
  const OrderTag at_end = record_tag(1, kOrderMaxOffset - 2);
  EXPECT_EQ(paragraph_order_tag(at_end, 2, 100), record_tag(1, kOrderMaxOffset));
  EXPECT_EQ(paragraph_order_tag(at_end, 3, 100), 0u) << "past the offset bits: the input's";
}

// Records of paragraph keys (some repeated inside a record), read by one
// reader per input, handed over in random batches of whole records; the
// owner decides each round in tag order, settles, and forgets behind the
// watermark. Kept paragraphs less the retracted ones must be exactly each
// key's first copy in the one order; every retraction names a paragraph of
// a record that kept it, in another input than the copy that beat it.
TEST(ParagraphOrder, RandomArrivalKeepsEachParagraphInItsFirstRecord) {
  std::mt19937_64 rng(11);
  std::size_t retractions = 0;
  for (int trial = 0; trial < 60; ++trial) {
    struct Paragraph {
      std::string key;
      OrderTag tag;
    };
    std::vector<std::vector<std::vector<Paragraph>>> inputs;  // input, record, paragraph
    std::map<std::string, OrderTag> first;
    const std::size_t input_count = 2 + rng() % 4;
    for (std::size_t in = 0; in < input_count; ++in) {
      std::vector<std::vector<Paragraph>> records;
      std::uint64_t offset = 0;
      const std::size_t n = 20 + rng() % 80;
      for (std::size_t r = 0; r < n; ++r) {
        const std::size_t line_bytes = 40 + rng() % 200;
        std::vector<Paragraph> record;
        const std::size_t paragraphs = 1 + rng() % 6;
        for (std::size_t p = 0; p < paragraphs; ++p) {
          const std::string key = "p" + std::to_string(rng() % 150);
          const OrderTag t = paragraph_order_tag(record_tag(in, offset), p, line_bytes);
          ASSERT_NE(t, 0u);
          first.emplace(key, t);  // inputs, records and paragraphs walked in order
          record.push_back({key, t});
        }
        records.push_back(record);
        offset += line_bytes + 1;
      }
      inputs.push_back(records);
    }
    FileOrder owner(OrderScope::kAcrossInputs);
    std::vector<std::size_t> next(input_count, 0);
    std::set<std::string> tier2;
    std::set<OrderTag> kept;
    std::map<OrderTag, std::string> key_of;
    for (;;) {
      std::vector<Paragraph> round;
      bool all_done = true;
      for (std::size_t in = 0; in < input_count; ++in) {
        if (next[in] >= inputs[in].size()) continue;
        all_done = false;
        if (rng() % 2 == 0) continue;
        for (std::size_t take = 1 + rng() % 8; take > 0 && next[in] < inputs[in].size(); --take) {
          for (const Paragraph& p : inputs[in][next[in]]) round.push_back(p);
          ++next[in];
        }
      }
      if (all_done) break;
      std::vector<OrderTag> tags;
      for (const Paragraph& p : round) tags.push_back(p.tag);
      std::vector<std::uint32_t> at;
      order_by_tag(tags, at);
      std::vector<KeyRef> keys;
      std::vector<OrderTag> sorted_tags;
      std::vector<Verdict> verdicts;
      for (const std::uint32_t i : at) {
        keys.push_back({hash_key(round[i].key), round[i].key});
        sorted_tags.push_back(round[i].tag);
        verdicts.push_back(tier2.insert(round[i].key).second ? Verdict::kNew : Verdict::kDuplicate);
        key_of[round[i].tag] = round[i].key;
      }
      std::vector<OrderTag> within;
      std::vector<CrossInputRetraction> across;
      owner.settle(keys, sorted_tags, verdicts, within, &across);
      ASSERT_TRUE(within.empty()) << "whole inputs: no retraction inside one input";
      for (std::size_t j = 0; j < verdicts.size(); ++j) {
        if (is_kept(verdicts[j])) kept.insert(sorted_tags[j]);
      }
      for (const CrossInputRetraction& r : across) {
        ASSERT_EQ(r.hash, hash_key(key_of.at(r.tag)));
        ASSERT_EQ(kept.erase(r.tag), 1u) << "retracted a paragraph that was not kept";
        ++retractions;
      }
      std::uint64_t w = ~std::uint64_t{0};
      for (std::size_t in = 0; in < input_count; ++in) {
        if (next[in] < inputs[in].size()) {
          w = std::min(w, order_position(inputs[in][next[in]].front().tag));
        }
      }
      owner.forget_before(w);
    }
    std::set<OrderTag> expected;
    for (const auto& [key, t] : first) expected.insert(t);
    ASSERT_EQ(kept, expected) << "trial " << trial;
  }
  EXPECT_GT(retractions, 100u) << "the retractions the case is about";
}

}  // namespace
}  // namespace bloomshard::core
