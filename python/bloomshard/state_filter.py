"""A pipeline filter over a saved state, in datatrove's filter convention.

datatrove's BaseFilter subclasses implement ``filter(self, doc) -> bool``
(True keeps the document) and may implement ``filter_batch(self, batch) ->
list[bool]``; this class follows that convention without importing
datatrove, so it drops into a datatrove pipeline (wrap it in a BaseFilter
subclass that delegates, or call it from your own step) and into any plain
Python loop. Documents may be dicts (JSON records), objects with attributes
(datatrove's Document: ``id``, ``text``, ``metadata``) or anything a
``key=`` callable understands.
"""


def key_of_json_value(value):
    """The key bytes the dedup job takes from a JSON value, or None when the
    job would reject the record: a str gives its UTF-8 bytes, an int its
    shortest decimal text (the integer 123 and the string "123" are one key),
    anything else (float, bool, None, list, dict) is not a key
    (docs/keys.md)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, bool):  # bool is an int in Python, not in JSON
        return None
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 64):
            return str(value).encode("ascii")
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return None


def _lookup(doc, path):
    cur = doc
    for part in path:
        if isinstance(cur, dict):
            if part not in cur:
                return None
            cur = cur[part]
        elif part == "metadata" or hasattr(cur, part):
            cur = getattr(cur, part, None)
        else:
            return None
    return cur


class StateFilter:
    """Keeps the documents whose key is NOT in the state (decontamination,
    or "only what is new"), or with ``keep="present"`` only those that are.

    state: a bloomshard.State. key: the dotted field path of the key (as
    --key-field: "id", "meta.url"; on objects attributes, and
    "metadata.url" reaches datatrove's Document.metadata dict), or a
    callable doc -> str | bytes | None. keep_missing: what to do with a
    document that has no usable key (the job would reject it; it is not in
    the state): keep it (default) or drop it.
    """

    name = "bloomshard state filter"

    def __init__(self, state, key="id", keep="absent", keep_missing=True):
        if keep not in ("absent", "present"):
            raise ValueError("keep must be 'absent' or 'present', not %r" % (keep,))
        self.state = state
        self.keep_present = keep == "present"
        self.keep_missing = keep_missing
        if callable(key):
            self._key = key
        else:
            path = key.split(".")
            self._key = lambda doc: key_of_json_value(_lookup(doc, path))
        self.stats = {"kept": 0, "dropped": 0, "missing_key": 0}

    def _decide(self, present):
        kept = present == self.keep_present
        self.stats["kept" if kept else "dropped"] += 1
        return kept

    def filter(self, doc):
        """True keeps the document."""
        k = self._key(doc)
        if k is None:
            self.stats["missing_key"] += 1
            return self.keep_missing
        return self._decide(self.state.contains_one(k))

    def filter_batch(self, batch):
        """filter() for many documents with one batched lookup."""
        keys = [self._key(doc) for doc in batch]
        present = self.state.contains([k for k in keys if k is not None])
        out, j = [], 0
        for k in keys:
            if k is None:
                self.stats["missing_key"] += 1
                out.append(self.keep_missing)
            else:
                out.append(self._decide(present[j]))
                j += 1
        return out

    def __call__(self, doc):
        return self.filter(doc)
