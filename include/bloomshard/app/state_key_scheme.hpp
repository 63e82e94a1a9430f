// The key scheme of a state: the ONE place that writes a job's
// core::KeyScheme into a checkpoint header and reads it back, so every
// command that opens a state (dedup; query and merge) makes keys exactly as
// the state was built and refuses one that differs, naming both sides
// (core::key_scheme_difference). Attributes: docs/checkpoint-format.md.
#pragma once

#include <string>

#include "bloomshard/core/key_scheme.hpp"
#include "bloomshard/io/checkpoint_store.hpp"

namespace bloomshard::app {

/// The `normalization` attribute: "nfc/v1 unicode 15.0.0", followed by
/// " key-scheme/v1" when the scheme needs the key_scheme attribute, so that
/// builds before it (which compare this text whole) refuse such a state
/// instead of reading digest or tuple keys as plain ones.
[[nodiscard]] std::string normalization_identity(const core::KeyScheme& key);

/// Fills h.normalization, h.key_field, h.key_encoding and h.key_scheme.
void put_key_scheme(const core::KeyScheme& key, io::CheckpointHeader& h);

/// The scheme a header records (a state without key_scheme: the legacy
/// scheme of its key_field and normalization). Throws std::invalid_argument
/// naming what cannot be read.
[[nodiscard]] core::KeyScheme key_scheme_of(const io::CheckpointHeader& h);

/// One line for `info`: "normalize=nfc/v1; fields=id; missing=reject;
/// text=none/v1; digest=none/v1", or why the header's scheme is unreadable.
[[nodiscard]] std::string describe_key_scheme(const io::CheckpointHeader& h);

}  // namespace bloomshard::app
