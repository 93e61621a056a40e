#!/usr/bin/env python3
"""Questions over documents, judged by evidence recall@5 (issue 42's quality bar: >= 0.8).

    scripts/datasets_passages.py STRATA_BIN QUESTIONS.json [--keyword]

Loads the question set's files, as they were at its commit (`git show`), as document datasets
into a fresh store, embeds their passages (unless --keyword), and searches each question with
`strata datasets search`: a question is found when one of the first five passages holds its
evidence (white space and Markdown's backticks and emphasis ignored), in the file it names.
"""
import json, os, re, subprocess, sys, tempfile, time

def plain(s):
    return re.sub(r"\s+", " ", re.sub(r"[`*_]", "", s)).strip().lower()

def main():
    strata, questions = sys.argv[1:3]
    keyword = "--keyword" in sys.argv[3:]
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
    spec = json.load(open(questions))
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, STRATA_DB=os.path.join(d, "s.db"))
        paths = []
        for f in spec["files"]:
            text = subprocess.run(["git", "-C", root, "show", f"{spec['commit']}:{f}"], capture_output=True, check=True).stdout
            path = os.path.join(d, os.path.basename(f))
            open(path, "wb").write(text)
            paths.append(path)
        started = time.time()
        subprocess.run([strata, "datasets", "load", *(["--no-embed"] if keyword else []), *paths], env=env, check=True, capture_output=True)
        loaded_s = time.time() - started
        found, ranks, seconds = 0, [], []
        for item in spec["questions"]:
            t = time.time()
            p = subprocess.run([strata, "--json", "datasets", "search", item["q"], "--limit", "5"], env=env, capture_output=True, text=True)
            seconds.append(time.time() - t)
            hits = json.loads(p.stdout) if p.returncode == 0 else []
            want, source = plain(item["evidence"]), os.path.basename(item["file"])
            rank = next((i + 1 for i, h in enumerate(hits) if h["source"] == source and want in plain(h["text"])), None)
            found += rank is not None
            ranks.append(rank)
            print(json.dumps({"q": item["q"], "rank": rank, "first": hits[0]["source"] + ", " + json.dumps(hits[0]["place"]) if hits else None}))
        n = len(spec["questions"])
        mrr = sum(1 / r for r in ranks if r) / n
        print(json.dumps({"found_at_5": found, "of": n, "recall_at_5": round(found / n, 3), "mrr": round(mrr, 3),
                          "search": "keyword" if keyword else "keyword and meaning", "load_s": round(loaded_s, 1),
                          "median_search_s": round(sorted(seconds)[n // 2], 2)}))

if __name__ == "__main__":
    main()
