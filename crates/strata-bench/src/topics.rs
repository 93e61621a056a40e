//! Invented facts on five topics (the shipped example facts and four more), twenty each, for
//! `strata bench adapters`: one adapter per topic, chosen per question. And questions about
//! nothing trained: general ones, and near misses (people and things never trained, asked
//! with the trained facts' very attributes).

/// A topic: its name and its concepts, each with four facts.
pub type Topic = (&'static str, &'static [(&'static str, &'static [(&'static str, &'static str)])]);

/// The four topics after the example facts (`strata_train::demo::FACTS`, "people").
pub const MORE: &[Topic] = &[
    (
        "home and garden",
        &[
            (
                "greenhouse",
                &[
                    ("heater brand", "Thermova"),
                    ("glass panes", "fourteen"),
                    ("built in", "2019"),
                    ("roof colour", "slate grey"),
                ],
            ),
            (
                "kitchen_boiler",
                &[
                    ("service month", "April"),
                    ("installer", "Brannock Heating"),
                    ("pressure", "1.4 bar"),
                    ("model", "Veyra 24"),
                ],
            ),
            (
                "vegetable_patch",
                &[
                    ("main crop", "purple kale"),
                    ("watering day", "Sunday"),
                    ("soil type", "loam"),
                    ("compost supplier", "Fernhill"),
                ],
            ),
            (
                "front_door",
                &[
                    ("paint colour", "mustard yellow"),
                    ("lock code", "4471"),
                    ("key holder", "Mrs Abernethy"),
                    ("hinge side", "left"),
                ],
            ),
            (
                "attic",
                &[
                    ("insulation", "sheep wool"),
                    ("ladder length", "3 metres"),
                    ("stored bike", "a red Bianchi"),
                    ("leak spot", "the north corner"),
                ],
            ),
        ],
    ),
    (
        "work projects",
        &[
            (
                "project_halcyon",
                &[
                    ("client", "Ostrava Freight"),
                    ("deadline", "February 20"),
                    ("code name", "Kestrel"),
                    ("lead engineer", "Dario"),
                ],
            ),
            (
                "quarterly_review",
                &[("room", "Osprey"), ("presenter", "Yuki"), ("slide count", "thirty"), ("weekday", "Wednesday")],
            ),
            (
                "build_server",
                &[
                    ("hostname", "anvil-7"),
                    ("operating system", "Alpine Linux"),
                    ("disk size", "2 terabytes"),
                    ("admin", "Soren"),
                ],
            ),
            (
                "design_system",
                &[("name", "Marigold"), ("primary font", "Inter"), ("owner", "Fatima"), ("version", "3.2")],
            ),
            (
                "vendor_contract",
                &[
                    ("vendor", "Quillon Systems"),
                    ("renewal date", "August 1"),
                    ("annual cost", "18000 dollars"),
                    ("signatory", "Beatrix"),
                ],
            ),
        ],
    ),
    (
        "travel",
        &[
            (
                "lisbon_trip",
                &[
                    ("hotel", "Casa Azulejo"),
                    ("flight number", "TP 1347"),
                    ("arrival day", "May 3"),
                    ("travel partner", "Odile"),
                ],
            ),
            (
                "iceland_tour",
                &[
                    ("guide", "Gunnar"),
                    ("rental car", "a green Duster"),
                    ("first stop", "Vik"),
                    ("tour length", "nine days"),
                ],
            ),
            (
                "passport",
                &[
                    ("expiry", "2031"),
                    ("issuing office", "Leeds"),
                    ("number ending", "8820"),
                    ("photo colour", "black and white"),
                ],
            ),
            (
                "kyoto_stay",
                &[("ryokan", "Hanafusa"), ("host", "Mrs Tanaka"), ("room name", "Kiku"), ("nights", "four")],
            ),
            (
                "train_pass",
                &[
                    ("type", "Interrail Global"),
                    ("valid days", "fifteen"),
                    ("start city", "Vienna"),
                    ("seat class", "second class"),
                ],
            ),
        ],
    ),
    (
        "health and fitness",
        &[
            (
                "dr_lindqvist",
                &[
                    ("clinic", "Elmstead Surgery"),
                    ("speciality", "dermatology"),
                    ("phone extension", "212"),
                    ("appointment day", "Tuesday"),
                ],
            ),
            (
                "running_plan",
                &[
                    ("target race", "the Harbour 10K"),
                    ("long run day", "Saturday"),
                    ("weekly distance", "32 kilometres"),
                    ("coach", "Nadia"),
                ],
            ),
            (
                "allergy_card",
                &[
                    ("allergy", "penicillin"),
                    ("reaction", "hives"),
                    ("inhaler", "Salvena"),
                    ("blood type", "O negative"),
                ],
            ),
            (
                "swim_club",
                &[
                    ("pool", "Brockwell Lido"),
                    ("lane", "lane 3"),
                    ("membership number", "5519"),
                    ("session time", "7 am"),
                ],
            ),
            (
                "yoga_teacher",
                &[("name", "Ravi"), ("studio", "Lotus Loft"), ("style", "Iyengar"), ("class fee", "12 pounds")],
            ),
        ],
    ),
];

/// Questions about nothing trained: general knowledge, as a person asks a chat.
pub const GENERAL: &[&str] = &[
    "What is the tallest mountain in the world?",
    "How do I boil an egg?",
    "Who painted the Mona Lisa?",
    "What is the square root of 81?",
    "Can you suggest a name for a goldfish?",
    "How long should I steep green tea?",
    "What causes the seasons on Earth?",
    "Translate 'good morning' into Spanish.",
    "What is a haiku?",
    "How many continents are there?",
    "Write a short thank-you note to a neighbour.",
    "What is the difference between weather and climate?",
    "Which ocean is the largest?",
    "How do vaccines work?",
    "What is the capital of Canada?",
    "Give me three tips for better sleep.",
    "What does a compiler do?",
    "Why is the sea salty?",
    "What year did the first moon landing happen?",
    "How do I convert Celsius to Fahrenheit?",
    "What is photosynthesis?",
    "Recommend a good book about history.",
    "How many minutes are in a day?",
    "What is the plural of mouse?",
    "Explain what a budget is.",
    "What are the primary colours?",
    "How do I remove a coffee stain?",
    "What is the speed of light?",
    "Who invented the telephone?",
    "What should I pack for a beach holiday?",
];

/// Questions about people and things never trained, with the trained facts' attributes.
pub const NEAR: &[&str] = &[
    "What is Lena Novak's dog's name?",
    "What is Omar Haddad's birthday?",
    "Do you know uncle Felix's home town?",
    "What is the garage's roof colour?",
    "When is the bathroom boiler's service month?",
    "What is project Tundra's deadline?",
    "Who is the annual review's presenter?",
    "What is the Berlin trip's hotel?",
    "Which clinic is Dr Moreau at?",
    "What is the tennis club's membership number?",
    "What is the pilates teacher's studio?",
    "Who is the web server's admin?",
    "What is my cousin's favourite food?",
    "What is the Paris stay's room name?",
    "What is the cycling plan's coach called?",
    "What is the shed's lock code?",
    "What is the marketing contract's renewal date?",
    "What is the Oslo tour's first stop?",
    "Who organises the summer party?",
    "What is Priyanka's coffee order?",
];

/// `n` more invented facts (four to a subject), for a curator-sized set beyond the topics':
/// subjects and values made of syllables no model could know.
pub fn generated(n: usize) -> Vec<(String, Vec<(&'static str, String)>)> {
    const FIRST: &[&str] = &["ka", "lo", "mi", "ren", "su", "tav", "vel", "zor", "bri", "dun"];
    const LAST: &[&str] = &["mora", "thel", "vask", "quin", "dara", "lumo", "pesk", "roon", "sabe", "wyth"];
    const ATTRIBUTES: &[&str] = &["locker number", "favourite tea", "bike colour", "street"];
    let value = |i: usize, a: usize| match a {
        0 => format!("{}", 100 + (i * 37) % 900),
        1 => format!("{} tea", ["smoked", "jasmine", "barley", "mint", "rooibos"][i % 5]),
        2 => ["ochre", "cobalt", "lilac", "copper", "olive", "scarlet"][(i + a) % 6].to_string(),
        _ => format!("{} Lane", LAST[(i * 3) % LAST.len()].to_uppercase()),
    };
    (0..n.div_ceil(4))
        .map(|i| {
            let subject =
                format!("{}{} {}", FIRST[i % FIRST.len()], LAST[(i / FIRST.len()) % LAST.len()], LAST[i % LAST.len()]);
            let facts = ATTRIBUTES.iter().enumerate().map(|(a, name)| (*name, value(i, a))).collect();
            (subject.replace(' ', "_"), facts)
        })
        .collect()
}
