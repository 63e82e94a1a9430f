"""StateFilter (datatrove's filter convention) and the JSONL
decontamination example, against a real job's state."""
import json
import os
import subprocess
import sys

import bloomshard
from conftest import SOURCE_DIR, jsonl_files

EXAMPLE = os.path.join(SOURCE_DIR, "python", "examples", "decontaminate_jsonl.py")


class Document:  # the shape of datatrove's Document
    def __init__(self, text, id, metadata=None):
        self.text, self.id, self.metadata = text, id, metadata or {}


def test_key_of_json_value():
    k = bloomshard.key_of_json_value
    assert k("caf\u00e9") == "caf\u00e9".encode()
    assert k(123) == k("123") == b"123"
    assert k(-0) == b"0"
    assert k(True) is None and k(1.5) is None and k(None) is None and k([1]) is None
    assert k(1 << 64) is None and k((1 << 64) - 1) == b"18446744073709551615"


def test_key_of_json_value_takes_the_jobs_64_bit_range_at_both_ends():
    """The job keys -9223372036854775808 ... 18446744073709551615 and rejects
    what lies beyond (docs/keys.md): the filter's key must agree at both
    ends, and for negative numbers between (mutants of the bound survived
    test_key_of_json_value, which tries no negative key)."""
    k = bloomshard.key_of_json_value
    assert k(-1) == b"-1"
    assert k(-(1 << 62) - 1) == b"-4611686018427387905"
    assert k(-(1 << 63)) == b"-9223372036854775808"
    assert k(-(1 << 63) - 1) is None
    assert k(1 << 64) is None and k((1 << 64) - 1) == b"18446744073709551615"


def test_state_filter_conventions(job):
    s = bloomshard.open_state(job["state"])
    seen, new = job["kept"][0], job["fresh"][0]
    f = bloomshard.StateFilter(s)
    assert f.filter({"id": seen}) is False and f.filter({"id": new}) is True
    assert f.filter({"text": "no id"}) is True
    assert f.stats == {"kept": 1, "dropped": 1, "missing_key": 1}
    docs = [Document("a", seen), Document("b", new), Document("c", None)]
    assert bloomshard.StateFilter(s).filter_batch(docs) == [False, True, True]
    meta = bloomshard.StateFilter(s, key="metadata.url", keep="present", keep_missing=False)
    assert meta.filter_batch([Document("x", 0, {"url": seen}), Document("y", 0, {"url": new}),
                              Document("z", 0)]) == [True, False, False]
    nested = bloomshard.StateFilter(s, key="meta.id")
    assert nested.filter({"meta": {"id": seen}}) is False
    by_callable = bloomshard.StateFilter(s, key=lambda d: d["k"].encode())
    assert by_callable([{"k": seen}][0]) is False
    batch = [{"id": k} for k in job["kept"][:3000] + job["fresh"][:3000]]
    assert bloomshard.StateFilter(s).filter_batch(batch) == \
        [bloomshard.StateFilter(s).filter(d) for d in batch] == [False] * 3000 + [True] * 3000


def test_filter_batch_counts_its_documents_as_filter_does(job):
    """stats after filter_batch are those after filter() on each document:
    one per missing key, kept and dropped alike."""
    s = bloomshard.open_state(job["state"])
    seen, new = job["kept"][0], job["fresh"][0]
    docs = [{"id": seen}, {"text": "no id"}, {"id": new}, {"id": 1.5}, {"id": new}]
    one_by_one = bloomshard.StateFilter(s)
    assert [one_by_one.filter(d) for d in docs] == [False, True, True, True, True]
    batched = bloomshard.StateFilter(s)
    assert batched.filter_batch(docs) == [False, True, True, True, True]
    assert batched.stats == one_by_one.stats == {"kept": 2, "dropped": 1, "missing_key": 2}


def test_decontaminate_jsonl_example(job, tmp_path):
    contaminated = open(next(jsonl_files(job["root"] / "out")), "rb").read().splitlines(True)[:5000]
    clean = [(json.dumps({"id": k, "text": "t"}) + "\n").encode() for k in job["fresh"][:5000]]
    odd = [b"not json\n", b'{"id": 1.5}\n', b'{"id": "%s", "id": "x"}\r\n' % job["fresh"][9000].encode(),
           b'{"id": "%s"}\r\n' % job["kept"][7].encode()]
    lines = []
    for i in range(5000):
        lines += [contaminated[i], clean[i]]
    lines += odd
    inp = tmp_path / "train.jsonl"
    inp.write_bytes(b"".join(lines))
    out, rej = tmp_path / "clean.jsonl", tmp_path / "rejects.jsonl"
    r = subprocess.run([sys.executable, EXAMPLE, "--state", str(job["state"]), "--input", str(inp),
                        "--output", str(out), "--rejects", str(rej)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    # Kept: the fresh lines, the unusable ones and the first-wins duplicate
    # member (a fresh key), byte for byte, in order; dropped: every
    # contaminated line, the CRLF one too.
    assert out.read_bytes() == b"".join(clean + odd[:3])
    reasons = [json.loads(l) for l in rej.read_text().splitlines()]
    assert [x["line"] for x in reasons] == [10001, 10002]
    assert "malformed JSON" in reasons[0]["reason"] and "not a string or integer" in reasons[1]["reason"]
    assert "5003 kept, 5001 dropped" in r.stderr
