"""Keys the other Python tests never passed (docs/coverage.md, src/python):
a str that cannot be encoded as UTF-8, an argument that is not iterable,
and key bytes that are not valid UTF-8 on a state whose key scheme builds
keys (a digest of nfc-normalized text): each answered as the job would
treat the record, or refused with the type and words a user sees. States
from real jobs (synth + dedup under mpiexec on one rank)."""
import pytest

import bloomshard
from conftest import dedup, json_ids, synth


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    root = tmp_path_factory.mktemp("plain")
    synth(root / "in", 500, 5, dup_rate=0.2, files=1)
    dedup(root / "in", root / "out", root / "state", 1)
    return root


@pytest.fixture(scope="module")
def digest_nfc(tmp_path_factory):
    root = tmp_path_factory.mktemp("digest_nfc")
    synth(root / "in", 500, 6, dup_rate=0.2, files=1)
    dedup(root / "in", root / "out", root / "state", 1, "--key-digest", "xxh3-128",
          "--normalize", "nfc")
    return root


def test_a_str_with_a_lone_surrogate_raises_unicode_encode_error(plain):
    """Python cannot encode it as UTF-8: its own error, not an answer."""
    s = bloomshard.open_state(plain / "state")
    with pytest.raises(UnicodeEncodeError):
        s.contains(["fine", "bad\ud800key"])
    with pytest.raises(UnicodeEncodeError):
        s.contains_one("bad\ud800key")


def test_keys_that_are_not_iterable_are_a_type_error(plain):
    s = bloomshard.open_state(plain / "state")
    with pytest.raises(TypeError, match="keys must be iterable"):
        s.contains(42)


def test_invalid_utf8_on_a_digest_state_is_absent_and_valid_keys_still_answer(digest_nfc):
    """The job rejects such a record (invalid UTF-8 for normalization), so
    the state never holds it: False, in a batch of keys that are there."""
    s = bloomshard.open_state(digest_nfc / "state")
    kept = json_ids(digest_nfc / "out")[:3]
    assert s.contains(kept) == [True, True, True]
    got = s.contains([kept[0], b"\xff\xfe", kept[1]])
    assert got == [True, False, True], got
    assert s.contains_one(b"\xc3") is False
