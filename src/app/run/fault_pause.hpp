// Test hook for the finishing phase of a dedup run: with
// BLOOMSHARD_FAULT_PAUSE_IN_FINISH=<point> in the environment, every rank
// stops at that point of the finish (rank 0 says so on stderr, one line
// "fault pause at <point>") and waits, so that the launcher's kill after a
// test's SIGTERM lands exactly there. Without
// the variable (every real run) it costs one getenv per point. Not a
// feature: tests/faults/finish_stop.sh uses it to make "a SIGTERM while the
// job finishes" deterministic instead of a race against the clock.
#pragma once

namespace bloomshard::app {

/// Points, in the order the finish passes them.
inline constexpr const char* kPauseBeforeJoin = "before-join";
/// Input order with --state: the cut outputs are written into their
/// temporary files, no generation records them yet ...
inline constexpr const char* kPauseBeforeEndPassCheckpoint = "before-end-pass-checkpoint";
/// ... and then recorded in a generation, none renamed yet
/// (app/round/retracted_copies.hpp).
inline constexpr const char* kPauseBeforeEndPassRenames = "before-end-pass-renames";
inline constexpr const char* kPauseBeforeFinalCheckpoint = "before-final-checkpoint";
inline constexpr const char* kPauseInFinalCommit = "in-final-commit";  ///< rank 0 only
inline constexpr const char* kPauseAfterFinalCheckpoint = "after-final-checkpoint";
inline constexpr const char* kPauseAfterSummary = "after-summary";

/// Not in the finish: right after the first periodic checkpoint of an
/// attempt, held until this rank gets a stop request (or 60 s), so that a
/// test's stop signal always finds the job running with a checkpoint
/// behind it, however fast the job would otherwise end
/// (tests/faults/signal_exit.sh).
inline constexpr const char* kPauseAfterFirstCheckpoint = "after-first-checkpoint";

/// Pauses this rank if the variable names `point` (see above); returns
/// after 60 s without a kill, so a test that forgot to signal still ends.
void fault_pause_in_finish(const char* point, int rank);

/// Like fault_pause_in_finish, but returns as soon as this rank has a stop
/// request (stop_requested()), so the stop is handled where the job paused.
void fault_pause_until_stop(const char* point, int rank);

}  // namespace bloomshard::app
