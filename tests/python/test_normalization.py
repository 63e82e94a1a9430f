"""The module normalizes exactly as the C++ job did, on a Unicode corpus:
every line of NormalizationTest.txt (c1..c5) and every C/F mapping of
CaseFolding.txt (Debian unicode-data, Unicode 15.0) deduplicated by a real
job under nfc-casefold and nfc. Oracles: the set of keys the job stored
(read from the run files with h5py) and Python's own unicodedata (Unicode
14.0 in Python 3.11, so strings with characters new in 15.0 are left out of
that comparison only)."""
import bz2
import json
import os
import unicodedata

import h5py
import pytest

import bloomshard
from conftest import dedup

UCD = "/usr/share/unicode"


def corpus():
    keys = []
    with bz2.open(os.path.join(UCD, "NormalizationTest.txt.bz2"), "rt", encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line or line.startswith("@"):
                continue
            for col in line.split(";")[:5]:
                keys.append("".join(chr(int(h, 16)) for h in col.split()))
    with open(os.path.join(UCD, "CaseFolding.txt"), encoding="utf-8") as f:
        for line in f:
            parts = [p.strip() for p in line.split("#")[0].split(";")]
            if len(parts) >= 3 and parts[1] in ("C", "F"):
                keys.append(chr(int(parts[0], 16)))
                keys.append("".join(chr(int(h, 16)) for h in parts[2].split()))
                keys.append("x" + chr(int(parts[0], 16)).upper() + "Y")  # mixed with ASCII
    return keys


def stored_keys(state):
    """Every key of every tier-2 run of the state's newest generation."""
    s = bloomshard.open_state(state)
    out = set()
    for r in s.info()["runs"]:
        with h5py.File(os.path.join(state, r["file"]), "r") as f:
            keys = f["/tier2/slice_keys"][:]
            offs = f["/tier2/offsets"][:]
            data = f["/tier2/bytes"][:].tobytes()
            k0 = b0 = 0
            for s_, n in enumerate(keys):
                n = int(n)
                o = offs[k0 + s_:k0 + s_ + n + 1]
                for i in range(n):
                    out.add(data[b0 + int(o[i]):b0 + int(o[i + 1])])
                k0 += n
                b0 += int(o[n])
    return out


def oracle(policy, text):
    if policy == "nfc":
        return unicodedata.normalize("NFC", text)
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def assigned_in_python(text):
    return all(unicodedata.category(c) != "Cn" for c in text)


@pytest.fixture(scope="module")
def unicode_job(tmp_path_factory):
    root = tmp_path_factory.mktemp("unicode")
    keys = corpus()
    assert len(keys) > 90000
    (root / "in").mkdir()
    with open(root / "in" / "keys.jsonl", "w", encoding="utf-8") as f:
        for k in keys:
            f.write(json.dumps({"id": k}, ensure_ascii=False) + "\n")
    for policy in ("nfc-casefold", "nfc"):
        dedup(root / "in", root / ("out-" + policy), root / ("state-" + policy), 2,
              "--normalize", policy)
    return root, keys


@pytest.mark.parametrize("policy", ["nfc-casefold", "nfc"])
def test_module_normalizes_like_the_job(unicode_job, policy):
    root, keys = unicode_job
    state = root / ("state-" + policy)
    s = bloomshard.open_state(state)
    assert s.normalization.startswith(policy + "/v")
    assert s.normalization.endswith("unicode " + bloomshard.unicode_version())
    normalized = {s.normalize(k) for k in keys}
    # The job stored exactly the keys the module computes, no more, no less.
    assert normalized == stored_keys(str(state))
    assert all(s.contains(keys))
    # An independent oracle, where Python's Unicode version covers the text.
    checked = 0
    for k in keys:
        if assigned_in_python(k) and assigned_in_python(oracle(policy, k)):
            assert s.normalize(k) == oracle(policy, k).encode("utf-8"), ascii(k)
            checked += 1
    assert checked > 0.95 * len(keys)


def test_invalid_utf8_is_never_present(unicode_job):
    root, keys = unicode_job
    s = bloomshard.open_state(root / "state-nfc-casefold")
    bad = [b"\xff", b"abc\xc0\xafdef", b"\xed\xa0\x80"]
    assert s.contains(bad) == [False, False, False]
    assert s.maybe(bad) == [False, False, False]
    with pytest.raises(ValueError, match="invalid UTF-8"):
        s.normalize(b"\xff")
    assert s.normalize("Stra\u00dfe") == b"strasse"
    assert s.normalize(b"MiXeD") == b"mixed"
