"""The 63 hand-written histories of the update set (see make_update_set.py, which checks and
writes them): each a subject, 1-3 dated conversations in which one fact changes, and what the
subject's current fact must and must not contain afterwards."""

def case(id_, subject, conversations, current, gone, history=None):
    """One case; conversations are (date, [turn, ...]) with turns "U: text" or "A: text"."""
    convs = []
    for day, turns in conversations:
        out = []
        for t in turns:
            who, text = t.split(": ", 1)
            out.append({"speaker": {"U": "user", "A": "assistant"}[who], "text": text})
        convs.append({"date": day, "turns": out})
    return {"id": id_, "kind": id_.rsplit("-", 1)[0], "subject": subject, "conversations": convs,
            "expect": {"current": current, "gone": gone,
                       "history": history if history is not None else list(gone)}}


CASES = [
    # ---------------------------------------------------------------- move
    case("move-01", "Thandiwe", [
        ("2023-02-11", [
            "U: My sister Thandiwe just got a flat in Durban, close to the beach.",
            "A: Lovely! Does she like being near the sea?",
            "U: She swims every morning before work. She teaches maths at a high school."]),
        ("2023-11-05", [
            "U: Thandiwe packed up and relocated to Cape Town in October, the school board gave her a transfer.",
            "A: That's a big change. Is she enjoying it?",
            "U: She says the wind is wild, but she's still teaching maths, so at least that's familiar."]),
    ], ["Cape Town"], ["Durban"]),
    case("move-02", "user", [
        ("2022-09-14", [
            "U: I've been renting a small place in Ghent for three years, right by the canal.",
            "A: That sounds beautiful. Do you cycle everywhere?",
            "U: Mostly, yes. My brother Radek lives in Antwerp and we ride together sometimes."]),
        ("2023-06-20", [
            "U: Can you help me write a change-of-address note? We relocated to Leuven at the start of the month.",
            "A: Of course. Who should the note go to?",
            "U: My bank and my dentist. Radek is thrilled, Antwerp is closer for him now.",
            "A: Here's a short draft you can adapt for both."]),
    ], ["Leuven"], ["Ghent"]),
    case("move-03", "Kazimir", [
        ("2022-04-03", [
            "U: My old friend Kazimir runs a bike repair shop in Krakow.",
            "A: Nice! How did you two meet?",
            "U: At university. He still plays the accordion at every party."]),
        ("2023-01-15", [
            "U: Kazimir called yesterday, he's thinking about leaving Poland.",
            "A: Oh? Does he have somewhere in mind?",
            "U: He wouldn't say, he's just restless. Anyway, how do I descale a kettle?",
            "A: Fill it with equal parts water and white vinegar, boil, leave it an hour, then rinse well."]),
        ("2023-08-22", [
            "U: Kazimir finally did it: he lives in Oslo now and opened a new shop there.",
            "A: Brave move! Is the shop doing well?",
            "U: Early days. He brought the accordion, of course."]),
    ], ["Oslo"], ["Krakow"]),
    case("move-04", "user", [
        ("2022-03-08", [
            "U: I'm based in Bristol, working from home for a design agency.",
            "A: Do you like working from home?",
            "U: Most days. My cat keeps me company."]),
        ("2023-05-30", [
            "U: Quick update: I moved to Cardiff in April for a change of scene. Same job, still remote.",
            "A: How are you finding it?",
            "U: Good, but the flat is tiny."]),
        ("2024-02-18", [
            "U: The tiny flat got to me, so since January I've been living in Swansea, near my parents.",
            "A: Being near family must help.",
            "U: It does. Mum drops off soup every Sunday, and the design agency doesn't mind where I work."]),
    ], ["Swansea"], ["Bristol", "Cardiff"]),
    case("move-05", "Ifeoma", [
        ("2023-03-12", [
            "U: My cousin Ifeoma lives in Lagos and works as an architect.",
            "A: What kind of buildings does she design?",
            "U: Mostly schools. She's very proud of a library she did last year."]),
        ("2024-01-09", [
            "U: Ifeoma has settled in Accra now, she moved over with her husband in December.",
            "A: Is she still designing schools?",
            "U: Yes, her firm opened an office there so she kept her job."]),
    ], ["Accra"], ["Lagos"]),
    case("move-06", "Halvard", [
        ("2022-07-19", [
            "U: My father-in-law Halvard has a farmhouse outside Bergen; we spend summers with him there.",
            "A: That sounds idyllic.",
            "U: It is. He grows rhubarb and keeps bees."]),
        ("2023-07-02", [
            "U: No farmhouse holiday this summer, sadly. Halvard sold it and moved into a flat in Trondheim to be near his doctor.",
            "A: I'm sorry you lose the summer place. Is he well?",
            "U: He's fine, he just wanted less work. He still keeps two beehives on a friend's allotment."]),
    ], ["Trondheim"], ["Bergen"]),
    case("move-07", "user", [
        ("2023-01-21", [
            "U: I've lived in Winnipeg my whole life and it's still a shock when it's minus thirty, like this week.",
            "A: Stay warm! Any plans indoors?",
            "U: Board games with my roommate Anouk."]),
        ("2024-04-14", [
            "U: Guess what, I took the transfer at work, so I don't live in Winnipeg anymore. I'm in Vancouver now!",
            "A: What a change in climate! How do you find the rain?",
            "U: Better than minus thirty. Anouk stayed behind though, I miss our game nights."]),
    ], ["Vancouver"], ["Winnipeg"]),
    case("move-08", "Aurelio", [
        ("2022-10-10", [
            "U: My brother Aurelio lives in Valencia and coaches a youth football team.",
            "A: Does he play himself?",
            "U: Only five-a-side on Thursdays."]),
        ("2023-04-16", [
            "U: We're planning Mum's seventieth. Aurelio will fly in, he's bringing his guitar.",
            "A: Sounds like a fun party. Where will it be?",
            "U: At our place, in the garden, if the weather holds."]),
        ("2023-12-03", [
            "U: Aurelio got an offer he couldn't refuse and made the jump to Seville over the summer.",
            "A: Is he still coaching?",
            "U: He found a new youth team within a week. Typical Aurelio."]),
    ], ["Seville"], ["Valencia"]),
    case("move-09", "Sunniva", [
        ("2023-08-28", [
            "U: My daughter Sunniva starts university in Edinburgh next month, she'll live in halls.",
            "A: Exciting! What is she studying?",
            "U: Marine biology. She's obsessed with seals."]),
        ("2024-09-15", [
            "U: Sunniva transferred this term and now lives in St Andrews, right by the research station.",
            "A: Is she still doing marine biology?",
            "U: Yes, and she's found a colony of seals to study, so she's in heaven."]),
    ], ["St Andrews"], ["Edinburgh"]),

    # ---------------------------------------------------------------- job
    case("job-01", "Oluwaseun", [
        ("2022-11-02", [
            "U: My husband Oluwaseun is a pharmacist at Greenleaf Pharmacy in town.",
            "A: Does he work long shifts?",
            "U: Yes, and every other weekend. He unwinds by baking bread."]),
        ("2023-09-18", [
            "U: Oluwaseun handed in his notice and started at Ashcombe Hospital as a clinical pharmacist last month.",
            "A: Congratulations to him! Does he get weekends off now?",
            "U: He does, so there's even more bread in the house."]),
    ], ["Ashcombe Hospital"], ["Greenleaf"]),
    case("job-02", "user", [
        ("2023-02-06", [
            "U: Long day at the warehouse. I'm a shift supervisor at Halden Logistics.",
            "A: That sounds tiring. What do you do to relax?",
            "U: I play chess online, mostly blitz."]),
        ("2023-10-30", [
            "U: First week done at my new job! I started at Copperline Energy as an operations planner.",
            "A: Congratulations! How does it compare?",
            "U: Way calmer, and I finally get my evenings free for chess."]),
    ], ["Copperline"], ["Halden"]),
    case("job-03", "Teodora", [
        ("2022-05-11", [
            "U: My best friend Teodora teaches violin at a music school in the old town.",
            "A: Does she perform as well?",
            "U: In a string quartet, twice a year."]),
        ("2022-12-20", [
            "U: Teodora's quartet played a Christmas concert last night, it was gorgeous.",
            "A: Sounds magical. What did they play?",
            "U: Mostly Dvorak."]),
        ("2023-06-25", [
            "U: Teodora gave up teaching; these days she's a sound engineer at a recording studio.",
            "A: What a switch! Does she still play?",
            "U: Only with the quartet. She says the studio hours are long but she loves the work."]),
    ], ["sound engineer"], ["music school"]),
    case("job-04", "Nnamdi", [
        ("2023-04-04", [
            "U: My son Nnamdi works as a junior accountant at Brookvale & Sons. He hates the spreadsheets.",
            "A: Does he have other interests?",
            "U: He's a keen rower, out on the river every Saturday."]),
        ("2024-02-12", [
            "U: Nnamdi finally left the office life. He joined the fire service in January and is training as a firefighter.",
            "A: What a change! How is the training going?",
            "U: Tough, but he loves it. Still rowing on Saturdays too."]),
    ], ["firefighter"], ["Brookvale", "accountant"]),
    case("job-05", "user", [
        ("2022-08-08", [
            "U: I work as a barista at Lantern Coffee while I finish my thesis.",
            "A: How is the thesis going?",
            "U: Slowly. It's about medieval trade routes."]),
        ("2023-03-27", [
            "U: I'm not at Lantern Coffee any more, I got a research assistant post in the university history department.",
            "A: Congratulations! Does it connect to your thesis?",
            "U: Directly, I'm mapping trade routes for a professor."]),
    ], ["research assistant"], ["barista", "Lantern"]),
    case("job-06", "Gulnara", [
        ("2022-06-01", [
            "U: My mum Gulnara has worked at the post office for twenty years.",
            "A: That's dedication! Does she like it?",
            "U: She likes the people. She also sings in a choir on Wednesdays."]),
        ("2023-05-14", [
            "U: Mum took early retirement in March and opened a small flower stall at the Saturday market.",
            "A: How lovely. Is it busy?",
            "U: Busy enough. She still sings with the choir midweek."]),
    ], ["flower stall"], ["post office"]),
    case("job-07", "Rustam", [
        ("2023-01-10", [
            "U: My friend Rustam is a chef at a Georgian restaurant called Tamada.",
            "A: What's his signature dish?",
            "U: Khachapuri, the cheese bread. He makes it at home too."]),
        ("2023-07-07", [
            "U: Rustam and I went hiking in the Peak District at the weekend, he's so fit these days.",
            "A: Nice! Which route?",
            "U: Kinder Scout. We got soaked."]),
        ("2024-03-21", [
            "U: Rustam's been teaching cookery at the adult college since the autumn, he got tired of restaurant hours.",
            "A: Does he enjoy teaching?",
            "U: Loves it. His cheese bread class is always full."]),
    ], ["cookery", "college"], ["Tamada"]),
    case("job-08", "user", [
        ("2022-02-14", [
            "U: I work nights as a nurse on the cardiac ward at St Brendan's.",
            "A: Night shifts must be hard. How do you sleep?",
            "U: Blackout curtains and earplugs. My partner Wiremu works days, so we barely overlap."]),
        ("2022-10-03", [
            "U: Wiremu and I finally took a week off together in Rotorua.",
            "A: How was it?",
            "U: Hot springs every day, bliss."]),
        ("2023-06-11", [
            "U: Big change for me: in May I joined the community health team as a district nurse. No more nights!",
            "A: That must be a relief! Do you drive between patients?",
            "U: Yes, I've got a little car and a route around the villages."]),
    ], ["district nurse"], ["cardiac ward"]),
    case("job-09", "Dagny", [
        ("2023-05-05", [
            "U: My aunt Dagny is a ferry captain on the island route.",
            "A: What a job! Does she ever get seasick?",
            "U: Never. She also knits absurd amounts of socks."]),
        ("2024-05-19", [
            "U: Dagny swapped the wheelhouse for a desk: she's been the harbour master since March.",
            "A: Does she miss being at sea?",
            "U: A little, but she says the socks get knitted faster now."]),
    ], ["harbour master"], ["ferry captain"]),

    # ---------------------------------------------------------------- pet_name
    case("pet_name-01", "user", [
        ("2023-03-03", [
            "U: We adopted a rescue greyhound last week. The shelter called him Bolt.",
            "A: Congratulations! How is he settling in?",
            "U: He sleeps twenty hours a day. My daughter Vilja reads to him."]),
        ("2023-04-20", [
            "U: The greyhound has a new name: we call him Pudding now, he's such a softie.",
            "A: That suits a sleepy dog. Does he answer to it?",
            "U: Only when there's food involved. Vilja picked it."]),
    ], ["Pudding"], ["Bolt"]),
    case("pet_name-02", "Saoirse", [
        ("2023-06-06", [
            "U: My flatmate Saoirse got a kitten, she named it Pebble.",
            "A: Cute! What colour is it?",
            "U: Grey with white socks. Saoirse works from home, so they're together all day."]),
        ("2023-06-13", [
            "U: Correction about Saoirse's kitten: her name is Nutmeg, not Pebble. I misheard.",
            "A: Nutmeg is a great name. Is she playful?",
            "U: She attacks shoelaces all day long."]),
    ], ["Nutmeg"], ["Pebble"]),
    case("pet_name-03", "user", [
        ("2022-09-09", [
            "U: My parrot Mango learned to copy the microwave beep.",
            "A: Ha! How old is he?",
            "U: Twelve. He lives in the kitchen with my tortoise, Gus."]),
        ("2023-02-02", [
            "U: Funny story: the vet says my parrot is actually a girl, so we renamed her Marigold.",
            "A: What a surprise! Has she noticed?",
            "U: She ignores it, just like she ignored the old one. Gus doesn't care either."]),
    ], ["Marigold"], ["Mango"]),
    case("pet_name-04", "Eero", [
        ("2023-01-29", [
            "U: My neighbour Eero has a husky called Frost who howls at the trams.",
            "A: Huskies are vocal! Does it bother you?",
            "U: Not really. Eero walks him at six every morning."]),
        ("2023-05-08", [
            "U: Eero's kids insisted, so the husky is now called Blizzard.",
            "A: The kids win again! Does he respond to it?",
            "U: He howls at it, which counts. Eero still does the six o'clock walk."]),
    ], ["Blizzard"], ["Frost"]),
    case("pet_name-05", "user", [
        ("2022-04-22", [
            "U: My hamster is called Crumble, she lives on my desk.",
            "A: Does she keep you up at night?",
            "U: Her wheel squeaks. I'm a translator, so I'm home with her all day."]),
        ("2022-08-30", [
            "U: I translated a whole novel this month, my eyes hurt.",
            "A: Well done! Which language?",
            "U: Portuguese into English."]),
        ("2022-11-14", [
            "U: My nephew kept calling the hamster Sprout, and it stuck, so she's Sprout now.",
            "A: Cute. Does she answer to it?",
            "U: Hamsters don't answer to anything, but we all call her that."]),
    ], ["Sprout"], ["Crumble"]),
    case("pet_name-06", "Yevgenia", [
        ("2023-10-01", [
            "U: My colleague Yevgenia brought her rabbit Kasha to the office for a photo.",
            "A: An office rabbit! How did that go?",
            "U: It chewed a cable. Yevgenia was mortified."]),
        ("2023-10-12", [
            "U: I had the rabbit's name wrong, it's Pirozhok. I must have misheard.",
            "A: Pirozhok is a fun name. What does it mean?",
            "U: A little stuffed bun, Yevgenia says."]),
    ], ["Pirozhok"], ["Kasha"]),
    case("pet_name-07", "user", [
        ("2023-07-15", [
            "U: We brought home a tabby kitten and called him Rocket because he never stops running.",
            "A: Ha! How is he with the furniture?",
            "U: Terrible. My son Jaroslav is building him a climbing tower."]),
        ("2023-09-02", [
            "U: Our tabby has slowed down so much that we changed his name to Pillow.",
            "A: Fitting! Does he use the tower?",
            "U: Only to sleep on the top shelf. Jaroslav is offended."]),
    ], ["Pillow"], ["Rocket"]),
    case("pet_name-08", "Folasade", [
        ("2022-12-12", [
            "U: My friend Folasade adopted a one-eyed terrier named Admiral.",
            "A: Great name for a one-eyed dog!",
            "U: He came with it. Folasade is a dentist, so he has very clean teeth."]),
        ("2023-03-19", [
            "U: Folasade's terrier goes by Nelson these days, her kids thought it was funnier.",
            "A: Ha! Does he mind?",
            "U: Not at all, he just wants treats. Folasade still brushes his teeth every night."]),
    ], ["Nelson"], ["Admiral"]),

    # ---------------------------------------------------------------- preference
    case("preference-01", "user", [
        ("2022-06-18", [
            "U: I'm vegetarian, have been for five years, so no meat suggestions please.",
            "A: Noted! Any favourite cuisines?",
            "U: Indian and Ethiopian. My sister Zainab is a great cook."]),
        ("2023-04-09", [
            "U: Update for recipes: I've started eating fish again, so I'm pescatarian now.",
            "A: Good to know. Shall I suggest a few fish dishes?",
            "U: Yes, something Zainab and I could make together on Sunday."]),
    ], ["pescatarian"], ["vegetarian"]),
    case("preference-02", "Benedikt", [
        ("2022-09-25", [
            "U: My brother-in-law Benedikt is a die-hard Werder Bremen fan, he has season tickets.",
            "A: Does he travel to away games?",
            "U: Sometimes. He's also a surprisingly good pianist."]),
        ("2023-08-13", [
            "U: You won't believe it: Benedikt fell out with his old club over ticket prices and now he supports St Pauli.",
            "A: A bold switch! How did the family react?",
            "U: His dad won't talk football with him. He still plays piano at family dinners."]),
    ], ["Pauli"], ["Werder", "Bremen"]),
    case("preference-03", "user", [
        ("2023-02-25", [
            "U: Climbing is my thing, I'm at the bouldering gym three times a week.",
            "A: Impressive! Any injuries?",
            "U: Sore fingers mostly. My friend Ludovica climbs with me."]),
        ("2023-11-11", [
            "U: I hurt my shoulder in the summer and quit climbing; now I do pottery, it's so calming.",
            "A: Pottery sounds lovely. What have you made?",
            "U: Wonky bowls so far. Ludovica bought one to be kind."]),
    ], ["pottery"], ["bouldering"]),
    case("preference-04", "Marisol", [
        ("2022-07-07", [
            "U: For Marisol's birthday I'll make her favourite, mushroom risotto.",
            "A: Great choice! Would you like a recipe?",
            "U: Yes please. She's turning forty, and she works long days as a vet."]),
        ("2023-07-01", [
            "U: Birthday planning again. These days Marisol's favourite is Thai green curry, she can't get enough of it.",
            "A: Shall I find a curry recipe then?",
            "U: Please, a mild one. She's still at the vet clinic, so dinner will be late."]),
    ], ["green curry"], ["mushroom risotto"]),
    case("preference-05", "Tuva", [
        ("2023-01-08", [
            "U: My flatmate Tuva drinks at least four espressos a day, she can't function without them.",
            "A: That's a lot of caffeine! Does she sleep okay?",
            "U: Badly. She's a radio producer, so early starts."]),
        ("2023-05-21", [
            "U: Tuva's doctor told her to cut out caffeine, so she's switched to rooibos tea.",
            "A: How is she finding it?",
            "U: Headaches for a week, but she sleeps much better. The early starts at the station are easier now."]),
    ], ["rooibos"], ["espresso"]),
    case("preference-06", "Tariq", [
        ("2022-10-16", [
            "U: Dinner with Tariq on Friday. He's a huge carnivore, he'd eat steak every day if he could.",
            "A: A grill restaurant, then?",
            "U: Probably. He's just back from a conference in Madrid."]),
        ("2023-10-22", [
            "U: I need a restaurant for Tariq again. He went vegan in the spring, for his heart.",
            "A: Good for him! Any cuisine he likes?",
            "U: He likes spicy food, so maybe Sichuan."]),
    ], ["vegan"], ["steak", "carnivore"]),
    case("preference-07", "Ximena", [
        ("2023-03-14", [
            "U: My niece Ximena is mad about ballet, she practises every evening.",
            "A: Does she perform?",
            "U: In the school show each spring. She's also top of her class in science."]),
        ("2024-03-30", [
            "U: Ximena announced she's done with dance; skateboarding is her whole world now.",
            "A: That's quite a change! Is she any good?",
            "U: She's fearless. Still top of her science class too."]),
    ], ["skateboarding"], ["ballet"]),
    case("preference-08", "user", [
        ("2022-05-29", [
            "U: I'm in a squash league at the sports club, matches every Tuesday night.",
            "A: Competitive! How are you ranked?",
            "U: Third from the bottom, but I enjoy it. My partner Kaveh comes to watch sometimes."]),
        ("2023-09-09", [
            "U: My knees gave up on me, so I've switched to padel. It's gentler and more social.",
            "A: Padel is growing fast. Do you play doubles?",
            "U: Always doubles. Kaveh even joined in once."]),
    ], ["padel"], ["squash"]),

    # ---------------------------------------------------------------- correction
    case("correction-01", "Odalys", [
        ("2023-05-02", [
            "U: My friend Odalys's birthday is on 14 June, can you remind me to get her a gift?",
            "A: Of course. Any idea what she'd like?",
            "U: Something for her garden, she grows tomatoes. Actually, scratch that date, I just checked her message: her birthday is 19 June.",
            "A: Got it. Should I remind you a week before?",
            "U: Yes please."]),
    ], ["19 June"], ["14 June"]),
    case("correction-02", "user", [
        ("2023-09-04", [
            "U: I have my driving test on Monday, I'm so nervous.",
            "A: You'll do great. Have you been practising?",
            "U: Every evening with my uncle Piet, he's very patient."]),
        ("2023-09-06", [
            "U: I misread the letter, the driving test is actually on Thursday, not Monday. More time to practise!",
            "A: That's a relief. Will you go out with your uncle again?",
            "U: Tonight and tomorrow, yes."]),
    ], ["Thursday"], ["Monday"]),
    case("correction-03", "Jovana", [
        ("2024-01-18", [
            "U: My cousin Jovana works as a midwife in Belgrade.",
            "A: That's demanding work. Does she enjoy it?",
            "U: Sorry, I got that wrong, Jovana is a paediatric nurse. I always confuse her with her sister.",
            "A: No problem. Working with children must be rewarding.",
            "U: She says the kids are the best part."]),
    ], ["paediatric nurse"], ["midwife"]),
    case("correction-04", "Liesel", [
        ("2022-11-27", [
            "U: My pen pal Liesel lives in Graz, she sends me postcards of the mountains.",
            "A: How lovely. How long have you been writing to each other?",
            "U: Ten years! She's a librarian."]),
        ("2022-12-04", [
            "U: I looked at her envelope properly: Liesel lives in Linz. No idea why I kept saying the other city.",
            "A: Easy mistake. Are there mountains near Linz too?",
            "U: Hills and the Danube, she says."]),
    ], ["Linz"], ["Graz"]),
    case("correction-05", "user", [
        ("2023-08-08", [
            "U: Planning meals for the week. Remember I'm allergic to walnuts.",
            "A: Noted. Anything else to avoid?",
            "U: Hmm, correction: my allergy is to cashews, not walnuts. The allergist clarified it last week.",
            "A: Thanks for clarifying. I'll keep cashews out of the plan."]),
    ], ["cashew"], ["walnut"]),
    case("correction-06", "Nikolaj", [
        ("2023-02-19", [
            "U: My dad Nikolaj turns 70 in August and wants a party at the boathouse.",
            "A: How fun. How many guests?",
            "U: About forty. He's a retired ship engineer, so the boathouse makes sense."]),
        ("2023-03-05", [
            "U: Turns out Dad is turning 75 this August. He laughed at me for days for getting his age wrong.",
            "A: Ha! Does that change the party plans?",
            "U: Only the cake candles."]),
    ], ["75"], ["70"]),
    case("correction-07", "Cosmin", [
        ("2023-06-17", [
            "U: Had dinner with Cosmin and his wife Roxana last night, she's a fantastic cook.",
            "A: What did she make?",
            "U: Sarmale, cabbage rolls. Cosmin brought the wine, he runs a little vineyard."]),
        ("2023-06-24", [
            "U: Embarrassing: I've been calling Cosmin's wife by the wrong name. She's Ramona, he told me gently.",
            "A: Easy slip. Did she mind?",
            "U: She laughed it off and sent me home with leftovers."]),
    ], ["Ramona"], ["Roxana"]),
    case("correction-08", "user", [
        ("2024-02-03", [
            "U: My new office is on the fifth floor of the Meridian building.",
            "A: Nice! Is there a good view?",
            "U: Wait, I said that wrong, my desk is on the eighth floor.",
            "A: Even better for the view, I bet.",
            "U: I can see the cathedral from my chair."]),
    ], ["eighth"], ["fifth"]),
    case("correction-09", "Shirin", [
        ("2023-10-07", [
            "U: My friend Shirin bought a second-hand car, a blue Skoda.",
            "A: Good choice! Is she happy with it?",
            "U: Very. She drives to her evening pottery class in it."]),
        ("2023-10-21", [
            "U: Saw Shirin's car today and it's green! I must have misheard when she described it.",
            "A: Ha, easily done. What kind of green?",
            "U: Bottle green, very smart."]),
    ], ["green"], ["blue"]),

    # ---------------------------------------------------------------- relationship
    case("relationship-01", "Fenna", [
        ("2022-08-20", [
            "U: My colleague Fenna just got engaged to her boyfriend Lorcan!",
            "A: Congratulations to them! When's the wedding?",
            "U: Next summer, probably. Fenna is already stressing about seating plans."]),
        ("2023-07-23", [
            "U: Fenna and Lorcan got married last Saturday, I cried through the whole ceremony.",
            "A: How lovely! Was it a big wedding?",
            "U: About a hundred people. The seating plan worked in the end."]),
    ], ["married"], ["engaged"]),
    case("relationship-02", "Makoa", [
        ("2023-02-26", [
            "U: My brother Makoa has been dating a surfer called Nalani for two years.",
            "A: Do they surf together?",
            "U: Every weekend. Makoa also fixes boats for a living."]),
        ("2024-01-14", [
            "U: Makoa has a new girlfriend, a teacher called Ilse. They met at the harbour in October.",
            "A: How exciting. What's she like?",
            "U: Calm and funny. She's already learning to fix boats from him."]),
    ], ["Ilse"], ["Nalani"]),
    case("relationship-03", "user", [
        ("2023-04-23", [
            "U: My boyfriend Tiago and I are going to Lisbon for our anniversary.",
            "A: Lovely! How long have you been together?",
            "U: Three years. He's a sound designer for video games."]),
        ("2023-05-07", [
            "U: We're engaged! Tiago proposed on a tram on our last night in Lisbon.",
            "A: Congratulations! Have you set a date?",
            "U: Not yet, he's swamped finishing a game."]),
    ], ["engaged"], ["boyfriend"]),
    case("relationship-04", "Bettina", [
        ("2022-03-13", [
            "U: My aunt Bettina is married to a fisherman named Gwilym, they live on the coast.",
            "A: Does she go out on the boat?",
            "U: Never, she gets seasick. She paints seascapes instead."]),
        ("2023-03-12", [
            "U: Family news: Bettina and Gwilym divorced last year, very quietly.",
            "A: I'm sorry to hear that. How is she?",
            "U: Honestly, relieved. She's painting more than ever."]),
        ("2023-09-17", [
            "U: Bettina remarried! Her new husband Imre is a retired violin maker.",
            "A: What wonderful news. How did they meet?",
            "U: At her exhibition; he bought three of her seascapes."]),
    ], ["Imre"], ["Gwilym"]),
    case("relationship-05", "Rafferty", [
        ("2022-05-15", [
            "U: My best mate Rafferty is engaged to Delphine, a chef he met at culinary school.",
            "A: That's lovely. Does he cook too?",
            "U: He's a food photographer, so he mostly eats."]),
        ("2023-06-25", [
            "U: Rafferty and Delphine finally got married in June, in a barn in Normandy.",
            "A: Sounds beautiful! Who did the catering?",
            "U: Delphine's old classmates, and Rafferty took the photos himself."]),
    ], ["married"], ["engaged"]),
    case("relationship-06", "Juhani", [
        ("2023-03-19", [
            "U: My dad Juhani has been single since Mum passed; he mostly gardens and does crosswords.",
            "A: It's good that he has hobbies. How often do you see him?",
            "U: Every other weekend."]),
        ("2024-02-25", [
            "U: Dad has a girlfriend! Her name is Oksana, they met at a tango class.",
            "A: That's wonderful news! How does he seem?",
            "U: Ten years younger. He still does the crossword every morning though."]),
    ], ["Oksana"], ["single"]),

    # ---------------------------------------------------------------- schedule
    case("schedule-01", "user", [
        ("2023-01-16", [
            "U: My Spanish class is on Wednesday evenings at the community centre.",
            "A: How far along are you?",
            "U: Beginner, but I can order tapas now."]),
        ("2023-02-27", [
            "U: The community centre moved my Spanish class to Thursday mornings, starting this week.",
            "A: Does the new time suit you?",
            "U: Better, actually. I'm fresher in the morning."]),
    ], ["Thursday"], ["Wednesday"]),
    case("schedule-02", "Uzma", [
        ("2022-10-04", [
            "U: Uzma runs our book club, we meet on the first Sunday of each month at her place.",
            "A: What are you reading this month?",
            "U: A thriller. Uzma is a criminal lawyer, so she picks the plot apart."]),
        ("2023-01-29", [
            "U: Uzma changed the book club to the last Friday of the month, weekends clashed with her kids' swimming.",
            "A: Does that work for everyone?",
            "U: Mostly, and there's wine, so nobody complains."]),
    ], ["last Friday"], ["first Sunday"]),
    case("schedule-03", "user", [
        ("2023-05-07", [
            "U: I see my physiotherapist every Monday at 8am for my knee.",
            "A: How is the knee doing?",
            "U: Slowly improving. My cousin Emeka drives me there."]),
        ("2023-06-04", [
            "U: Emeka bought a new car, a tiny electric thing.",
            "A: Does he like it?",
            "U: He won't stop talking about it."]),
        ("2023-07-02", [
            "U: From next week my physio sessions are on Fridays at 5pm, the clinic changed its hours.",
            "A: Will Emeka still be able to drive you?",
            "U: Yes, he finishes work at four."]),
    ], ["Friday"], ["Monday"]),
    case("schedule-04", "Eskil", [
        ("2023-08-13", [
            "U: My son Eskil has football training every Tuesday after school.",
            "A: What position does he play?",
            "U: He plays in goal, and he's also learning the trumpet."]),
        ("2023-09-10", [
            "U: New term, new timetable: Eskil's training is on Saturday mornings now.",
            "A: Weekend training means early starts!",
            "U: Yes, and trumpet lessons are still on Wednesdays."]),
    ], ["Saturday"], ["Tuesday"]),
    case("schedule-05", "Kenji", [
        ("2024-01-08", [
            "U: My husband Kenji's weekly team stand-up is at 9:30 on Mondays, which ruins our school run.",
            "A: That's awkward timing. Who takes the kids then?",
            "U: Me, and I'm always late for work."]),
        ("2024-02-05", [
            "U: Good news: Kenji's manager pushed the weekly stand-up to 11 o'clock.",
            "A: That should make mornings easier!",
            "U: Much easier, he can do the school run again."]),
    ], ["11"], ["9:30"]),
    case("schedule-06", "Ilkka", [
        ("2022-11-06", [
            "U: My grandson Ilkka has piano lessons every Thursday at four.",
            "A: How's he getting on?",
            "U: He's on grade two. He's also obsessed with dinosaurs."]),
        ("2023-01-22", [
            "U: Ilkka's piano teacher moved his lesson to Mondays at half past five.",
            "A: Does that suit him?",
            "U: He complains, but he goes. Still dinosaur-mad."]),
    ], ["Monday"], ["Thursday"]),
    case("schedule-07", "user", [
        ("2023-03-26", [
            "U: I call my mother every Sunday evening, without fail.",
            "A: That's a lovely habit. How is she?",
            "U: Well, she's just taken up watercolours."]),
        ("2023-06-18", [
            "U: Mum's started a night class, so our weekly call is on Saturday mornings now.",
            "A: What's the class?",
            "U: Astronomy! She's thrilled."]),
    ], ["Saturday"], ["Sunday"]),

    # ---------------------------------------------------------------- status
    case("status-01", "user", [
        ("2022-09-18", [
            "U: My old red Volvo needs new brakes again, that car eats money.",
            "A: How old is it?",
            "U: Eighteen years. I drive it to my allotment every weekend."]),
        ("2023-02-12", [
            "U: I finally sold the old car last month and got a cargo bike instead.",
            "A: A cargo bike! How's the trip to the allotment?",
            "U: Great, the tools fit in the box."]),
    ], ["cargo bike"], ["Volvo"]),
    case("status-02", "Parisa", [
        ("2022-09-30", [
            "U: My daughter Parisa is in her final year of a law degree.",
            "A: Exciting! What does she want to do after?",
            "U: Human rights work. She volunteers at a refugee centre on weekends."]),
        ("2023-07-16", [
            "U: Parisa graduated last week with a first-class law degree! We're so proud.",
            "A: Congratulations to her! What's next?",
            "U: A traineeship in London from September, and she still volunteers at the centre."]),
    ], ["graduated"], ["final year"]),
    case("status-03", "user", [
        ("2023-04-12", [
            "U: I'm halfway through building a wooden canoe in my garage, it's taken a year so far.",
            "A: Amazing. What wood are you using?",
            "U: Cedar strips. My neighbour Wojtek lends me his clamps."]),
        ("2023-09-24", [
            "U: The canoe is finished! I took it out on the lake on Sunday and it floats.",
            "A: Congratulations! Any leaks?",
            "U: One tiny one. Wojtek came along with a bucket, just in case."]),
    ], ["finished"], ["halfway"]),
    case("status-04", "Siddharth", [
        ("2022-01-23", [
            "U: My friend Siddharth is writing up his PhD thesis on bird migration.",
            "A: Fascinating topic. Which birds?",
            "U: Swallows, mostly. He's spent three summers tagging them."]),
        ("2022-10-09", [
            "U: Siddharth and I went to a jazz gig on Friday, first night out in ages.",
            "A: How was the music?",
            "U: Loud and wonderful."]),
        ("2023-04-02", [
            "U: Siddharth has completed his PhD! He passed the viva on Tuesday, so he's Dr Siddharth now.",
            "A: Huge congratulations to him! What's next?",
            "U: A research post tracking swallows again, naturally."]),
    ], ["completed"], ["writing up"]),
    case("status-05", "Vasco", [
        ("2023-05-28", [
            "U: My uncle Vasco has put his house in Faro up for sale, he wants something smaller.",
            "A: Has there been any interest?",
            "U: A few viewings. He's a retired fisherman and spends his days at the harbour."]),
        ("2023-10-15", [
            "U: Vasco's house sold in September, for more than he asked!",
            "A: Great news for him. Has he found a smaller place?",
            "U: He's renting a flat above a bakery while he looks."]),
    ], ["sold"], ["for sale"]),
    case("status-06", "Mirela", [
        ("2022-02-20", [
            "U: My friend Mirela is renovating an old shop on the high street, she wants to run a bakery there.",
            "A: What a project. When does she hope to open?",
            "U: By summer, if the builders behave."]),
        ("2022-06-05", [
            "U: Mirela's bakery opened last Saturday, there was a queue round the block!",
            "A: What a start! What's her best seller?",
            "U: Cardamom buns. She's also teaching her nephew to bake."]),
    ], ["opened"], ["renovating"]),
    case("status-07", "user", [
        ("2023-01-22", [
            "U: I'm doing an evening course in bookkeeping at Wellcroft College, the exams are in June.",
            "A: That's a lot on top of work. How do you manage?",
            "U: Coffee and flashcards. My wife Yolanda quizzes me at dinner."]),
        ("2023-08-20", [
            "U: Results are in: I passed everything, so I'm now a qualified bookkeeper!",
            "A: Congratulations! Will you change jobs?",
            "U: Maybe next year. Yolanda wants to celebrate first."]),
    ], ["qualified"], ["evening course"]),
]
