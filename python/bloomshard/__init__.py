"""Read-only access to saved bloomshard states (``--state`` directories).

    import bloomshard
    s = bloomshard.open_state("state/")        # newest generation, or generation=g
    s.info()                                    # dict, like `bloomshard info --json`
    s.contains(["a", b"b"])                     # [bool, bool]: exact (tier 1, then tier 2)
    s.contains_one("a"), s.maybe(keys)          # one key; tier 1 only (may say True wrongly)
    s.normalize("Straße")                       # b'strasse' under nfc-casefold

Keys are str (taken as UTF-8) or bytes and are normalized by the state's
policy before lookup, as the dedup job did. Answers are exact or raise
StateError: each slice is checked against its stored checksums the first
time a lookup needs it (verify=True checks them all at open). The files are memory-mapped, not
loaded; many threads may share one state (batch calls release the GIL).
MPI is never initialized. See docs/python.md.
"""

import json as _json

from ._bloomshard import StateError, _State, hash_key, probe_isa, unicode_version

__all__ = ["open_state", "State", "StateError", "StateFilter", "key_of_json_value",
           "hash_key", "probe_isa", "unicode_version"]


class State:
    """One generation of a saved state, opened read-only (see open_state)."""

    def __init__(self, impl):
        self._impl = impl

    def contains(self, keys):
        """Exact membership of each key (an iterable of str or bytes) as a
        list of bools: normalized by the state's policy, tier 1 probed, every
        Bloom positive confirmed in tier 2. A key the policy refuses (invalid
        UTF-8 under nfc or nfc-casefold) is False: the job rejects such
        records, so none is in a state. Raises StateError (naming file and
        slice) if a slice the keys need fails its check (made the first
        time a lookup touches the slice)."""
        return self._impl.contains(keys)

    def maybe(self, keys):
        """Tier 1 only (faster): False is final, True may be a false
        positive (at about the filter's FPR)."""
        return self._impl.maybe(keys)

    def contains_one(self, key):
        """contains() for one key."""
        return self._impl.contains_one(key)

    def maybe_one(self, key):
        """maybe() for one key."""
        return self._impl.maybe_one(key)

    def normalize(self, key):
        """The key bytes the filter stores for `key` under the state's policy.
        Raises ValueError for invalid UTF-8 under nfc or nfc-casefold."""
        return self._impl.normalize(key)

    @property
    def generation(self):
        return self._impl.generation

    @property
    def normalization(self):
        return self._impl.normalization

    @property
    def hash_seed(self):
        return self._impl.hash_seed

    def manifest(self):
        """The run manifest of the generation (inputs, cursors, counters) as a dict."""
        return _json.loads(self._impl.manifest_json)

    def info(self):
        """What `bloomshard info --json --state DIR` prints, as a dict."""
        d = self._impl.info_base()
        m = self.manifest()
        c = m.get("counters", {})
        for name in ("records", "kept", "duplicates", "rejected"):
            d[name] = c.get(name, 0)
        # --kept-copy first: the owners' saved memory (docs/checkpoint-format.md).
        order = m.get("input_order")
        d["kept_copy"] = "first" if order is not None else "arrival"
        if order is not None:
            # Flat lists: three numbers a copy, two an output.
            # Version 2 keeps the remembered copies as rows of the
            # generation (/input_order/rows) and counts them in kept_rows;
            # version 3 the retractions too (/input_order/retracted_rows,
            # counted in retracted_rows). 24 bytes a row.
            version = order.get("version")
            d["input_order_version"] = version
            if version == 1:
                d["input_order_remembered"] = len(order.get("kept", [])) // 3
                d["input_order_saved_as"] = "manifest"
            else:
                d["input_order_remembered"] = order.get("kept_rows", 0)
                d["input_order_saved_as"] = "rows"
            if version in (1, 2):
                d["input_order_retracted"] = len(order.get("retracted", [])) // 3
                d["input_order_retracted_saved_as"] = "manifest"
            else:
                d["input_order_retracted"] = order.get("retracted_rows", 0)
                d["input_order_retracted_saved_as"] = "rows"
            rows = d["input_order_remembered"] if version != 1 else 0
            rows += d["input_order_retracted"] if version not in (1, 2) else 0
            d["input_order_row_bytes"] = 24 * rows
            d["input_order_cut_outputs"] = len(order.get("cut_outputs", [])) // 2
        d["inputs"] = [{
            "path": i["relative_path"],
            "size": i["size"],
            "records_done": i["records"],
            "bytes_done": i["offset"],
            "done": i["done"],
            "output_length": i["output_length"],
        } for i in m.get("inputs", [])]
        return d

    def check_progress(self):
        """The slices checked so far, as a dict: bloom_slices (P) and
        bloom_checked (good in every layer), tier2_slices (P x runs) and
        tier2_checked, checks_run (checksums computed: once per slice)."""
        return self._impl.check_progress()

    def __contains__(self, key):
        return self.contains_one(key)

    def __repr__(self):
        return "<bloomshard.State generation %d, %s>" % (self.generation, self.normalization)


def open_state(path, verify=False, generation=None):
    """Opens a --state directory (or one ckpt-<g>.h5 file) read-only.

    generation: the generation to open (default LATEST's, else the newest).
    verify: check every slice of both tiers at open (reads the whole state
    once, lists every damaged slice); without it each slice is checked the
    same way the first time a lookup needs it, once. Raises StateError
    naming the file, the slice and what failed.
    """
    return State(_State.open(str(path), verify, generation))


from .state_filter import StateFilter, key_of_json_value  # noqa: E402
