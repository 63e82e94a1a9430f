#!/usr/bin/python3
"""Checks the forms of a merged confirming minhash state against its
sources (docs/commands.md, merge): the merged state's band keys are the
union of the sources', and each key's form (/tier2/forms) is that of the
first source, in --from order, that holds the key.

usage: minhash_merge_forms.py MERGED SOURCE...   (state dirs, one run file each)
Prints how many keys the sources share with different forms (where the
rule decides); exits 1 naming the first key that breaks it.
"""
import glob
import sys

import h5py  # Debian's python3-h5py: run with /usr/bin/python3


def fail(msg):
    print("minhash_merge_forms: " + msg, file=sys.stderr)
    sys.exit(1)


def forms_of(state):
    """{band key bytes: form bytes} of the state's one run file."""
    runs = sorted(glob.glob(state + "/run-*.h5"))
    if len(runs) != 1:
        fail("%s: %d run files, want 1" % (state, len(runs)))
    out = {}
    with h5py.File(runs[0], "r") as f:
        t = f["/tier2"]
        slice_keys = t["slice_keys"][:]
        offsets = t["offsets"][:]
        data = t["bytes"][:].tobytes()
        forms = t["forms"][:].tobytes()
        n = int(slice_keys.sum())
        if n == 0 or len(forms) % n:
            fail("%s: %d form bytes for %d keys" % (runs[0], len(forms), n))
        size = len(forms) // n
        key, off_at, byte_at = 0, 0, 0
        for count in slice_keys:
            count = int(count)
            offs = offsets[off_at:off_at + count + 1]
            for i in range(count):
                k = data[byte_at + int(offs[i]):byte_at + int(offs[i + 1])]
                out[k] = forms[key * size:(key + 1) * size]
                key += 1
            byte_at += int(offs[count])
            off_at += count + 1
    return out


def main():
    if len(sys.argv) < 3:
        fail("usage: minhash_merge_forms.py MERGED SOURCE...")
    merged = forms_of(sys.argv[1])
    sources = [forms_of(s) for s in sys.argv[2:]]
    union = set().union(*sources)
    if set(merged) != union:
        fail("the merged state holds %d keys, the union of the sources %d"
             % (len(merged), len(union)))
    shared = 0
    for k, form in merged.items():
        owners = [s for s in sources if k in s]
        if len({s[k] for s in owners}) > 1:
            shared += 1
        if form != owners[0][k]:
            fail("band key %s: the merged form is not that of the first source holding it"
                 % k.hex())
    if shared == 0:
        fail("no key is shared with different forms: the rule is not exercised")
    print("minhash_merge_forms: %d keys, %d shared with different forms, each with the first "
          "source's" % (len(merged), shared))


if __name__ == "__main__":
    main()
