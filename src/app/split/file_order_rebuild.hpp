// The owners' memory of kept copies from later ranges of split inputs
// (core::FileOrder) is not saved in checkpoints: a resume rebuilds it from
// what the checkpoint committed. Every range k > 0 of an input not joined
// yet has an output part holding its kept records up to its committed
// length; each such line (less the retracted ones) is a kept copy the owner
// must remember, with its input offset. The rank that would join the part
// walks it beside its input range (app/split/retracted_lines.hpp), remakes each
// line's key hash as the feed does, and routes (hash, order tag) to the
// owners, which remember them.
#pragma once

#include <cstdint>
#include <filesystem>

#include "app/feed/input_feed.hpp"
#include "app/run/run_manifest.hpp"
#include "comm/router.hpp"
#include "core/order/file_order.hpp"

namespace bloomshard::app {

/// Collective (every rank, once, before the first round of a resumed run
/// that keeps file order). Reads each committed part once; holds 24 bytes
/// per kept line of the parts this rank walks until they are routed (one
/// KeyRouter::route under `budget`, so in sub-rounds when large). Returns
/// the kept copies this rank walked. Throws what the walk or the router
/// throws (a part that does not match its input).
std::uint64_t rebuild_file_order(comm::KeyRouter& router, const RunManifest& m, InputFeed& feed,
                                 const std::filesystem::path& output_dir, std::uint64_t budget,
                                 core::FileOrder& order);

}  // namespace bloomshard::app
