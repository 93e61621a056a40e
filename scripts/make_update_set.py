#!/usr/bin/env python3
"""Writes crates/strata-bench/data/extraction-updates/updates.json: an evaluation set for fact
*updates* in memory extraction. Each case is a short history of 1-3 dated conversations in which
one fact about one subject changes (a move, a new job, a renamed pet, a changed preference, a
correction, a relationship, a rescheduled appointment, a finished project...), with distractor
facts that do not change and small talk around them, so that a system cannot simply keep the
last sentence. `expect` says what the subject's current fact must contain (`current`), what no
current fact about the subject may still contain (`gone`), and what an earlier value of the
fact must contain (`history`).

Everything is invented by hand for this set: no text from other projects or datasets, and no
person's name that occurs in crates/strata-bench/data/answers/ or the LoCoMo development split
(checked below). Before writing, `validate` checks every rule that can be checked mechanically
and the script exits non-zero if one fails. Deterministic: no randomness, no network.

Usage: python3 scripts/make_update_set.py [OUTPUT_PATH]"""

import json
import re
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "crates/strata-bench/data/extraction-updates/updates.json"
# Sources whose personal names this set must not reuse (LoCoMo is checked when present).
FORBIDDEN_SOURCES = [ROOT / "crates/strata-bench/data/answers",
                     Path("/work/shared/bench/locomo/locomo-dev.json")]

KINDS = {"move": 7, "job": 7, "pet_name": 7, "preference": 7, "correction": 7,
         "relationship": 4, "schedule": 4, "status": 4}  # kind -> minimum number of cases
MIN_CASES = 60

# Every person and pet named anywhere in the set.
PEOPLE = ["Thandiwe", "Radek", "Kazimir", "Ifeoma", "Halvard", "Anouk", "Aurelio", "Sunniva",
          "Oluwaseun", "Teodora", "Nnamdi", "Gulnara", "Rustam", "Wiremu", "Dagny", "Vilja",
          "Saoirse", "Eero", "Jaroslav", "Yevgenia", "Folasade", "Zainab", "Benedikt", "Ludovica",
          "Marisol", "Tuva", "Tariq", "Ximena", "Kaveh", "Odalys", "Piet", "Jovana", "Liesel",
          "Nikolaj", "Cosmin", "Roxana", "Ramona", "Shirin", "Fenna", "Lorcan", "Makoa", "Nalani",
          "Ilse", "Tiago", "Bettina", "Gwilym", "Imre", "Rafferty", "Delphine", "Juhani", "Oksana",
          "Uzma", "Emeka", "Eskil", "Kenji", "Ilkka", "Parisa", "Wojtek", "Siddharth", "Vasco",
          "Mirela", "Yolanda"]
PETS = ["Bolt", "Pudding", "Pebble", "Nutmeg", "Mango", "Marigold", "Gus", "Frost", "Blizzard",
        "Crumble", "Sprout", "Kasha", "Pirozhok", "Rocket", "Pillow", "Admiral", "Nelson"]
# Other capitalised words used inside sentences: places, organisations, days, languages...
OTHER_PROPER = {
    "Durban", "Cape", "Town", "Ghent", "Antwerp", "Leuven", "Krakow", "Poland", "Oslo", "Bristol",
    "Cardiff", "Swansea", "Mum", "Dad", "Lagos", "Accra", "Bergen", "Trondheim", "Winnipeg",
    "Vancouver", "Valencia", "Seville", "Edinburgh", "St", "Andrews", "Greenleaf", "Pharmacy",
    "Ashcombe", "Hospital", "Halden", "Logistics", "Copperline", "Energy", "Dvorak", "Brookvale",
    "Sons", "Georgian", "Peak", "District", "Kinder", "Scout", "Brendan", "Rotorua", "Lantern",
    "Coffee", "Portuguese", "English", "Indian", "Ethiopian", "Werder", "Bremen", "Pauli", "Thai",
    "Madrid", "Sichuan", "June", "Belgrade", "Graz", "Linz", "Danube", "Skoda", "Normandy",
    "Lisbon", "Spanish", "Monday", "Mondays", "Tuesday", "Tuesdays", "Wednesday", "Wednesdays",
    "Thursday", "Thursdays", "Friday", "Fridays", "Saturday", "Saturdays", "Sunday", "Sundays",
    "August", "September", "October", "December", "January", "March", "April", "May", "Faro",
    "London", "Dr", "Meridian", "Volvo", "Christmas", "Khachapuri", "Sarmale", "Tamada",
    "Wellcroft", "College", "PhD",
}
NEGATION_CUES = ["not ", "n't", "no longer", "no more", "any more", "anymore", "instead of",
                 "rather than", "used to"]


from update_set_cases import CASES  # noqa: E402  (the data, 700 lines of it)


def forbidden_text():
    texts = []
    for src in FORBIDDEN_SOURCES:
        if src.is_dir():
            texts += [p.read_text(encoding="utf-8") for p in sorted(src.rglob("*")) if p.is_file()]
        elif src.is_file():
            texts.append(src.read_text(encoding="utf-8"))
        else:
            print(f"note: {src} not found, names not checked against it", file=sys.stderr)
    return "\n".join(texts)


def has(text, needle):
    return needle.lower() in text.lower()


def negated(text, needle):
    """Whether the sentence of `text` that mentions `needle` negates or contrasts it."""
    for sentence in re.split(r"(?<=[.!?;:])\s+", text):
        if has(sentence, needle) and any(c in sentence.lower() for c in NEGATION_CUES):
            return True
    return False


def validate(cases):
    """Returns a list of problems (empty when every mechanical rule holds) and the number of
    cases whose update mentions an old value again, negated."""
    errors = []
    ids = [c["id"] for c in cases]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"duplicate id {dup}")
    if len(cases) < MIN_CASES:
        errors.append(f"only {len(cases)} cases, want at least {MIN_CASES}")
    for kind, least in KINDS.items():
        n = sum(c["kind"] == kind for c in cases)
        if n < least:
            errors.append(f"{n} cases of kind {kind}, want at least {least}")
    users = sum(c["subject"] == "user" for c in cases)
    if not 0.28 <= users / len(cases) <= 0.40:
        errors.append(f"{users} of {len(cases)} cases are about the user, want about a third")

    names = set(PEOPLE) | set(PETS)
    known = names | OTHER_PROPER
    bad = forbidden_text()
    for name in sorted(names):
        if re.search(rf"\b{re.escape(name)}\b", bad):
            errors.append(f"name {name} occurs in a forbidden source")

    negated_cases = 0
    for c in cases:
        cid, convs, exp = c["id"], c["conversations"], c["expect"]
        if c["kind"] not in KINDS or not cid.startswith(c["kind"] + "-"):
            errors.append(f"{cid}: bad kind {c['kind']}")
        if c["subject"] != "user" and c["subject"] not in PEOPLE:
            errors.append(f"{cid}: subject {c['subject']} is not a declared person")
        lo = 1 if c["kind"] == "correction" else 2
        if not lo <= len(convs) <= 3:
            errors.append(f"{cid}: {len(convs)} conversations")
        days = []
        for conv in convs:
            try:
                days.append(date.fromisoformat(conv["date"]))
            except ValueError:
                errors.append(f"{cid}: bad date {conv['date']}")
            if not 2 <= len(conv["turns"]) <= 6:
                errors.append(f"{cid}: a conversation has {len(conv['turns'])} turns")
            for t in conv["turns"]:
                if t["speaker"] not in ("user", "assistant"):
                    errors.append(f"{cid}: bad speaker {t['speaker']}")
                for m in re.finditer(r"(?<![.!?:;] )\b[A-Z][A-Za-z]*[a-z][A-Za-z]*", t["text"]):
                    if m.start() > 0 and m.group() not in known:
                        errors.append(f"{cid}: undeclared capitalised word {m.group()!r}")
        if any(a >= b for a, b in zip(days, days[1:])):
            errors.append(f"{cid}: dates not increasing")
        if c["subject"] != "user" and not any(
                has(t["text"], c["subject"]) for conv in convs for t in conv["turns"]
                if t["speaker"] == "user"):
            errors.append(f"{cid}: subject never named by the user")

        cur, gone, hist = exp["current"], exp["gone"], exp["history"]
        if not 1 <= len(cur) <= 2 or not gone or not hist:
            errors.append(f"{cid}: expect needs 1-2 current and some gone/history strings")
            continue
        for g in gone + hist:
            for v in cur:
                if has(v, g) or has(g, v):
                    errors.append(f"{cid}: {g!r} and current {v!r} overlap")
        # Turns in order; the update is the first turn that mentions a current value.
        turns = [(ci, t) for ci, conv in enumerate(convs) for t in conv["turns"]]
        firsts = {}
        for v in cur:
            at = next((i for i, (_, t) in enumerate(turns) if has(t["text"], v)), None)
            if at is None:
                errors.append(f"{cid}: current {v!r} never said")
                continue
            if turns[at][1]["speaker"] != "user":
                errors.append(f"{cid}: the assistant says current {v!r} first")
            firsts[v] = at
        if len(firsts) != len(cur):
            continue
        update = min(firsts.values())
        update_conv = turns[update][0]
        if any(turns[i][0] != update_conv for i in firsts.values()):
            errors.append(f"{cid}: current values first said in different conversations")
        for v in cur:
            if not any(has(t["text"], v) for ci, t in turns
                       if ci == update_conv and t["speaker"] == "user"):
                errors.append(f"{cid}: current {v!r} not in a user turn of its update conversation")
        for g in gone + hist:
            if not any(has(t["text"], g) for _, t in turns[:update] if t["speaker"] == "user"):
                errors.append(f"{cid}: old value {g!r} not in a user turn before the update")
        mentioned = False
        for _, t in turns[update:]:
            for g in gone:
                if has(t["text"], g):
                    if not negated(t["text"], g):
                        errors.append(f"{cid}: old value {g!r} repeated after the update: {t['text']!r}")
                    elif t["speaker"] == "user":
                        mentioned = True
        negated_cases += mentioned
    if negated_cases * 4 >= len(cases):
        errors.append(f"{negated_cases} cases repeat an old value (negated) after the update, "
                      "want under a quarter")
    return errors, negated_cases


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    errors, negated_cases = validate(CASES)
    if errors:
        for e in errors:
            print("error:", e, file=sys.stderr)
        sys.exit(1)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(CASES, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    counts = {k: sum(c["kind"] == k for c in CASES) for k in KINDS}
    users = sum(c["subject"] == "user" for c in CASES)
    print(f"wrote {len(CASES)} cases to {out}: {counts}; {users} about the user; "
          f"{negated_cases} repeat an old value, negated, after the update")


if __name__ == "__main__":
    main()
