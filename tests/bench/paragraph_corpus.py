#!/usr/bin/env python3
"""The paragraph benchmarks' corpus (paragraph_benchmark.sh, bff_paragraph.sh):
8 JSONL files of web-like documents of 5-50 paragraphs, 30 % of the
paragraphs repeated from a shared pool of 200,000, fresh ones carrying a
serial; the same documents for the same size (seed 15), so figures taken
by the two scripts describe the same text.

usage: paragraph_corpus.py DIR GIB
"""
import json, os, random, sys
root, gb = sys.argv[1], float(sys.argv[2])
rng = random.Random(15)
words = ("the of and to in is was for on that with as by at from city river data model "
         "paris tokyo über café 東京 данные report market season council school").split()
def sent(n):
    return " ".join(rng.choice(words) for _ in range(n))
pool = [sent(rng.randint(8, 40)) for _ in range(200000)]
target = int(gb * (1 << 30))
files = [open(os.path.join(root, f"part-{i:02d}.jsonl"), "w", encoding="utf-8") for i in range(8)]
written, serial = 0, 0
while written < target:
    serial += 1
    paras = []
    for j in range(rng.randint(5, 50)):
        if rng.random() < 0.3:
            paras.append(rng.choice(pool))
        else:
            paras.append(f"{serial}.{j} " + sent(rng.randint(8, 40)))
    line = json.dumps({"id": f"doc-{serial}", "url": f"https://example.org/{serial}",
                       "text": "\n".join(paras)}, ensure_ascii=False) + "\n"
    files[serial % 8].write(line)
    written += len(line.encode())
for f in files:
    f.close()
