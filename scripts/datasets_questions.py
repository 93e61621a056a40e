#!/usr/bin/env python3
"""Questions in words over a table, judged by their result (issue 42's quality bar: >= 0.7).

    scripts/datasets_questions.py STRATA_BIN QUESTIONS.json CSV [--provider P] [--model M]

Loads CSV as a dataset named after the file (`expenses`, `trips`) into a fresh store, asks each question with
`strata datasets ask` and compares the rows it returns with those of the question's reference
statement (`strata datasets sql`): right when the values match as a set (numbers to 2 places).
The questions were written for Strata (CC0): over tests/data/expenses.csv (the first set) and
over crates/strata-bench/data/datasets/trips.csv (the held-out one, written after the first
set's results and not run while anything was changed).
"""
import json, os, subprocess, sys, tempfile, time

def run(strata, env, *args):
    p = subprocess.run([strata, "--json", *args], env=env, capture_output=True, text=True)
    return (json.loads(p.stdout) if p.returncode == 0 else None), p.stderr.strip()

def values(answer):
    norm = lambda v: round(v, 2) if isinstance(v, float) else v
    return sorted({json.dumps([norm(c) for c in row]) for row in answer["rows"]})

def main():
    strata, questions, csv = sys.argv[1:4]
    extra = sys.argv[4:]
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, STRATA_DB=os.path.join(d, "s.db"))
        name = os.path.splitext(os.path.basename(csv))[0]
        subprocess.run([strata, "datasets", "load", "--no-embed", "--name", name, csv], env=env, check=True, capture_output=True)
        right, seconds = 0, []
        items = json.load(open(questions))
        for item in items:
            want, _ = run(strata, env, "datasets", "sql", name, item["sql"])
            started = time.time()
            got, err = run(strata, env, "datasets", "ask", name, item["q"], *extra)
            seconds.append(time.time() - started)
            ok = got is not None and values(got["answer"]) == values(want)
            right += ok
            print(json.dumps({"q": item["q"], "ok": ok, "sql": got and got["sql"], "error": None if got else err[:200]}))
        print(json.dumps({"right": right, "of": len(items), "share": round(right / len(items), 2),
                          "median_s": round(sorted(seconds)[len(seconds) // 2], 1)}))

if __name__ == "__main__":
    main()
