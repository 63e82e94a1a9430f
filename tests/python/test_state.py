"""open_state, info, contains/maybe against a real job's outputs."""
import math
import os
import shutil
import subprocess
import sys
import threading

import h5py
import pytest

import bloomshard
from conftest import BIN, info_json


def test_info_equals_the_cli(job):
    s = bloomshard.open_state(job["state"])
    mine, cli = s.info(), info_json(job["state"])
    assert set(mine) == set(cli)
    for k, v in cli.items():
        # The CLI prints 6 significant digits.
        if isinstance(v, float):
            assert mine[k] == pytest.approx(v, rel=1e-5), k
        elif k == "layers":
            for a, b in zip(mine[k], v):
                assert a == pytest.approx(b, rel=1e-5)
                # Independent check of the fill estimate: 1 - e^(-k n / m).
                assert 0 < a["fill_estimate"] == pytest.approx(
                    1 - math.exp(-a["k"] * a["inserted"] / a["bits"]), rel=1e-9)
        else:
            assert mine[k] == v, k
    assert mine["exact_keys"] == len(job["kept"])
    assert mine["run_count"] > 1, "the job should have left several tier-2 runs"
    assert len(mine["layers"]) >= 3, "the job should have grown several Bloom layers"
    assert s.generation == mine["generation"]


def test_every_kept_key_is_present(job):
    s = bloomshard.open_state(job["state"])
    assert all(s.contains(job["kept"]))
    assert all(s.contains([k.encode() for k in job["kept"][:5000]]))
    assert all(s.maybe(job["kept"]))
    assert all(s.contains_one(k) for k in job["kept"][:2000])
    assert job["kept"][0] in s


def test_fresh_keys_are_absent(job):
    s = bloomshard.open_state(job["state"])
    fresh = job["fresh"] + ["fresh-%d-\u00e9" % i for i in range(1000)]
    assert len(fresh) >= 100000
    assert not any(s.contains(fresh))
    # Tier 1 alone: false positives at about the filter's FPR, never more
    # than a few times its estimate.
    fp = sum(s.maybe(fresh)) / len(fresh)
    assert fp <= 3 * s.info()["fpr_estimate"] + 0.002, fp


def test_generations_hold_what_was_accepted_by_then(job):
    newest = bloomshard.open_state(job["state"])
    gens = sorted(int(n[5:-3]) for n in os.listdir(job["state"]) if n.startswith("ckpt-"))
    assert len(gens) >= 2
    newest_has = newest.contains(job["kept"])
    for g in gens[:-1]:
        old = bloomshard.open_state(job["state"], generation=g)
        assert old.generation == g
        has = old.contains(job["kept"])
        # Every key an older cut holds is a kept key, and still held later.
        assert sum(has) == old.info()["exact_keys"] < len(job["kept"])
        assert all(n for h, n in zip(has, newest_has) if h)
    with pytest.raises(bloomshard.StateError, match="no generation 999"):
        bloomshard.open_state(job["state"], generation=999)
    # One generation file can be opened directly too.
    one = bloomshard.open_state(job["state"] / ("ckpt-%d.h5" % gens[-1]))
    assert one.generation == gens[-1]


def test_inputs_and_errors(job):
    s = bloomshard.open_state(job["state"])
    assert s.contains([]) == []
    k = job["kept"][0]
    assert s.contains(iter([k, "nope"])) == [True, False]
    assert s.contains((bytearray(k.encode()), b"nope")) == [True, False]
    with pytest.raises(TypeError, match="key 1 is int"):
        s.contains([k, 5])
    with pytest.raises(TypeError, match="not one key"):
        s.contains(k)
    with pytest.raises(bloomshard.StateError, match="no such state"):
        bloomshard.open_state(job["root"] / "missing")
    with pytest.raises(bloomshard.StateError, match="no checkpoint"):
        bloomshard.open_state(job["root"] / "in")
    run = next(n for n in os.listdir(job["state"]) if n.startswith("run-"))
    with pytest.raises(bloomshard.StateError, match="run file"):
        bloomshard.open_state(job["state"] / run)


def test_verify_and_damage(job, tmp_path):
    assert bloomshard.open_state(job["state"], verify=True).info()["exact_keys"] > 0
    bad = tmp_path / "state"
    shutil.copytree(job["state"], bad)
    s = bloomshard.open_state(bad)
    runs = [bad / os.path.basename(r["file"]) for r in s.info()["runs"]]
    big = max(runs, key=os.path.getsize)
    with h5py.File(big, "r") as f:
        byte_at = f["/tier2/bytes"].id.get_offset() + 100
        offs_at = f["/tier2/offsets"].id.get_offset() + 8 * 5  # slice 0's 6th offset
    with open(big, "r+b") as f:
        f.seek(byte_at)
        c = f.read(1)
        f.seek(byte_at)
        f.write(bytes([c[0] ^ 0x20]))
    with pytest.raises(bloomshard.StateError, match=r"tier-2 slice \d+: XXH3 checksum mismatch"):
        bloomshard.open_state(bad, verify=True)
    # Without verify, open still checks the slices of the few stored keys it
    # re-hashes (slice 0 of every run among them), so it names this one at
    # once; other slices are checked on first use (test_damage.py).
    with pytest.raises(bloomshard.StateError, match=r"tier-2 slice 0: XXH3 checksum mismatch"):
        bloomshard.open_state(bad)
    with open(big, "r+b") as f:
        f.seek(offs_at)
        f.write((1 << 60).to_bytes(8, "little"))
    # Offsets beyond the slice are refused, never read outside the mapping.
    with pytest.raises(bloomshard.StateError, match=r"tier-2 slice 0: "):
        bloomshard.open_state(bad).contains(job["kept"])


def test_threads_share_one_state(job):
    s = bloomshard.open_state(job["state"])
    keys = job["kept"][:40000] + job["fresh"][:40000]
    want = [True] * 40000 + [False] * 40000
    results, errors = [None] * 4, []

    def worker(i):
        try:
            for _ in range(3):
                results[i] = s.contains(keys)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == want for r in results)


# Libraries of Open MPI and of parallel HDF5: the module must need none.
MPI_LIBRARIES = ("libmpi", "libopen-rte", "libopen-pal", "libpmix", "libhdf5_openmpi")


def test_no_mpi_library_is_loaded_or_needed(job):
    s = bloomshard.open_state(job["state"])
    s.contains(job["kept"][:10])
    with open("/proc/self/maps") as maps:
        loaded = [line.split()[-1] for line in maps if "/" in line]
    assert not [p for p in loaded if any(m in os.path.basename(p) for m in MPI_LIBRARIES)]
    # Needed, transitively (ldd follows every DT_NEEDED): none of them.
    ldd = subprocess.run(["ldd", bloomshard._bloomshard.__file__], capture_output=True,
                         text=True, timeout=60)
    assert ldd.returncode == 0, ldd.stderr
    assert "libhdf5" in ldd.stdout and not any(m in ldd.stdout for m in MPI_LIBRARIES), ldd.stdout
    # A fresh interpreter without any MPI launcher environment works too.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))}
    code = ("import bloomshard,sys; s=bloomshard.open_state(sys.argv[1]); "
            "assert s.contains([sys.argv[2]])==[True]; print('ok')")
    r = subprocess.run([sys.executable, "-c", code, str(job["state"]), job["kept"][0]],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_state_written_later_is_not_seen_by_an_open_one(job, tmp_path):
    # The mapping keeps an opened generation alive while a job prunes it.
    st = tmp_path / "state"
    shutil.copytree(job["state"], st)
    s = bloomshard.open_state(st)
    for n in os.listdir(st):
        if n.endswith(".h5"):
            os.unlink(st / n)
    assert all(s.contains(job["kept"][:1000]))
    assert os.path.exists(BIN)


def test_info_names_the_kept_copy_rule_and_the_saved_order_as_the_cli(tmp_path):
    """A --kept-copy first state: info's kept_copy and the sizes of the
    owners' saved memory (manifest input_order, the generation's rows)
    equal the CLI's, at the last generation and at mid-run ones (a copy of
    the state whose LATEST names the generation), where the tables are not
    empty."""
    from conftest import dedup, synth
    synth(tmp_path / "in", 20000, 5, dup_rate=0.3, files=4)
    # 2 ranks whatever RANKS: at 1 rank every kept copy is final at once.
    # The tasks layout (--split-inputs named): a lockstep cut of these plain
    # inputs remembers no kept copy (docs/inputs.md "The lockstep layout").
    dedup(tmp_path / "in", tmp_path / "out", tmp_path / "st", 2, "--kept-copy", "first",
          "--checkpoint-rounds", "1", "--batch-bytes", "65536", "--keep-generations", "100",
          "--progress", "0", "--split-inputs", "off")
    latest = int((tmp_path / "st" / "LATEST").read_text())
    names = ("kept_copy", "input_order_remembered", "input_order_retracted",
             "input_order_cut_outputs", "input_order_saved_as", "input_order_row_bytes",
             "input_order_version", "input_order_retracted_saved_as")
    remembered = 0
    for g in sorted({latest, latest // 4, latest // 2, 3 * latest // 4} - {0}):
        state = tmp_path / ("st-%d" % g)
        shutil.copytree(tmp_path / "st", state)
        (state / "LATEST").write_text("%d\n" % g)
        mine, cli = bloomshard.open_state(state).info(), info_json(state)
        assert set(mine) == set(cli), g
        assert [mine[n] for n in names] == [cli[n] for n in names], g
        assert mine["kept_copy"] == "first"
        assert mine["input_order_version"] == 3
        remembered += mine["input_order_remembered"]
    assert remembered > 0, "no mid-run generation remembered a kept copy"


@pytest.mark.parametrize("version", [1, 2])
def test_info_reads_older_input_order_states_as_the_cli(tmp_path, version):
    """The checked-in states of input_order versions 1 (kept copies and
    retractions listed in the manifest) and 2 (kept copies as rows, the
    retractions listed): info counts both as the CLI does and says where
    each is saved; version 3 (both rows) is the test above."""
    import tarfile
    from conftest import SOURCE_DIR
    name = "input_order_v%d_state" % version
    with tarfile.open(os.path.join(SOURCE_DIR, "tests", "data", name, name + ".tar.gz")) as t:
        t.extractall(tmp_path)
    state = tmp_path / "st"
    mine, cli = bloomshard.open_state(state).info(), info_json(state)
    assert set(mine) == set(cli)
    names = ("input_order_version", "input_order_remembered", "input_order_retracted",
             "input_order_saved_as", "input_order_retracted_saved_as", "input_order_row_bytes")
    assert [mine[n] for n in names] == [cli[n] for n in names]
    assert mine["input_order_version"] == version
    assert mine["input_order_saved_as"] == ("manifest" if version == 1 else "rows")
    assert mine["input_order_retracted_saved_as"] == "manifest"
    assert mine["input_order_remembered"] == (1737 if version == 1 else 1066)
    assert mine["input_order_retracted"] == (0 if version == 1 else 62)
    assert mine["input_order_row_bytes"] == (0 if version == 1 else 24 * 1066)
