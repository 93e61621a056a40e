#!/usr/bin/env python3
"""Writes the inputs of the datasets benchmark (docs/benchmarks.md, "Datasets"), made up here:

    scripts/datasets_bench_data.py OUT_DIR [--rows 1000000] [--pages 500] [--conversations 2000]

- `expenses-1m.csv`: ROWS rows of eight columns (about 100 bytes a row: 100 MB at a million);
- `handbook-500.pdf`: PAGES pages of text, a heading each (needs fpdf2: `pip install fpdf2`);
- `chatgpt-2000.json`: CONVERSATIONS conversations in ChatGPT's export shape, 5 exchanges each,
  one edited question in every tenth.

Deterministic (a fixed seed), so two runs measure the same files.
"""

import argparse
import csv
import json
import os
import random

CATEGORIES = ["groceries", "rent", "transport", "eating out", "books", "health", "travel", "gifts"]
CITIES = ["Lisbon", "Porto", "Faro", "Coimbra", "Braga", "Madrid", "Berlin", "Kraków", "Lyon", "Turin"]
METHODS = ["card", "cash", "transfer", "phone"]
WORDS = ("river market garden window letter morning harbour station bakery library ticket "
         "bicycle concert museum mountain festival kitchen balcony umbrella lantern").split()


def expenses(path, rows, rng):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["date", "category", "description", "amount", "currency", "city", "method", "note"])
        for i in range(rows):
            day = f"20{20 + i % 6:02d}-{1 + i % 12:02d}-{1 + i % 28:02d}"
            cat = CATEGORIES[rng.randrange(len(CATEGORIES))]
            city = CITIES[rng.randrange(len(CITIES))]
            words = " ".join(rng.choice(WORDS) for _ in range(3))
            w.writerow([day, cat, f"{cat} {words}", f"{rng.uniform(1, 400):.2f}", "EUR", city,
                        METHODS[rng.randrange(len(METHODS))], f"ref {i:07d}"])


def handbook(path, pages, rng):
    from fpdf import FPDF
    pdf = FPDF()
    pdf.set_compression(True)
    for p in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=14)
        pdf.cell(0, 10, f"Section {p + 1}: the {WORDS[p % len(WORDS)]} rules", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=10)
        for _ in range(22):
            sentence = " ".join(rng.choice(WORDS) for _ in range(14)).capitalize() + "."
            pdf.multi_cell(0, 5, sentence, new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(0, 5, f"The code for section {p + 1} is S{p + 1:04d}-{rng.randrange(10**6):06d}.",
                       new_x="LMARGIN", new_y="NEXT")
    pdf.output(path)


def conversations(path, count, rng):
    out = []
    t = 1700000000.0
    for c in range(count):
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for k in range(5):
            for role in ("user", "assistant"):
                nid = f"c{c}-{k}-{role}"
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(8, 40)))
                mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
                    "id": nid, "author": {"role": role}, "create_time": t,
                    "content": {"content_type": "text", "parts": [text]}, "metadata": {}}}
                mapping[parent]["children"].append(nid)
                parent = nid
                t += 30
            if c % 10 == 0 and k == 2:
                # An edited question: a sibling branch that was not shown.
                nid = f"c{c}-{k}-old"
                mapping[nid] = {"id": nid, "parent": mapping[parent]["parent"], "children": [], "message": {
                    "id": nid, "author": {"role": "user"}, "create_time": t,
                    "content": {"content_type": "text", "parts": ["an earlier wording"]}, "metadata": {}}}
        out.append({"title": f"Conversation {c + 1}", "create_time": t - 300, "update_time": t,
                    "conversation_id": f"conv-{c:05d}", "mapping": mapping, "current_node": parent})
        t += 3600
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--conversations", type=int, default=2000)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(42)
    expenses(os.path.join(a.out, "expenses-1m.csv"), a.rows, rng)
    conversations(os.path.join(a.out, "chatgpt-2000.json"), a.conversations, rng)
    handbook(os.path.join(a.out, "handbook-500.pdf"), a.pages, rng)


if __name__ == "__main__":
    main()
