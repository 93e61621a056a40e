#!/usr/bin/env python3
"""Writes the training set for an extraction adapter (`strata bench extract-adapter`):
invented conversations, each with the extraction reply to learn, and invented merge questions
(known facts, new facts) with the decisions to learn, in the shapes of
crates/strata-api/src/extract/reply.rs.

Two kinds of conversation: a user talking with an assistant about themselves and the people in
their life, and two friends talking by name (facts about each speaker). Around the facts: small
talk, thanks, questions about the world and an assistant talking about itself, none of which is
a fact; some conversations hold nothing to remember (an empty reply). Relative dates ("last
Saturday") are resolved against the conversation's date. Merge questions cover add (a new
topic), update (a topic's value changed: a move, a new job, a corrected day) and no-op (the same
value in other words).

Names and values share nothing with the evaluation sets: no name or value that occurs in
crates/strata-bench/data/extraction-updates/updates.json, crates/strata-bench/data/answers/ or
the LoCoMo development split (checked before writing; the script exits non-zero if one does).
Deterministic.

Usage: python3 scripts/make_extraction_training.py [OUTPUT_PATH] [CONVERSATIONS] [MERGES]"""

import json
import random
import re
import sys
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "crates/strata-bench/data/extraction-training/examples.json"
FORBIDDEN_SOURCES = [ROOT / "crates/strata-bench/data/extraction-updates/updates.json",
                     ROOT / "crates/strata-bench/data/answers",
                     Path("/work/shared/bench/locomo/locomo-dev.json")]

NAMES = ["Brigida", "Casimir", "Dorotea", "Elmar", "Fiorella", "Gaspard", "Hedda", "Ignatius",
         "Jolanda", "Konstantin", "Leocadia", "Maksim", "Nerys", "Octavian", "Perpetua", "Quirin",
         "Rosalind", "Severin", "Tamsin", "Ulrike", "Valentin", "Wilhelmina", "Xanthe", "Yorick",
         "Zenobia", "Anselm", "Berenike", "Cyprian", "Dervla", "Eamon", "Filippa", "Gideon",
         "Honora", "Isidor", "Jessamy", "Kasimira", "Leopold", "Mireille", "Nikodem", "Ottilie",
         "Pankraz", "Romilly", "Sigrun", "Thaddeus", "Ursula", "Vitus", "Winifred", "Zephyrine"]
PETS = ["Biscotti", "Pumpernickel", "Marzipan", "Turnip", "Clementine", "Waffles", "Noodle",
        "Pretzel", "Gnocchi", "Tofu", "Crumpet", "Paprika", "Fennel", "Dumpling", "Sorrel"]
ANIMALS = ["dog", "cat", "rabbit", "parrot", "tortoise", "hamster", "ferret", "guinea pig"]
CITIES = ["Ljubljana", "Tallinn", "Bratislava", "Tromso", "Salamanca", "Innsbruck", "Maastricht",
          "Trieste", "Plovdiv", "Coimbra", "Szeged", "Lucerne", "Aberystwyth", "Kilkenny",
          "Ravenna", "Brno", "Nantes", "Bruges", "Sintra", "Zadar", "Olomouc"]
JOBS = [("a midwife", "midwife"), ("a locksmith", "locksmith"), ("a tax adviser", "tax adviser"),
        ("a sound engineer", "sound engineer"), ("a zookeeper", "zookeeper"),
        ("a translator", "translator"), ("a dental hygienist", "dental hygienist"),
        ("a surveyor", "surveyor"), ("a florist", "florist"), ("a paramedic", "paramedic"),
        ("a piano tuner", "piano tuner"), ("an optician", "optician"), ("a welder", "welder"),
        ("a museum guide", "museum guide"), ("a barista", "barista"), ("an archivist", "archivist")]
HOBBIES = [("play the cello", "plays the cello", "is learning to play the cello"),
           ("do pottery", "does pottery", "is learning pottery"),
           ("go bouldering", "goes bouldering", "is learning to boulder"),
           ("knit", "knits", "is learning to knit"),
           ("sail", "sails", "is learning to sail"),
           ("play chess", "plays chess", "is learning chess"),
           ("do archery", "does archery", "is learning archery"),
           ("paint watercolours", "paints watercolours", "is learning watercolour painting"),
           ("birdwatch", "goes birdwatching", "has taken up birdwatching"),
           ("fence", "fences", "is learning to fence")]
FOODS = [("vegan", "The {s} is vegan"), ("allergic to shellfish", "{S} is allergic to shellfish"),
         ("lactose intolerant", "{S} is lactose intolerant"),
         ("off sugar", "{S} avoids sugar"), ("allergic to sesame", "{S} is allergic to sesame")]
LIKES = ["jazz records", "spicy ramen", "crime podcasts", "board games", "old maps", "tulips",
         "rainy mornings", "mint tea", "vintage bikes", "sea swimming"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
EVENTS = [("ran a half marathon", "ran a half marathon"),
          ("went to a wedding in the countryside", "went to a wedding"),
          ("passed my driving test", "passed the driving test"),
          ("adopted a kitten", "adopted a kitten"),
          ("started volunteering at the food bank", "started volunteering at a food bank"),
          ("gave a talk at a conference", "gave a talk at a conference"),
          ("painted the kitchen", "painted the kitchen"),
          ("visited the botanical garden", "visited a botanical garden")]
RELATIONS = [("sister", "she"), ("brother", "he"), ("mum", "she"), ("dad", "he"),
             ("best friend", "she"), ("colleague", "he"), ("neighbour", "she"), ("cousin", "he"),
             ("son", "he"), ("daughter", "she"), ("husband", "he"), ("wife", "she")]

SMALL_USER = ["Thanks, that's helpful!", "Haha, fair enough.", "Okay, good to know.",
              "Morning! How are you today?", "Great, thank you so much.", "Cool, cheers."]
SMALL_ASSISTANT = ["You're welcome! Anything else I can help with?", "Glad I could help.",
                   "I'm an AI assistant, so I don't have a home or a family, but I'm happy to chat.",
                   "As a language model I can't go anywhere, but that sounds lovely.",
                   "That sounds wonderful! How did it go?", "Good luck with it!",
                   "That's great news. Tell me more?", "Sounds like a busy week."]
WORLD = [("What's the boiling point of water at sea level?", "100 degrees Celsius."),
         ("How many legs does a spider have?", "Eight."),
         ("Can you suggest a name for a book club?", "How about 'Chapter and Verse'?"),
         ("What's a good stretch for a stiff back?", "Try a gentle cat-cow stretch, slowly."),
         ("How do I convert 5 miles to kilometres?", "Multiply by 1.609: about 8 km."),
         ("Write me a haiku about autumn.", "Leaves let go of light / the orchard hums with "
                                            "windfall / cold mornings return")]

FILLER = [("Did you watch the match on Sunday?", "Only the second half, what a finish."),
          ("The weather has been so strange lately.", "Right? Sun one minute, hail the next."),
          ("I need a holiday, honestly.", "Same. Maybe somewhere warm."),
          ("Have you tried that new bakery on the corner?", "Not yet, is it good?"),
          ("My phone keeps dying on me.", "Time for a new battery maybe.")]


def dump(obj):
    return json.dumps(obj, ensure_ascii=False)


def weekday_before(d, day):
    """The date of the last `day` (a weekday name) strictly before d."""
    back = (d.weekday() - DAYS.index(day)) % 7 or 7
    return d - timedelta(days=back)


class Person:
    def __init__(self, rng, name, relation=None, pronoun=None):
        self.name, self.relation, self.pronoun = name, relation, pronoun
        self.city = rng.choice(CITIES)
        self.job = rng.choice(JOBS)
        self.hobby = rng.choice(HOBBIES)
        self.like = rng.choice(LIKES)


def relative_fact(rng, name_in_fact, d):
    """A fact with a relative time in what is said and the date in the fact."""
    said, fact = rng.choice(EVENTS)
    form = rng.choice(["last", "yesterday"])
    if form == "last":
        day = rng.choice(DAYS)
        when = weekday_before(d, day)
        return f"last {day}", f"{name_in_fact} {fact} on {when.isoformat()}", said, "event"
    when = d - timedelta(days=1)
    return "yesterday", f"{name_in_fact} {fact} on {when.isoformat()}", said, "event"


def user_conversation(rng, d, known):
    """The user talks with the assistant: (turns, subjects)."""
    turns, subjects = [], {}

    def add(subject, description, fact, topic):
        s = subjects.setdefault(subject, {"name": subject, "description": description, "facts": []})
        s["facts"].append({"fact": fact, "topic": topic, "turns": [len(turns)]})

    if rng.random() < 0.3:
        turns.append(("user", rng.choice(SMALL_USER)))
        turns.append(("assistant", rng.choice(SMALL_ASSISTANT)))
    people = []
    for _ in range(rng.choice([0, 1, 1, 2])):
        rel, pronoun = rng.choice(RELATIONS)
        name = rng.choice(NAMES)
        if name in [p.name for p in people]:
            continue
        people.append(Person(rng, name, rel, pronoun))
    user_said = rng.random() < 0.8 or not people
    if user_said:
        kind = rng.choice(["home", "job", "pet", "hobby", "diet", "event", "like"])
        me = Person(rng, "user")
        if kind == "home":
            turns.append(("user", rng.choice([f"I live in {me.city} now, it's pretty quiet.",
                                              f"We moved to {me.city} in the spring.",
                                              f"Greetings from {me.city}, where I live."])))
            add("user", "The person speaking.", f"The user lives in {me.city}", "home")
        elif kind == "job":
            turns.append(("user", rng.choice([f"I work as {me.job[0]}, long shifts this week.",
                                              f"Being {me.job[0]} is tiring some days.",
                                              f"I just started a new job as {me.job[0]}!"])))
            add("user", "The person speaking.", f"The user works as {me.job[0]}", "job")
        elif kind == "pet":
            animal, pet = rng.choice(ANIMALS), rng.choice(PETS)
            turns.append(("user", rng.choice([f"My {animal} {pet} chewed my slipper again.",
                                              f"I have a {animal} called {pet}."])))
            add("user", "The person speaking.", f"The user has a {animal} named {pet}", "pet")
        elif kind == "hobby":
            turns.append(("user", rng.choice([f"I've been learning to {me.hobby[0]} on weekends.",
                                              f"I signed up for lessons to {me.hobby[0]}."])))
            add("user", "The person speaking.", f"The user {me.hobby[2]}", "hobby")
        elif kind == "diet":
            food, fact = rng.choice(FOODS)
            turns.append(("user", rng.choice([f"Just so you know, I'm {food}.",
                                              f"Any recipe ideas? I'm {food}, remember."])))
            add("user", "The person speaking.",
                fact.format(s="user", S="The user").replace("The The", "The"), "diet")
        elif kind == "like":
            turns.append(("user", f"I really love {me.like}, honestly."))
            add("user", "The person speaking.", f"The user loves {me.like}", "likes")
        else:
            rel, fact, said, topic = relative_fact(rng, "The user", d)
            turns.append(("user", f"{rel[0].upper() + rel[1:]} I {said}!"))
            add("user", "The person speaking.", fact, topic)
        turns.append(("assistant", rng.choice(SMALL_ASSISTANT)))
    for p in people:
        he = p.pronoun.capitalize()
        desc = f"The user's {p.relation}."
        kind = rng.choice(["home", "job", "hobby", "two"])
        if kind in ("home", "two"):
            turns.append(("user", rng.choice([f"My {p.relation} {p.name} lives in {p.city}.",
                                              f"My {p.relation} {p.name} just moved to {p.city}."])))
            add(p.name, desc, f"{p.name} lives in {p.city}", "home")
        if kind in ("job", "two"):
            lead = f"{he} works" if kind == "two" else f"My {p.relation} {p.name} works"
            turns.append(("user", f"{lead} as {p.job[0]}."))
            add(p.name, desc, f"{p.name} works as {p.job[0]}", "job")
        if kind == "hobby":
            turns.append(("user", f"My {p.relation} {p.name} {p.hobby[1]} every week."))
            add(p.name, desc, f"{p.name} {p.hobby[1]}", "hobby")
        turns.append(("assistant", rng.choice(SMALL_ASSISTANT)))
    if rng.random() < 0.4:
        q, a = rng.choice(WORLD)
        turns.append(("user", q))
        turns.append(("assistant", a))
    if rng.random() < 0.3:
        turns.append(("user", rng.choice(SMALL_USER)))
    return turns, list(subjects.values())


def friends_conversation(rng, d):
    """Two friends talk by name: (turns, subjects)."""
    a, b = rng.sample(NAMES, 2)
    turns, subjects = [], {}

    def add(subject, fact, topic):
        s = subjects.setdefault(subject, {"name": subject,
                                          "description": "One of the two friends talking.",
                                          "facts": []})
        s["facts"].append({"fact": fact, "topic": topic, "turns": [len(turns)]})

    turns.append((a, rng.choice([f"Hey {b}! Long time no see.", f"Hi {b}, how have you been?"])))
    turns.append((b, rng.choice(["Good, busy! You?", "Hey! Not bad at all."])))
    rounds = rng.sample([a, b], rng.choice([1, 2])) * rng.choice([1, 1, 2, 3])
    left = {s: rng.sample(["event", "job", "hobby", "pet", "home"], 5) for s in (a, b)}
    for r, speaker in enumerate(rounds):
        p = Person(rng, speaker)
        kind = left[speaker].pop()
        if r and rng.random() < 0.5:
            q, ans = rng.choice(FILLER)
            turns.append((speaker, q))
            turns.append((b if speaker == a else a, ans))
        if kind == "event":
            rel, fact, said, topic = relative_fact(rng, speaker, d)
            turns.append((speaker, f"{rel[0].upper() + rel[1:]} I {said}, it was amazing."))
            add(speaker, fact, topic)
        elif kind == "job":
            turns.append((speaker, f"I started working as {p.job[0]} this month."))
            add(speaker, f"{speaker} works as {p.job[0]}", "job")
        elif kind == "hobby":
            turns.append((speaker, f"I've been learning to {p.hobby[0]}, it keeps me sane."))
            add(speaker, f"{speaker} {p.hobby[2]}", "hobby")
        elif kind == "pet":
            animal, pet = rng.choice(ANIMALS), rng.choice(PETS)
            turns.append((speaker, f"I got a {animal}, her name is {pet}."))
            add(speaker, f"{speaker} has a {animal} named {pet}", "pet")
        else:
            turns.append((speaker, f"I finally moved to {p.city}, I love it there."))
            add(speaker, f"{speaker} lives in {p.city}", "home")
        other = b if speaker == a else a
        turns.append((other, rng.choice(["That's awesome, good for you!", "Wow, I'm so happy "
                                         "for you.", "No way! Tell me everything."])))
    if rng.random() < 0.5:
        turns.append((a, "Anyway, talk soon!"))
        turns.append((b, "Bye, take care!"))
    return turns, list(subjects.values())


def nothing_conversation(rng):
    turns = []
    for _ in range(rng.choice([1, 2])):
        q, ans = rng.choice(WORLD)
        turns.append(("user", q))
        turns.append(("assistant", ans))
    turns.append(("user", rng.choice(SMALL_USER)))
    turns.append(("assistant", rng.choice(SMALL_ASSISTANT)))
    return turns, []


def conversation(rng, i):
    d = date(2021, 1, 4) + timedelta(days=rng.randrange(1500))
    roll = rng.random()
    if roll < 0.12:
        turns, subjects = nothing_conversation(rng)
    elif roll < 0.5:
        turns, subjects = friends_conversation(rng, d)
    else:
        turns, subjects = user_conversation(rng, d, [])
    # Known subjects, some of them the ones the conversation names.
    known = []
    for s in subjects:
        if rng.random() < 0.3:
            known.append([s["name"], s["description"]])
    for name in rng.sample(NAMES, rng.choice([0, 0, 1, 2])):
        if name not in [k[0] for k in known] and name not in [s["name"] for s in subjects]:
            known.append([name, "Someone the user knows."])
    return {
        "id": f"conversation-{i:03}",
        "date": d.strftime("%A %Y-%m-%d"),
        "known": known,
        "turns": [{"speaker": s, "text": t} for s, t in turns],
        "answer": dump({"subjects": subjects}),
    }


def merge_question(rng, i):
    """Known and new facts about one subject, with the decision for each new fact."""
    name = rng.choice(NAMES + ["user"])
    S = "The user" if name == "user" else name
    p, q = Person(rng, name), Person(rng, name)
    while q.city == p.city or q.job == p.job or q.hobby == p.hobby:
        q = Person(rng, name)
    topics = {"home": (f"{S} lives in {p.city}", f"{S} lives in {q.city}",
                       [f"{S} is living in {p.city}", f"{S}'s home is in {p.city}"]),
              "job": (f"{S} works as {p.job[0]}", f"{S} works as {q.job[0]}",
                      [f"{S} is {p.job[0]}", f"{S} has a job as {p.job[0]}"]),
              "hobby": (f"{S} {p.hobby[1]}", f"{S} {q.hobby[2]}", [f"{S} {p.hobby[2]}"]),
              "day": (f"{S}'s weekly lesson is on {DAYS[i % 7]}",
                      f"{S}'s weekly lesson is on {DAYS[(i + 3) % 7]}",
                      [f"{S} has the weekly lesson on {DAYS[i % 7]}s"])}
    chosen = rng.sample(list(topics), rng.choice([1, 2, 3]))
    known = [topics[t][0] for t in chosen]
    news, decisions = [], []
    # A fact about something not known yet is an add.
    extra = rng.choice([None, f"{S} loves {p.like}", f"{S} has a {rng.choice(ANIMALS)} named {rng.choice(PETS)}"])
    plan = [(t, rng.choice(["update", "noop", "update"])) for t in rng.sample(chosen, rng.choice([1, len(chosen)]))]
    if extra:
        plan.append((None, "add"))
    rng.shuffle(plan)
    reasons = {"update": ["it changed", "a new value replaces the old one", "a correction"],
               "noop": ["already known", "the same fact in other words"],
               "add": ["nothing known about this", "a new fact"]}
    for t, action in plan:
        if action == "add":
            news.append(extra)
            known_no = None
        else:
            base, changed, same = topics[t]
            news.append(changed if action == "update" else rng.choice(same))
            known_no = chosen.index(t) + 1
            if t == "hobby" and action == "update":
                # A second hobby replaces nothing.
                action, known_no = "add", None
        reason = "another hobby, nothing replaced" if t == "hobby" and action == "add" else rng.choice(reasons[action])
        decisions.append({"new": len(news), "action": action, "known": known_no, "reason": reason})
    return {"id": f"merge-{i:03}", "subject": name, "known": known, "new": news,
            "answer": dump({"decisions": decisions})}


def forbidden_words():
    text = []
    for src in FORBIDDEN_SOURCES:
        if src.is_dir():
            text += [f.read_text() for f in sorted(src.rglob("*.json"))]
        elif src.exists():
            text.append(src.read_text())
    return set(re.findall(r"[A-Za-z]+", " ".join(text)))


def check(examples):
    """Every name and place of the set is absent from the evaluation sets."""
    seen = forbidden_words()
    clash = sorted(w for w in NAMES + PETS + CITIES if w in seen)
    if clash:
        sys.exit(f"these occur in an evaluation set: {', '.join(clash)}")
    for c in examples["extract"]:
        reply = json.loads(c["answer"])
        n = len(c["turns"])
        for s in reply["subjects"]:
            for f in s["facts"]:
                assert all(1 <= t <= n for t in f["turns"]), c["id"]
    for m in examples["merge"]:
        reply = json.loads(m["answer"])
        assert len(reply["decisions"]) == len(m["new"]), m["id"]


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    conversations = int(sys.argv[2]) if len(sys.argv) > 2 else 160
    merges = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    rng = random.Random(20)
    examples = {"extract": [conversation(rng, i) for i in range(conversations)],
                "merge": [merge_question(rng, i) for i in range(merges)]}
    check(examples)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")
    print(f"{out}: {conversations} conversations, {merges} merge questions")


if __name__ == "__main__":
    main()
