#!/usr/bin/env python3
"""Peer for the dedup benchmark: turns a key file (one key per line) into
the Redis protocol (RESP) for `redis-cli --pipe`, one `SADD SET KEY` command
per key, so that every key gets its own "new or seen" answer as a dedup job
would need. The generation is preparation (untimed); the benchmark times
`redis-cli --pipe < FILE` against a running redis-server.
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("keys", help="key file, one key per line (UTF-8)")
    ap.add_argument("out", help="RESP output file")
    ap.add_argument("--set", default="bloomshard:peer", help="name of the Redis set")
    args = ap.parse_args()

    set_name = args.set.encode()
    head = b"*3\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n" % (len(set_name), set_name)
    commands = 0
    with open(args.keys, "rb") as src, open(args.out, "wb", buffering=1 << 20) as out:
        write = out.write
        for line in src:
            key = line[:-1] if line.endswith(b"\n") else line
            write(head)
            write(b"$%d\r\n%s\r\n" % (len(key), key))
            commands += 1
    print(json.dumps({"commands": commands}))


if __name__ == "__main__":
    main()
