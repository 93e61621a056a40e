#!/usr/bin/env python3
"""Writes the training set for an answering adapter (`strata bench answer-adapter`): invented
households, each a folder with memories.json and questions.json in the layout of
crates/strata-bench/data/answers/, every question with the answer to learn. Names, places and
values are drawn from pools that share nothing with the evaluation's household, so the adapter
can only learn how to answer from memories, not the evaluation's answers. Deterministic."""

import json
import random
import sys
from pathlib import Path

FIRST = ["Amara", "Bilal", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hugo", "Ines", "Jonas",
         "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Paloma", "Quentin", "Rosa", "Samir", "Tessa",
         "Ugo", "Vera", "Wanjiru", "Xavier", "Yara", "Zoltan", "Agnes", "Bruno", "Cleo", "Dario"]
LAST = ["Okonkwo", "Haddad", "Moretti", "Volkov", "Achterberg", "Nakamura", "Fischer", "Duarte",
        "Kowalski", "Brennan", "Sato", "Rahman", "Lindgren", "Castillo", "Petrov", "Mensah"]
TOWNS = ["Harrogate", "Exeter", "Galway", "Utrecht", "Porto", "Bergen", "Lyon", "Bristol",
         "Cork", "Ghent", "Aarhus", "Bologna", "Dundee", "Krakow", "Tampere", "Norwich"]
STREETS = ["Alder Road", "Mill Lane", "Quarry Street", "Orchard Close", "Beacon Hill",
           "Station Road", "Linden Avenue", "Harbour View", "Chapel Row", "Fern Crescent"]
JOBS = ["a nurse at St Jude's Hospital", "an electrician", "a data analyst at Brightwell Insurance",
        "a primary school teacher", "a bus driver", "a pharmacist", "a carpenter",
        "a librarian at the central library", "a software tester", "a physiotherapist",
        "a baker at Crumb & Co", "an accountant at Holt Partners"]
SCHOOLS = ["Riverside Primary", "St Anne's School", "Oakfield Academy", "Meadowbank Primary",
           "Greenway School", "Larkhill Primary"]
TEACHERS = ["Mrs Achebe", "Mr Lund", "Ms Ferreira", "Mr Doyle", "Mrs Iqbal", "Ms Novak"]
COLOURS = ["orange", "lilac", "navy blue", "mustard yellow", "forest green", "coral"]
BREEDS = ["border collie", "dachshund", "labrador", "whippet", "tabby cat", "Maine Coon cat",
          "spaniel", "greyhound"]
PET_NAMES = ["Sprocket", "Pickle", "Juniper", "Waffle", "Ziggy", "Marble", "Clementine", "Moss"]
VETS = ["Hillside Vets", "Abbey Animal Clinic", "Paws Veterinary Centre", "Riverbank Vets"]
FOODS = ["lentil dal", "paella", "fish pie", "ramen", "shakshuka", "lasagne", "pierogi", "bibimbap"]
DISLIKES = ["olives", "mushrooms", "blue cheese", "celery", "anchovies", "beetroot"]
DRINKS = ["black coffee", "a latte with soya milk", "green tea", "a cappuccino",
          "rooibos tea with honey", "an espresso"]
BANDS = ["The Harbour Lights", "Velvet Static", "Northern Reeds", "The Paper Kites",
         "Glass Orchard", "The Low Tides"]
BOOKS = ["science fiction", "historical novels", "biographies", "poetry", "thrillers", "travel writing"]
ALLERGIES = ["penicillin", "cats", "shellfish", "pollen", "wasp stings", "latex"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
# Things a household's memories never say: asked, the answer is "I don't know".
UNKNOWN = [
    "What is my passport number?", "What is {p}'s shoe size?", "What is {p}'s blood type?",
    "What is my car's registration number?", "Who is {p}'s best friend?",
    "What is the name of my dentist?", "What is {p}'s favourite film?",
    "How much did my last electricity bill come to?", "What is my bank's sort code?",
    "Which football team does {p} support?", "What is {p}'s middle name?",
    "What time does {p}'s train leave on Mondays?", "What is my neighbour's name?",
    "Where did {p} go to university?",
]
DONT_KNOW = "I don't know: my memories do not say."


def date(rng, lo=1950, hi=2020):
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(lo, hi)}"


def household(rng, index):
    me = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    first = me.split()[0]
    used = {first}

    def fresh(pool):
        name = rng.choice([n for n in pool if n not in used])
        used.add(name)
        return name

    semantic, questions = {}, []

    def fact(key, attrs, asks):
        semantic[key] = attrs
        for q, a, accept in asks:
            questions.append({"category": "single_fact", "question": q, "answer": a,
                              "accept": [accept], "memory": key})

    town, street = rng.choice(TOWNS), f"{rng.randint(2, 98)} {rng.choice(STREETS)}"
    job = rng.choice(JOBS)
    birthday = date(rng, 1960, 1995)
    fact("about_me", {"name": me, "birthday": birthday, "home_address": f"{street}, {town}", "job": job},
         [("What is my home address?", f"You live at {street}, {town}.", street),
          ("When is my birthday?", f"Your birthday is {birthday.rsplit(' ', 1)[0]}.", birthday.rsplit(' ', 1)[0]),
          ("What do I do for a living?", f"You work as {job}.", job.split(" at ")[0].split(" ", 1)[1])])
    partner = fresh(FIRST)
    pjob, pbirthday = rng.choice(JOBS), date(rng, 1960, 1995)
    fact(f"partner_{partner.lower()}", {"name": partner, "birthday": pbirthday, "job": pjob},
         [(f"When is {partner}'s birthday?", f"{partner}'s birthday is {pbirthday.rsplit(' ', 1)[0]}.",
           pbirthday.rsplit(' ', 1)[0]),
          (f"What does {partner} do for work?", f"{partner} works as {pjob}.", pjob.split(" at ")[0].split(" ", 1)[1])])
    child = fresh(FIRST)
    school, teacher, colour = rng.choice(SCHOOLS), rng.choice(TEACHERS), rng.choice(COLOURS)
    cbirthday = date(rng, 2012, 2020)
    fact(f"child_{child.lower()}", {"name": child, "birthday": cbirthday, "school": school,
                                    "class_teacher": teacher, "favourite_colour": colour},
         [(f"Which school does {child} go to?", f"{child} goes to {school}.", school),
          (f"Who is {child}'s class teacher?", f"{child}'s class teacher is {teacher}.", teacher),
          (f"What is {child}'s favourite colour?", f"{child}'s favourite colour is {colour}.", colour)])
    parent = fresh(FIRST)
    ptown = rng.choice([t for t in TOWNS if t != town])
    allergy = rng.choice(ALLERGIES)
    fact(f"parent_{parent.lower()}", {"name": parent, "lives_in": ptown, "allergy": allergy},
         [(f"Where does {parent} live?", f"{parent} lives in {ptown}.", ptown),
          (f"What is {parent} allergic to?", f"{parent} is allergic to {allergy}.", allergy)])
    pet, breed, vet = rng.choice(PET_NAMES), rng.choice(BREEDS), rng.choice(VETS)
    fact(f"pet_{pet.lower()}", {"name": pet, "breed": breed, "vet": vet},
         [(f"What kind of animal is {pet}?", f"{pet} is a {breed}.", breed),
          (f"Which vet does {pet} go to?", f"{pet} goes to {vet}.", vet)])
    food, dislike, drink = rng.choice(FOODS), rng.choice(DISLIKES), rng.choice(DRINKS)
    band, books = rng.choice(BANDS), rng.choice(BOOKS)
    semantic["food_preferences"] = {"favourite_dish": food, "dislikes": dislike}
    semantic["drink_preferences"] = {"order": drink}
    semantic["music_and_reading"] = {"favourite_band": band, "favourite_genre_to_read": books}
    for q, a, accept, key in [
        ("What is my favourite dish?", f"Your favourite dish is {food}.", food, "food_preferences"),
        ("Which food do I dislike?", f"You dislike {dislike}.", dislike, "food_preferences"),
        ("How do I take my coffee or tea?", f"You like {drink}.", drink, "drink_preferences"),
        ("Which band do I like best?", f"Your favourite band is {band}.", band, "music_and_reading"),
        ("What do I like to read?", f"You like to read {books}.", books, "music_and_reading"),
    ]:
        questions.append({"category": "preference", "question": q, "answer": a, "accept": [accept], "memory": key})

    episodic = []
    events = [
        (f"{child} won a prize at the {school} science fair for a volcano model.",
         f"When did {child} win the science fair prize?", "science_fair"),
        (f"Took {pet} to {vet} for a vaccination; all fine.", f"When did {pet} last have a vaccination?", "pet_vaccination"),
        (f"{partner} and I went to a {band} concert in {town}.", f"When did we see {band} in concert?", "concert"),
        (f"Visited {parent} in {ptown} for the weekend.", f"When did I last visit {parent}?", "visit_parent"),
        (f"Had the boiler serviced by Warmfront Heating.", "When was the boiler serviced?", "boiler"),
        (f"{child} lost a first tooth at breakfast.", f"When did {child} lose a first tooth?", "tooth"),
    ]
    rng.shuffle(events)
    for text, q, ref in events[:4]:
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        year = rng.choice([2023, 2024, 2025])
        episodic.append({"timestamp": f"{year}-{month:02d}-{day:02d}T{rng.randint(8, 20):02d}:00:00",
                         "speaker": first, "text": text, "metadata": {"ref": ref}})
        said = f"{day} {MONTHS[month - 1]} {year}"
        questions.append({"category": "event_date", "question": q, "answer": f"That was on {said}.",
                          "accept": [f"{day} {MONTHS[month - 1]}"], "memory": ref})

    people = [partner, child, parent]
    for q in rng.sample(UNKNOWN, 7):
        questions.append({"category": "not_in_memory", "question": q.format(p=rng.choice(people)),
                          "answer": DONT_KNOW})
    for i, q in enumerate(questions):
        q["id"] = f"h{index:02d}q{i + 1:02d}"
    return {"semantic": semantic, "episodic": episodic, "procedural": {}}, questions


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("crates/strata-bench/data/answer-training")
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rng = random.Random(20261126)
    for i in range(count):
        memories, questions = household(rng, i + 1)
        d = out / f"household-{i + 1:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "memories.json").write_text(json.dumps(memories, indent=2, ensure_ascii=False) + "\n")
        (d / "questions.json").write_text(json.dumps({"questions": questions}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
