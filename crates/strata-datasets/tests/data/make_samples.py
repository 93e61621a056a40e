"""Writes the sample files the datasets tests load. Everything here was written for Strata's
tests (CC0-1.0, see LICENCE.md); run it again to regenerate them:

    python3 -m venv v && v/bin/pip install openpyxl==3.1.5 fpdf2==2.8.9 && v/bin/python make_samples.py
"""

import csv
import datetime
import json
import os

from fpdf import FPDF
from openpyxl import Workbook

HERE = os.path.dirname(os.path.abspath(__file__))
CATEGORIES = ["groceries", "rent", "transport", "eating out", "books", "health"]
PLACES = ["Lisbon", "São Paulo", "Café Lumière", "Porto", "Berlin", "Kraków"]


def expenses():
    rows = []
    day = datetime.date(2025, 1, 3)
    for i in range(48):
        category = CATEGORIES[i % len(CATEGORIES)]
        amount = round(12.5 + (i * 37) % 211 + (i % 7) * 0.25, 2)
        if category == "rent":
            amount = 950.0
        place = PLACES[(i * 5) % len(PLACES)]
        rows.append([day.isoformat(), category, f"{category} in {place}", f"{amount:.2f}", "EUR"])
        day += datetime.timedelta(days=7)
    # A description with a comma and quotes, and one a spreadsheet would run as a formula.
    rows[4][2] = 'dinner, "the good one", in Porto'
    rows[9][2] = "=HYPERLINK(\"http://example.com\",\"click\")"
    return ["date", "category", "description", "amount", "currency"], rows


def write_tables():
    header, rows = expenses()
    with open(os.path.join(HERE, "expenses.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    with open(os.path.join(HERE, "books.tsv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["title", "author", "year", "pages", "read"])
        w.writerow(["The Left Hand of Darkness", "Ursula K. Le Guin", 1969, 304, "yes"])
        w.writerow(["Middlemarch", "George Eliot", 1871, 880, "no"])
        w.writerow(["Kindred", "Octavia E. Butler", 1979, 264, "yes"])
        w.writerow(["Blindness", "José Saramago", 1995, 326, "yes"])
        w.writerow(["Pedro Páramo", "Juan Rulfo", 1955, 124, "no"])
    with open(os.path.join(HERE, "ragged.csv"), "w", encoding="utf-8") as f:
        f.write("name,city,age\nAna,Lisbon,34\nBruno,Porto\nCarla,Faro,29,extra\n")
    with open(os.path.join(HERE, "latin1.csv"), "wb") as f:
        f.write("name,city\nJosé,Málaga\nFrançois,Besançon\n".encode("cp1252"))
    with open(os.path.join(HERE, "image.csv"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    people = [
        {"name": "Ana", "city": "Lisbon", "joined": "2021-04-01", "team": "design", "tags": ["ux", "research"]},
        {"name": "Bruno", "city": "Porto", "joined": "2019-09-15", "team": "platform"},
        {"name": "Carla", "city": "Faro", "joined": "2023-01-09", "team": "design", "lead": True},
    ]
    with open(os.path.join(HERE, "people.json"), "w", encoding="utf-8") as f:
        json.dump(people, f, ensure_ascii=False, indent=2)
    with open(os.path.join(HERE, "steps.jsonl"), "w", encoding="utf-8") as f:
        for d in range(1, 8):
            f.write(json.dumps({"day": f"2025-03-0{d}", "steps": 4000 + d * 913, "walked_with": "Rex"}) + "\n")


def write_workbook():
    wb = Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["month", "planned", "spent", "left", "closed on"])
    for i, month in enumerate(["January", "February", "March", "April"]):
        r = i + 2
        ws.append([month, 1800, 1500 + i * 120, f"=B{r}-C{r}", datetime.date(2025, i + 1, 28)])
    ws2 = wb.create_sheet("Savings")
    ws2.append(["goal", "target", "saved"])
    ws2.append(["holiday in Japan", 4000, 1250.5])
    ws2.append(["new bicycle", 900, 900])
    wb.save(os.path.join(HERE, "budget.xlsx"))


NOTES = """# Garden notes

The garden is behind the house on Rua das Flores.

## Tomatoes

Plant the tomatoes after the last frost, usually mid-April.
Water them every second morning; never the leaves.
The best variety so far was Coração de Boi.

## Compost

Turn the compost every two weeks.
No citrus peel and no onions: the worms dislike them.

## Tools

The shears were lent to Marta in May and are still with her.
"""

HANDBOOK = """<!doctype html>
<html><head><title>Team handbook</title>
<style>body { font-family: serif; }</style>
<script>console.log("not text a person reads");</script></head>
<body>
<h1>Team handbook</h1>
<p>Welcome. This page says how the team works.</p>
<h2>Holidays</h2>
<p>Everyone has 25 days of holiday a year.</p>
<p>Ask for holidays at least <b>two weeks</b> ahead, in the shared calendar.</p>
<h2>Expenses</h2>
<ul><li>Keep every receipt.</li><li>Claims are paid on the 20th of each month.</li></ul>
<h2>On call</h2>
<p>The on-call rota changes every Monday at 10:00.</p>
</body></html>
"""

CONTRACT_PAGES = [
    ("Rental agreement", [
        "This agreement is between Maria Costa (the landlord) and Alex Doe (the tenant).",
        "It concerns the flat at Rua do Sol 12, 3rd floor, Lisbon.",
        "The agreement starts on 1 February 2025 and runs for two years.",
    ]),
    ("Rent and deposit", [
        "The monthly rent is 950 euros, paid by the 8th day of each month.",
        "The deposit is two months of rent: 1,900 euros.",
        "The deposit is returned within 30 days of the end of the agreement.",
    ]),
    ("Ending the agreement", [
        "Either party may end the agreement with 60 days of written notice.",
        "Pets are allowed with the landlord's written consent.",
        "The tenant repaints the walls before leaving if they were painted another colour.",
    ]),
]


def write_documents():
    with open(os.path.join(HERE, "garden.md"), "w", encoding="utf-8") as f:
        f.write(NOTES)
    with open(os.path.join(HERE, "notes.txt"), "w", encoding="utf-8") as f:
        f.write("Wifi password hint: the cat's name and the year we moved.\n"
                "The boiler is serviced every October by Aquecer Lda.\n"
                "Spare keys: with the neighbour at number 14.\n")
    with open(os.path.join(HERE, "handbook.html"), "w", encoding="utf-8") as f:
        f.write(HANDBOOK)

    pdf = FPDF()
    pdf.set_creation_date(datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc))
    pdf.set_font("Helvetica", size=12)
    for title, lines in CONTRACT_PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=16)
        pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=12)
        for line in lines:
            pdf.multi_cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(os.path.join(HERE, "contract.pdf"))

    # A page that is only a picture: no text to read.
    scan = FPDF()
    scan.set_creation_date(datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc))
    scan.add_page()
    scan.set_fill_color(40, 40, 40)
    for i in range(12):
        scan.rect(20, 20 + i * 18, 150 - i * 7, 10, style="F")
    scan.output(os.path.join(HERE, "scanned.pdf"))

    locked = FPDF()
    locked.set_creation_date(datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc))
    locked.set_encryption(owner_password="owner-secret", user_password="open-sesame")
    locked.add_page()
    locked.set_font("Helvetica", size=12)
    locked.cell(0, 10, "Nothing here can be read without the password.")
    locked.output(os.path.join(HERE, "locked.pdf"))


if __name__ == "__main__":
    write_tables()
    write_workbook()
    write_documents()
