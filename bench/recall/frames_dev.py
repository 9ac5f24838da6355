"""Content library of the DEV split (we may tune on it).

Topics, wording, slot values and names here share nothing with `frames_test.py` on purpose.
The format is described in README.md ("Frames"); in short:

* a frame has `slots` (slot -> pool name in POOLS, or "@name" for a fresh first name),
  `steps` (each with first-person `say` forms and optional `pair` forms: a prompt by the
  other speaker and a short reply), questions `qs` (c = single / multi / when / ell / now /
  before, `ev` = the steps whose turns are the evidence, `ask` = third-person questions,
  `a` = the answer), optional `tq` (questions with a time phrase `{T}`, for frames that recur),
  `agg` (a question over all recurrences), `anchor` (a phrase other questions can date from),
  `cue` (a topical prompt by the other speaker, never evidence) and `noise` (topical
  distractors: the frame's words in unrelated contexts, said by either speaker).
* in a `say` form given as a list, `~text` is a lead-in by the owner and `>text` a reaction
  by the other speaker, neither of them evidence.
* `[a|b]` picks one alternative; `{*pool}` is a value of the pool no instance uses.
"""

NAMES = [
    ("Sofia", "f"), ("Tomasz", "m"), ("Aiko", "f"), ("Kwame", "m"), ("Ingrid", "f"), ("Rafael", "m"),
    ("Nadia", "f"), ("Oluwaseun", "m"), ("Mei", "f"), ("Henrik", "m"), ("Lucía", "f"), ("Arjun", "m"),
    ("Freya", "f"), ("Dmitri", "m"), ("Amara", "f"), ("Matteo", "m"), ("Yuki", "f"), ("Callum", "m"),
    ("Zainab", "f"), ("Jonas", "m"), ("Esme", "f"), ("Tariq", "m"), ("Bianca", "f"), ("Hamish", "m"),
    ("Leilani", "f"), ("Stefan", "m"), ("Noor", "f"), ("Kofi", "m"), ("Clara", "f"), ("Ravi", "m"),
    ("Astrid", "f"), ("Diego", "m"), ("Keiko", "f"), ("Emeka", "m"), ("Greta", "f"), ("Lars", "m"),
    ("Fatima", "f"), ("Owen", "m"), ("Paloma", "f"), ("Bilal", "m"), ("Rosa", "f"), ("Anton", "m"),
    ("Thandiwe", "f"), ("Finn", "m"), ("Ayesha", "f"), ("Marek", "m"), ("Ines", "f"), ("Kenji", "m"),
    ("Orla", "f"), ("Samir", "m"), ("Dagny", "f"), ("Tobias", "m"), ("Hana", "f"), ("Cormac", "m"),
    ("Valentina", "f"), ("Yusuf", "m"), ("Maren", "f"), ("Pablo", "m"), ("Chiara", "f"), ("Idris", "m"),
    ("Wren", "f"), ("Ludo", "m"), ("Selin", "f"), ("Bram", "m"), ("Aurelie", "f"), ("Nikhil", "m"),
    ("Tove", "f"), ("Gideon", "m"), ("Marisol", "f"), ("Sven", "m"), ("Adaeze", "f"), ("Elias", "m"),
    ("Lotte", "f"), ("Jiho", "m"), ("Ximena", "f"), ("Rhys", "m"),
]

RELATIONSHIPS = ["old university friends", "colleagues", "cousins", "former flatmates",
                 "friends from the same running club", "childhood friends"]

POOLS = {
    # climbing
    "climb_gyms": ["The Crag Room", "Boulder Barn", "Vertical Loft", "Chalk Factory", "Gritstone Hall",
                   "The Undercut", "Pinch Point", "High Tide Walls"],
    "climb_goals": [
        {"v": "the V3 on the overhang", "prompt": "Did you get that V3 on the overhang in the end?", "reply": "Finally! Third go, arms like jelly after"},
        {"v": "the top of the lead wall", "prompt": "So did you make it to the top of the lead wall?", "reply": "All the way up. Didn't look down once"},
        {"v": "the yellow slab route", "prompt": "Any luck with the yellow slab thing you kept falling off?", "reply": "Yep, sent it last session. Pure balance"},
        {"v": "a full campus board ladder", "prompt": "Did you ever manage the whole campus board ladder?", "reply": "Top rung, twice! Fingers are wrecked"},
        {"v": "the roof traverse", "prompt": "Have you done the roof traverse yet or still stuck?", "reply": "Done! Hung upside down like a bat for it"},
    ],
    # knitting
    "garments": [{"v": "jumper", "kind": "sweater"}, {"v": "cardigan", "kind": "sweater"},
                 {"v": "scarf", "kind": "neck warmer"}, {"v": "bobble hat", "kind": "hat"},
                 {"v": "pair of socks", "kind": "footwear"}, {"v": "baby blanket", "kind": "blanket"},
                 {"v": "pair of mittens", "kind": "gloves"}],
    "yarn_colours": ["mustard", "teal", "forest green", "rust orange", "lilac", "charcoal", "oatmeal", "cherry red"],
    "knit_reactions": [
        {"v": "she cried", "reply": "Honestly? Tears. Actual tears"},
        {"v": "wore it straight away", "reply": "Put it on immediately and refused to take it off"},
        {"v": "it was too small", "reply": "Loved it but it's about two sizes too small, oops"},
        {"v": "asked for another one", "reply": "Already asking for a second one in blue lol"},
        {"v": "thought it was shop-bought", "reply": "Thought I'd bought it! Best compliment ever"},
    ],
    # swimming
    "pools": ["Hillcrest Lido", "the Westgate leisure centre", "Marlow Baths", "Kingfisher Aquatic Centre",
              "the Riverside pool", "Elmhurst Baths"],
    "swim_distances": [{"v": "20 lengths", "reply": "Twenty. Without stopping!"},
                       {"v": "a full kilometre", "reply": "The whole kilometre, can you believe it"},
                       {"v": "10 lengths", "reply": "Ten, no float, no stopping"},
                       {"v": "400 metres", "reply": "Four hundred metres. Slow but I did it"},
                       {"v": "50 lengths", "reply": "Fifty. My shoulders are dead"}],
    "swim_strokes": ["front crawl", "breaststroke", "backstroke", "butterfly"],
    # bike
    "bikes": [{"v": "a green Brompton", "kind": "folding bike"}, {"v": "a secondhand Trek road bike", "kind": "road bike"},
              {"v": "a Dutch-style Gazelle", "kind": "city bike"}, {"v": "an orange Cube gravel bike", "kind": "gravel bike"},
              {"v": "a Specialized e-bike", "kind": "electric bike"}, {"v": "a steel Surly tourer", "kind": "touring bike"},
              {"v": "a bright blue fixie", "kind": "single-speed"}],
    "theft_places": ["outside the library", "at the train station", "from the shared garage", "outside the cinema",
                     "from the back yard", "outside work"],
    # online course
    "course_topics": [{"v": "Python for data analysis", "field": "programming"},
                      {"v": "UX design", "field": "design"}, {"v": "digital marketing", "field": "marketing"},
                      {"v": "SQL and databases", "field": "programming"}, {"v": "bookkeeping", "field": "accounting"},
                      {"v": "Spanish for beginners", "field": "languages"}, {"v": "machine learning", "field": "programming"}],
    "course_sites": ["Coursera", "Udemy", "edX", "FutureLearn", "Skillshare", "Khan Academy"],
    "course_projects": [{"v": "a dashboard of bus delays", "reply": "A little dashboard of bus delays in the city"},
                        {"v": "a redesign of a recipe app", "reply": "Redesigned a recipe app, with a clickable prototype"},
                        {"v": "a budget tracker", "reply": "A budget tracker for my own spending, embarrassingly revealing"},
                        {"v": "an analysis of house prices", "reply": "Crunched ten years of house prices for my area"},
                        {"v": "a fake campaign for a bakery", "reply": "A pretend ad campaign for the bakery round the corner"}],
    # brewing
    "brews": [{"v": "an IPA", "kind": "beer"}, {"v": "a ginger kombucha", "kind": "kombucha"},
              {"v": "a dry apple cider", "kind": "cider"}, {"v": "a stout", "kind": "beer"},
              {"v": "elderflower wine", "kind": "wine"}, {"v": "a sour cherry ale", "kind": "beer"},
              {"v": "mead", "kind": "honey wine"}],
    "brew_outcomes": [
        {"v": "the bottles exploded", "reply": "Three bottles exploded in the cupboard. Glass everywhere"},
        {"v": "it tasted like vinegar", "reply": "Vinegar. Pure vinegar. Poured the lot down the sink"},
        {"v": "it came out great", "reply": "Actually delicious?? Shocked myself"},
        {"v": "it was completely flat", "reply": "Flat as a pancake, zero fizz"},
        {"v": "it was far too strong", "reply": "Way too strong, two glasses and I was gone"},
    ],
    # restaurants (recurring)
    "restaurants": [{"v": "Little Saigon", "cuisine": "Vietnamese", "dish": "the pho"},
                    {"v": "Casa Barro", "cuisine": "Mexican", "dish": "the mole"},
                    {"v": "Osteria Nonna", "cuisine": "Italian", "dish": "the cacio e pepe"},
                    {"v": "Hanok House", "cuisine": "Korean", "dish": "the bibimbap"},
                    {"v": "The Spice Route", "cuisine": "Indian", "dish": "the lamb biryani"},
                    {"v": "Sakura Yokocho", "cuisine": "Japanese", "dish": "the ramen"},
                    {"v": "Taverna Kyma", "cuisine": "Greek", "dish": "the grilled octopus"},
                    {"v": "Addis Table", "cuisine": "Ethiopian", "dish": "the injera platter"},
                    {"v": "Le Petit Zinc", "cuisine": "French", "dish": "the duck confit"},
                    {"v": "Bangkok Alley", "cuisine": "Thai", "dish": "the green curry"}],
    # tv (recurring)
    "series": [{"v": "Salt Marsh", "genre": "crime drama"}, {"v": "The Cartographers", "genre": "sci-fi series"},
               {"v": "Night Porters", "genre": "comedy"}, {"v": "Hollow Crown Road", "genre": "period drama"},
               {"v": "Deep Field", "genre": "space thriller"}, {"v": "Paper Lanterns", "genre": "anime"},
               {"v": "The Quiet Coast", "genre": "detective show"}, {"v": "Bad Reception", "genre": "sitcom"},
               {"v": "Iron Orchard", "genre": "fantasy series"}],
    # tabletop
    "rpg_systems": ["Dungeons & Dragons", "Call of Cthulhu", "Pathfinder", "Blades in the Dark", "Mothership"],
    "rpg_characters": [{"v": "a half-orc bard called Grub", "kind": "bard"},
                       {"v": "a gnome wizard named Pip", "kind": "wizard"},
                       {"v": "a tiefling rogue called Vex", "kind": "rogue"},
                       {"v": "a dwarf cleric named Brannoc", "kind": "cleric"},
                       {"v": "an elf ranger called Sylla", "kind": "ranger"}],
    # furniture
    "furniture": [{"v": "a green velvet sofa", "kind": "sofa"}, {"v": "an oak dining table", "kind": "table"},
                  {"v": "a standing desk", "kind": "desk"}, {"v": "a rattan armchair", "kind": "chair"},
                  {"v": "a king-size bed frame", "kind": "bed"}, {"v": "a walnut bookcase", "kind": "bookshelf"}],
    "shops": ["Habitat", "IKEA", "a vintage place on Mill Lane", "John Lewis", "Facebook Marketplace", "Loaf"],
    "delivery_problems": [
        {"v": "it didn't fit through the door", "reply": "Didn't fit through the front door. Had to take the door off its hinges"},
        {"v": "it arrived scratched", "reply": "Massive scratch down one side, sending it back"},
        {"v": "it came with missing screws", "reply": "Half the screws missing, classic"},
        {"v": "it was the wrong colour", "reply": "Wrong colour entirely, grey instead of what I ordered"},
    ],
    # jury duty
    "trials": [{"v": "a burglary", "kind": "theft"}, {"v": "a fraud case", "kind": "fraud"},
               {"v": "a dangerous driving case", "kind": "driving"}, {"v": "an assault case", "kind": "assault"},
               {"v": "a shoplifting case", "kind": "theft"}],
    "verdicts": [{"v": "not guilty", "reply": "Not guilty. Took us two days to agree"},
                 {"v": "guilty", "reply": "Guilty, unanimous in the end"},
                 {"v": "a hung jury", "reply": "Couldn't agree. Hung jury, they'll retry it"}],
    # work project
    "products": ["the new booking app", "the loyalty scheme", "the warehouse scanner system", "the customer portal",
                 "the payroll migration", "the Christmas campaign"],
    # flatmates
    "flatmate_jobs": [{"v": "a nurse", "kind": "works night shifts"}, {"v": "a PhD student", "kind": "is always in the library"},
                      {"v": "a chef", "kind": "comes home at 1am"}, {"v": "a software tester", "kind": "works from home"},
                      {"v": "a drummer", "kind": "practises at odd hours"}, {"v": "a paramedic", "kind": "works twelve-hour shifts"}],
    # insomnia
    "sleep_fixes": [{"v": "magnesium tablets", "reply": "The magnesium, weirdly. Out like a light"},
                    {"v": "a white noise machine", "reply": "White noise machine. Sounds like a fan, works like magic"},
                    {"v": "no phone after ten", "reply": "Banning my phone after ten. Annoyingly effective"},
                    {"v": "a weighted blanket", "reply": "The weighted blanket! Like being hugged by a bear"},
                    {"v": "cutting out coffee after lunch", "reply": "No coffee after lunch. Tragic but it works"}],
    # dentist
    "dental": [{"v": "a root canal", "kind": "procedure"}, {"v": "a wisdom tooth out", "kind": "extraction"},
               {"v": "two fillings", "kind": "fillings"}, {"v": "a crown fitted", "kind": "crown"},
               {"v": "braces fitted", "kind": "braces"}],
    "dentists": ["Dr Okafor", "Dr Lindqvist", "Dr Moreau", "Dr Haddad", "Dr Kowalczyk"],
    # choir
    "choirs": ["the Harbour Voices", "the Gasworks Community Choir", "the St Jude's singers", "Canal Street Chorus",
               "the Northern Lights choir"],
    "voice_parts": [{"v": "alto", "reply": "Alto, apparently. Never knew"}, {"v": "tenor", "reply": "Tenor! Second row"},
                    {"v": "soprano", "reply": "Soprano, top line, terrifying"}, {"v": "bass", "reply": "Bass. Very low. Very rumbly"}],
    "choir_pieces": ["Bohemian Rhapsody", "the Hallelujah chorus", "a Fleetwood Mac medley", "Africa by Toto",
                     "Lean on Me", "a sea shanty mashup"],
    # birding
    "birds": [{"v": "a kingfisher", "kind": "bird"}, {"v": "a red kite", "kind": "bird of prey"},
              {"v": "an otter", "kind": "animal"}, {"v": "a barn owl", "kind": "owl"},
              {"v": "a hoopoe", "kind": "rare bird"}, {"v": "a pair of avocets", "kind": "wading bird"}],
    "bird_places": ["the reservoir", "Minsmere", "the canal towpath", "the old gravel pits", "Rainham Marshes",
                    "the estuary hide"],
    # cinema (recurring)
    "films": [{"v": "Glass Harvest", "genre": "thriller"}, {"v": "The Last Lighthouse", "genre": "drama"},
              {"v": "Moth Season", "genre": "horror film"}, {"v": "Double Espresso", "genre": "rom-com"},
              {"v": "Orbit Nine", "genre": "sci-fi film"}, {"v": "The Tin Crown", "genre": "animated film"},
              {"v": "Low Tide", "genre": "documentary"}, {"v": "Paper Wolves", "genre": "action film"}],
    # football (recurring)
    "teams": [{"v": "Leyton Orient", "score": "2-1"}, {"v": "Brentford", "score": "3-3"},
              {"v": "Hibernian", "score": "0-1"}, {"v": "Bristol Rovers", "score": "1-1"},
              {"v": "Norwich", "score": "4-0"}, {"v": "St Pauli", "score": "2-0"}, {"v": "Celtic", "score": "1-2"},
              {"v": "Wrexham", "score": "3-2"}],
    # tennis
    "rackets": ["a Wilson Blade", "a Babolat Pure Drive", "a secondhand Head racket", "a Yonex Ezone"],
    "tennis_results": [{"v": "won the club ladder match", "reply": "Won! 6-4 in the third"},
                       {"v": "lost in straight sets", "reply": "Got thrashed. Straight sets"},
                       {"v": "retired with cramp", "reply": "Had to stop, cramp in both calves"}],
    # fraud
    "merchants": ["an electronics shop in Lisbon", "a petrol station in Leeds", "some gaming website", "a hotel in Dubai",
                  "an online pharmacy", "a luxury shoe shop"],
    "amounts": ["£340", "£89", "£1,200", "£512", "£60", "£775"],
    # boiler
    "home_faults": [{"v": "the boiler", "kind": "heating"}, {"v": "the washing machine", "kind": "appliance"},
                    {"v": "the fridge-freezer", "kind": "appliance"}, {"v": "the shower pump", "kind": "plumbing"}],
    "repair_costs": ["£180", "£420", "£95", "£650", "£260"],
    # sailing
    "sail_places": ["Poole Harbour", "Lake Windermere", "the Solent", "Loch Lomond", "Rutland Water"],
    "sail_mishaps": [{"v": "capsized", "reply": "Completely capsized. Twice"}, {"v": "fell overboard", "reply": "Went straight over the side lol"},
                     {"v": "ran aground", "reply": "Ran aground on a sandbank, so embarrassing"},
                     {"v": "got hit by the boom", "reply": "The boom got me right on the head"}],
    # astronomy
    "telescopes": ["a Dobsonian", "a little refractor", "a Celestron", "a secondhand Skywatcher"],
    "sky_objects": [{"v": "Saturn's rings", "reply": "Saturn. With the rings! Actual rings"},
                    {"v": "the Andromeda galaxy", "reply": "Andromeda! A fuzzy smudge but still"},
                    {"v": "Jupiter's moons", "reply": "Jupiter and four little moons lined up"},
                    {"v": "the Orion nebula", "reply": "The Orion nebula, all glowy"}],
    # reunion
    "school_jobs": [{"v": "a vet", "kind": "animal doctor"}, {"v": "a pilot", "kind": "flying planes"},
                    {"v": "a priest", "kind": "a vicar"}, {"v": "an MP", "kind": "in parliament"},
                    {"v": "a tattoo artist", "kind": "doing tattoos"}, {"v": "a stand-up comedian", "kind": "doing comedy"}],
    "reunion_years": ["ten-year", "fifteen-year", "twenty-year"],
    # escape room
    "escape_themes": [{"v": "a haunted asylum", "kind": "horror"}, {"v": "a bank heist", "kind": "heist"},
                      {"v": "a submarine", "kind": "submarine"}, {"v": "an Egyptian tomb", "kind": "tomb"},
                      {"v": "a Victorian laboratory", "kind": "lab"}],
    "escape_results": [{"v": "with two minutes to spare", "reply": "Two minutes to spare! Screaming"},
                       {"v": "they didn't get out", "reply": "Nope, time ran out with one lock left"},
                       {"v": "a new record", "reply": "Fastest team this month, we're on the board"}],
    # filler pools
    "snacks": ["crisps", "a flapjack", "leftover pizza", "a banana", "toast", "a whole bag of pretzels",
               "some very sad crackers", "cold noodles", "a custard cream or five"],
    "weathers": ["grey and drizzly", "weirdly warm", "freezing", "windy", "boiling", "foggy", "pouring"],
    "chores": ["the ironing", "my tax return", "the recycling", "defrosting the freezer", "cleaning the oven",
               "sorting the loft", "descaling the kettle", "the laundry mountain"],
    "places": ["the big Tesco", "the post office", "the garden centre", "the GP", "the market",
               "my aunt's", "the pharmacy", "the tip"],
    "podcasts": ["that true crime one", "the history one you sent me", "a cooking podcast", "the football one",
                 "a science podcast", "that interview show"],
    "times": ["11am", "before ten", "by 9", "before noon", "at 7"],
    "apps": ["the bus app", "my banking app", "the new phone update", "the council website", "WhatsApp"],
}

_TAIL_POS = "[| Tell me more!| How are you feeling about it?| Keep me posted.| We need to celebrate!| I want all the details.| You deserve it after the year you've had.| Honestly that's made my day.|]"
_TAIL_NEG = "[| Let me know if you need anything.| That's the last thing you need.| I hope the rest of the week is kinder.| Call me if you want to rant.|]"
_TAIL_NEU = "[| I learn something every day.| You always know these things.| My brother would have opinions.|]"

FILLER = {
    "prefix": ["Honestly, ", "Ok so ", "Tbh ", "Btw ", "Also ", "Lol ", "Right, ", "So ", "Ngl ", "Oh and ", "Ahh ", "Hmm, "],
    "suffix": [" haha", " lol", "!", " 😅", "...", " tbh", " x", " 🙃", ", anyway", " ha", " hehe", "!!"],
    "lowercase_ok": ["went", "got", "saw", "finally", "started", "bought", "tried", "did", "had", "found", "made"],
    "greet": {
        "morning": ["[Morning|Mornin'|Good morning] {O}! [You up?|How's things?|Got a sec?|Sleep ok?|Coffee yet?]",
                    "[Morning|Hey], [sorry it's early|bit early I know] but [are you around?|I have news|quick question first]",
                    "[Morning from|Greetings from] [the bus|my kitchen|a very cold platform|my desk], {O}"],
        "afternoon": ["[Afternoon|Hey] {O}! [How's your day going?|Surviving the day?|Are you on lunch?]",
                      "[Hiya|Hey], [got five minutes?|is now a good time?|how's the afternoon treating you?]",
                      "[Hey|Hi] {O}, [escaping work for a bit|hiding from my inbox] [lol|ha]"],
        "evening": ["[Evening|Hey] {O}! [Long day?|How was today?|You free for a chat?]",
                    "[Hiya|Hey hey] {O}, [finally sat down|finally home|just got in] [after a mad day|and I'm shattered|with a cup of tea]",
                    "[You about?|Are you free?] [I've got a glass of wine and gossip|Need a chat|Been a day]"],
        "any": ["[Hey|Hi|Hiya] {O}! [How's it going?|What's up?|How are you doing?|Long time no speak]",
                "[Hi|Hey] [stranger|you]! [Been ages|Where have you been?]",
                "{O}! [It's been ages|Long time|Finally, a free minute]", "[Hellooo|Heyyy] [{O}|you] [:)|!]",
                "[Hey|Hi], I've been meaning to [message you|catch up|reply to you] for [days|a week|ages]"],
    },
    "greet_reply": ["[Hey!|Hi!|Heyy] [All good here|Not bad at all|Surviving|Tired but ok], [you?|how are you?|and you?]",
                    "[Oh hi!|Ha hello!] [Perfect timing|Was just thinking about you|I was about to message you]",
                    "[Hiya|Hey]! Yeah [I'm around|free now|got a minute|just about], [what's up?|go on]",
                    "[Good, good|Alright], [can't complain|bit frazzled|busy week], [you?|how's things with you?]",
                    "[Hey {O}!|Hi {O}!] [Been a while|Glad you messaged|Yes I'm here]"],
    "close": ["[Right|Ok|Anyway], I [need to|have to|should] [get dinner on|go|sleep|head off|do some actual work]. [Talk soon!|Speak soon x|Later!]",
              "Gotta run, [my bus is here|meeting in five|the oven's beeping|someone's at the door]! [Bye!|Speak later]",
              "[Anyway|Right], [let's catch up properly soon?|let's do a call this week?|we should get dinner soon]",
              "I'm [fading|falling asleep|so tired], [night!|talk tomorrow|speak soon]",
              "Ok [must dash|off I go|that's my break over]. [Love to everyone|Take care|Say hi to everyone]!"],
    "close_reply": ["[Bye!|Later!|Night!|Speak soon|Take care] [x|:)|!|xx]", "[Yes|Definitely|Deal], [let's|do|I'm in]! [Take care|Bye for now|Speak soon]",
                    "Go go go [!|haha|lol]", "[Ha ok|Sure thing|No worries], [night|bye|speak soon] {O}", "[Sleep well|Have a good one|Good luck with it] [x|!]"],
    "react_pos": ["[Oh wow|No way|Amazing|Yesss|Omg], [that's brilliant|love that|so happy for you|that's huge|what a result]!" + _TAIL_POS,
                  "[Ha|Haha], [amazing|brilliant|of course you did|I knew you would|you legend]" + _TAIL_POS,
                  "[Honestly|Genuinely|Seriously] [so good|that's great news|proud of you|that made my day]" + _TAIL_POS,
                  "[Wait|Hold on], [seriously?|really?|actually?] [That's great|Go you|Incredible]!" + _TAIL_POS,
                  "[Love|Loving] this for you [🙂|!|!!]" + _TAIL_POS, "[That's so cool|Nice one|Brilliant], [I'm jealous|tell me everything|I want details]" + _TAIL_POS,
                  "Woo! [About time|Well deserved|Told you it'd work out]" + _TAIL_POS, "[Ooh|Oh nice], [how exciting|that sounds lovely|good for you]" + _TAIL_POS],
    "react_neg": ["[Oh no|Ugh|Oh god], [that's rubbish|I'm so sorry|what a pain|that's the worst]" + _TAIL_NEG,
                  "[Noooo|Oh no|Argh]. [Are you ok?|That sucks|How annoying]" + _TAIL_NEG,
                  "[That's awful|What a nightmare|Rubbish luck], [hope it gets sorted|fingers crossed it improves|let me know if I can help]" + _TAIL_NEG,
                  "[Ugh|Oof], [poor you|sending hugs|that's grim]" + _TAIL_NEG, "[Yikes|Oh man]. [That's so stressful|Not what you needed|What a week]" + _TAIL_NEG],
    "react_neutral": ["[Huh|Ha], [interesting|fair enough|didn't know that]" + _TAIL_NEU, "[Oh really?|Oh yeah?] [I didn't know that|Funny|Never heard of that]" + _TAIL_NEU,
                      "[Makes sense|Fair], [I guess|honestly|when you think about it]" + _TAIL_NEU, "[Lol|Haha] [true|yeah|fair]" + _TAIL_NEU,
                      "Hm, [never thought about it|maybe|I'm not sure about that]" + _TAIL_NEU, "[Wild|Mad], [isn't it|honestly|but true]" + _TAIL_NEU,
                      "[Yeah|Yep], [same|I've heard that too|my sister says the same]" + _TAIL_NEU, "[Ha|Lol] that's [very you|so random|hilarious]" + _TAIL_NEU],
    "ack": ["[Thanks|Cheers]! [It's been a week|Still processing|I'm still buzzing]", "[Ha|Haha] yeah [I know|tell me about it|it's a lot]",
            "[Right?|I know!|Exactly!]", "[Thank you|Ta|Aw thanks] [x|:)|!]", "[Yeah|Mm], [we'll see|one day at a time|fingers crossed]"],
    "backchannel": ["Mm", "Go on", "Yeah?", "Oh?", "And?", "Hmm", "Ooh", "Right"],
    "cue": ["[So|Anyway|Ok], [what's new with you?|any news?|what's going on in your world?]", "How've you been [keeping|doing] [lately|these days]?",
            "[Tell me|Ok tell me] something [good|fun|that isn't about work]", "What have you been up to [lately|this week|since we last spoke]?",
            "[So|Anyway], how's life [treating you|over there]?"],
    "smalltalk": [
        ["It's been {*weathers} all week here", "[Same here|Ugh, same], I [keep forgetting|never remember] my umbrella [and I'm paying for it|like an idiot]"],
        ["Did you watch [the match|the news|that documentary about octopuses|the final] last night?", "[No|Nah], fell asleep on the sofa at [nine|half eight] [lol|like an old person|with the telly on]"],
        ["I'm so behind on {*chores}, it's [getting silly|embarrassing|been weeks]", "[Honestly|Same], {*chores} has been [staring at me|on my list] since [March|Christmas|forever]"],
        ["Just had {*snacks} for [lunch|dinner|breakfast], [living the dream|very balanced|peak adulthood]", "[Ha|Lol] sounds about right, I had {*snacks}"],
        ["Have you been listening to anything good? I'm [on|hooked on|halfway through] {*podcasts}", "[Not really|Only music|Just the radio], I need [recommendations|something for the commute]"],
        ["{*apps} [has crashed again|logged me out again|is driving me mad] [today|this week|for the third time]", "[Classic|Of course it has|Typical]. [Turn it off and on again?|Delete it and reinstall?]"],
        ["Went to {*places} [this morning|at lunch|after work] and the queue was [out the door|ridiculous|twenty people deep]", "On a [Saturday|weekday|Monday]? [Brave|Mad|Rookie mistake]"],
        ["My [downstairs|upstairs|next-door] neighbour has started [learning the trumpet|hoovering at midnight|hosting parties on Tuesdays]", "[Noooo|Oh no|Haha]. [Earplugs?|Have you said anything?|Have you knocked?]", "[Not yet|Too scared|Tomorrow maybe], I'm a [coward|wimp]"],
        ["I need a holiday [so badly|desperately|more than ever]", "[Don't we all|Same|Tell me about it]. [Even a long weekend would do|Somewhere with sun|Anywhere with a beach]"],
        ["[Is it just me|Am I imagining it] or is everything getting more expensive [every week|by the day]", "[It's not just you|Nope], a coffee near me is [nearly four quid|£3.90|£4.20] now"],
        ["I [accidentally|somehow] stayed up until [two|3am|half one] [scrolling|watching videos of people restoring old tools|reading Wikipedia]", "Ha, [we've all been there|classic|the internet is a trap]"],
        ["Random but do you still have that [green|blue|stripy] [umbrella|jumper|casserole dish] I lent you?", "[Oh god|Um|Ah], [maybe?|I'll look|definitely somewhere], I think it's in [my car|the loft|the cupboard]"],
        ["Is it [a bank holiday|bin day|payday] [this week|on Monday|on Friday]?", "[I think so|No idea|Don't think so], I'd be lost without my [phone|calendar|work rota]"],
        ["[Still|So] knackered from the weekend", "[Heavy one?|What did you get up to?|Good knackered or bad knackered?]", "[Nothing exciting|Just too many late nights|Two birthdays and a christening], honestly"],
        ["My phone is on [3%|4%|2%|1%] so if I vanish that's why", "Noted [ha|lol|, go charge it]"],
        ["[Had the weirdest dream|Dreamt] that we were [back at school doing exams|on a game show|running a café together]", "[Lol|Ha] [the classic one|amazing], [did we win?|how did it end?]"],
        ["[Do you|Did you ever] use [that meal kit thing|the veg box scheme|one of those grocery apps]?", "[Tried it once|Once|For a month], way too much [packaging|cardboard|faff] for me"],
        ["The [bins|recycling|food waste] didn't get collected again", "[Again?!|Third time|Seriously?], you should [ring the council|complain|tweet them]"],
        ["[I finally|Finally] cleaned my [car|windows|keyboard|fridge] and it was [disgusting|horrifying|very satisfying]", "[Ha|Ew|Lol], [the satisfaction though|proud of you|don't tell me details]"],
        ["Are you doing anything this [weekend|bank holiday|Friday]?", "[Not much|Nothing planned|Absolutely nothing], probably {*chores} [sadly|ha|and a nap]"],
        ["I've started going to bed at [ten|half nine] like a [grandma|grandad|toddler] and honestly I love it", "[Ha|Lol], welcome to the club, we have [cocoa|slippers|audiobooks]"],
        ["I [bought|ordered] a new [kettle|toaster|lamp|hoover] and it's [so loud|tiny|brilliant|the wrong colour]", "[Ha|Oh], [pics|the excitement of adult life|what a thrill]"],
        ["The trains [are on strike|were cancelled|were delayed by an hour] [again|this morning|today]", "[Nightmare|Ugh|Classic], did you get in [ok|at all|on time]?", "[Eventually|Worked from home in the end|Got a lift from a colleague], [so that's something|just about]"],
        ["I keep meaning to [get a haircut|book the optician|renew my passport|sort my pension]", "[Same|Ha], it's been on my list for [about six months|a year|ages]"],
        ["Do you think it's too early to [put the heating on|start wearing a big coat|get the Christmas lights out]?", "[Never too early|Depends how stubborn you are|Yes, hold out till November]"],
        ["What are you having for dinner [tonight|later]?", "[Pasta, obviously|Something with eggs|Whatever's in the fridge|Beans on toast], you?", "[Probably toast|Takeaway if I'm honest|Leftover curry]"],
        ["[Sorry|Apologies] I went quiet [earlier|yesterday|for a few days], it's been [hectic|chaos|a lot]", "No worries at all, [same here|I'm terrible too|I figured]"],
        ["I found [a fiver|£20|a tenner] in an old coat pocket [today|yesterday|this morning]", "[Best feeling|Jackpot|Treat yourself]!"],
        ["[My mum|My dad|My aunt] has discovered [voice notes|emoji|memes] and sends me [ten a day|one every hour|essays]", "[Ha|Lol|Amazing], mine sends [blurry photos of the garden|chain messages|thumbs up to everything]"],
        ["Got stuck behind a tractor for [twenty minutes|half an hour|ages] on the way [home|to work]", "[Ha|Lol], the countryside experience"],
        ["[Someone|A man] on the bus was [eating a whole roast chicken|clipping his nails|on speakerphone] [at 8am|this morning]", "[Nooo|Gross|Why are people like this]"],
        ["I did a [5k|little run|yoga video] this morning and now I'm [insufferable|smug|broken]", "[Ha|Lol] [good for you|I did a lie-in instead]"],
        ["The supermarket has moved everything [around|to different aisles] again", "They do it on purpose so you buy more [stuff|biscuits]"],
        ["Do you remember that [café|pub|chippy] near [the station|the old office|uni]? It's closed", "[No way|Noooo|End of an era], they did the best [chips|bacon rolls|flat whites]"],
        ["[Thinking|Wondering] whether to [paint my nails|dye my hair|grow a beard] [for the summer|just for fun]", "[Do it|Go for it|Why not], life is short"],
        ["I [spent|wasted] [an hour|forty minutes|all morning] on hold to [the bank|the energy company|the council] [today|yesterday]", "[Ugh|The worst|Nightmare], did they sort it?", "[Nope|Sort of|Cut me off at the end]"],
        ["My [plants|houseplants|herbs] are all dying [again|slowly|in solidarity with me]", "[Too much water?|Not enough light?|Talk to them, apparently it helps]"],
        ["Just realised it's [Wednesday|Thursday|Friday] already", "[Where does the week go|This week has flown|Thank god]"],
        ["I [signed up|agreed] to a [pub quiz|work raffle|neighbourhood watch] and I don't know why", "[Ha|Lol] peer pressure, we love it"],
        ["My [back|neck|knee] is [killing me|so stiff|clicking] from sitting at the desk all day", "[Get a better chair|Stretch!|Same, we're falling apart]"],
        ["Have you booked anything for [the summer|Easter|the long weekend] yet?", "[Not yet|Nope|Thinking about it], everything is [so expensive|booked up|a faff]"],
        ["I ate [three|four|five] [biscuits|mince pies|doughnuts] before {*times} today", "[Respect|No judgement|Honestly a good start]"],
        ["The [wifi|internet|broadband] has been [awful|dropping out|so slow] [all day|since Monday|this week]", "[Ugh|Ours too|Classic], ring them and threaten to leave"],
        ["[Saw|Spotted] a [fox|hedgehog|massive spider] in the [garden|kitchen|hallway] [last night|this morning]", "[Aww|Eek|Nooo], [did you take a photo?|what did you do?]"],
        ["I need new [trainers|jeans|headphones] but I hate shopping", "Just order [three pairs|a few] and send back what doesn't fit"],
        ["Can't believe it's been [a year|two years|five years] since [the leaving do|that festival|we went to Cornwall]", "[I know|Madness|Time flies], we need to do it again"],
        ["My [car|bike|laptop] is making a [weird noise|clicking sound|grinding noise] [again|lately]", "[Uh oh|That's never good|Ignore it and it'll go away, obviously]"],
        ["[Work|The office] is [so quiet|mental|a zoo] [this week|today]", "[Enjoy it|Hang in there|Same here honestly]"],
        ["I [tried|made] [banana bread|a curry|soup] from a recipe {*times} and it was [fine|edible|a disaster]", "[Ha|Lol], [send me some|you tried]"],
        ["Parking at [the hospital|the station|the shopping centre] is [£8|£12|£6.50] now, [criminal|a scandal]", "[Outrageous|Mad], I always get the bus there"],
        ["So [my landlord|the letting agent] finally sent someone about the [damp|leak|broken window] and the guy [took one look, said 'ah' and left|spent ten minutes photographing it and then asked me if I'd tried opening a window], so [I'm none the wiser|that's another month of buckets], [brilliant|great]", "[Classic|Oh no|Of course], [landlords are the worst|chase them in writing]"],
        ["[Honestly|Genuinely] the [office|team] [kitchen|fridge] situation has got so bad that someone has started [labelling their milk with threats|leaving passive-aggressive post-its on the microwave|locking their lunch in a drawer], and I [can't tell if I'm horrified or impressed|kind of respect it]", "[Ha|Lol], [I need photos|workplace warfare|that's brilliant]"],
        ["[Went|I went] to [a wedding|my cousin's christening|a retirement do] at the weekend and the [DJ|vicar|speeches] [played the Macarena three times|went on for forty minutes|were mostly about golf], [so that was an experience|I'm still recovering|and I loved every minute]", "[Ha|Haha], [the Macarena never dies|sounds like a proper family do]"],
        ["[My mum|My dad] rang to ask how to [attach a photo to an email|turn off caps lock|unmute herself on a video call] and we were on the phone for [forty minutes|an hour|half the evening] and in the end [she decided to post it instead|I drove round there|we gave up]", "[Aww|Ha], [bless|the tech support life|we've all been there]"],
        ["[I've been trying|Trying] to [cut down on caffeine|drink more water|walk 10,000 steps a day] and so far it's going [terribly|about as well as you'd expect|surprisingly ok], I've [had three coffees already|done 2,000 steps|mostly just thought about it] and it's [not even lunchtime|already 4pm]", "[Ha|Baby steps|Lol], [it's the thought that counts|tomorrow's another day]"],
        ["[The|Our] [street|building] group chat [has been arguing for three days|is at war again] about [a parking space|who left a sofa by the bins|the hedge at number twelve], and honestly it's [better than anything on telly|the most gripping thing in my life right now]", "[Ha|Lol], [keep me updated|I need the full saga|screenshots please]"],
        ["[Had to|I had to] [do a presentation|run a training session|give a toast] [today|yesterday] and [the projector died halfway|my slides wouldn't load|I forgot everyone's names], so I just [talked with my hands for twenty minutes|winged it|told jokes], and [people said it was the best one yet|somehow it went fine]", "[Ha|Legend|Nice], [winging it is a skill|the best ones are improvised]"],
        ["[So random|Random one] but I [found|dug out] [my old school reports|a box of photos from uni|my first ever mobile] [in the loft|at my parents'] and [apparently I 'talk too much in class'|my haircut in 2009 was a crime|it still had my old texts on it], [nothing has changed|what a time capsule]", "[Ha|Lol], [send pics immediately|I'd pay to see those]"],
    ],
}

FRAMES = [
    # ------------------------------------------------------------------ climbing
    dict(
        id="climbing",
        slots={"gym": "climb_gyms", "buddy": "@name", "goal": "climb_goals"},
        anchor="{he} took up bouldering",
        steps=[
            dict(k="start", say=[
                "Bouldering {ago} at {gym}! {buddy} dragged me. Arms [toast|destroyed]",
                ["~So I did a thing {ago}", ">Go on...", "Tried bouldering at {gym}. {buddy} made me. I'm obsessed already"],
                "{buddy} took me bouldering at {gym} {ago}",
                "Guess who's a climber now. Did an intro session at {gym} {ago} with {buddy}",
            ]),
            dict(k="goal", gap=[2, 5], say=[
                "Finally did {goal} {ago}. Took me weeks",
                "Small win: {goal}, done, finally. Felt like flying",
            ], pair=[["{goal.prompt}", "{goal.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Which climbing gym does {N} go to?", "Where does {N} climb?"], a="{gym}"),
            dict(c="single", ev=["start"], ask=["Who got {N} into the sport {he} started at the wall?", "Who introduced {N} to climbing?"], a="{buddy}"),
            dict(c="when", ev=["start"], ask=["When did {N} first try climbing?", "When was {N}'s first session at the climbing wall?"]),
            dict(c="ell", ev=["goal"], ask=["What did {N} finally manage at the climbing wall?", "Which climbing challenge did {N} eventually conquer?"], a="{goal}"),
            dict(c="multi", ev=["start", "goal"], ask=["Where was {N} when {he} finally pulled off the climb {he}'d been working on?"], a="{gym}"),
        ],
        cue=["Still going to the wall?", "How's the climbing?"],
        noise=[
            "My [nephew|niece] wants a climbing party for [his|her] birthday, is that [insane|a liability]?",
            "There's a documentary about free solo climbers on tonight, my palms sweat just thinking about it",
            "Someone at work broke their wrist [climbing|at a climbing gym], so that's me never trying it",
            "Do you think the climbing wall at the leisure centre is any good? Never been",
            "I watched people bouldering through the window at {*climb_gyms}, looked [terrifying|fun honestly]",
        ],
    ),
    # ------------------------------------------------------------------ knitting
    dict(
        id="knitting",
        slots={"garment": "garments", "colour": "yarn_colours", "reaction": "knit_reactions"},
        steps=[
            dict(k="start", say=[
                "I've cast on a {garment} for {sib}'s birthday. {colour} merino, wish me luck",
                ["~New project alert", "{Colour} {garment} for my {sib.rel}. Only dropped three stitches so far"],
                "Knitting {sib} a {garment}, in {colour}. It's going to take forever",
                "Bought all the wool for a {garment} for {sib}. Went with {colour}, hope {sib.he} likes it",
            ]),
            dict(k="gift", gap=[2, 5], say=[
                "Gave {sib} the {garment} {ago} and {reaction.reply}",
                "Handed it over {ago}! Verdict: {reaction.v}",
            ], pair=[["Did {sib} like the {garment}??", "{reaction.reply}"],
                     ["So how did the big reveal go with {sib}?", "{reaction.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What is {N} making by hand for {his} {sib.rel}?", "What item of clothing did {N} make for a sibling?"], a="a {garment}"),
            dict(c="single", ev=["start"], ask=["What colour yarn did {N} choose for the present?", "Which shade did {N} pick for the handmade present?"], a="{colour}"),
            dict(c="ell", ev=["gift"], ask=["How did {N}'s {sib.rel} react to the handmade present?", "What was {sib}'s response to {N}'s gift?"], a="{reaction}"),
            dict(c="when", ev=["gift"], ask=["When did {N} give {his} {sib.rel} the homemade present?"]),
            dict(c="multi", ev=["start", "gift"], ask=["How did the person {N} knitted for react, and what did {he} make?"], a="{reaction}; a {garment}"),
        ],
        cue=["How's the knitting coming along?"],
        noise=[
            "My gran used to make everyone hideous jumpers every Christmas, I miss them now",
            "Saw a {*yarn_colours} cardigan in a shop window for £120, who is paying that",
            "There's a craft shop opening on the high street, all wool and buttons",
            "Honestly handmade presents are the best ones, I still have a scarf from school",
            "I tried crochet once. Once. [Never again|It looked like a fishing net]",
        ],
    ),
    # ------------------------------------------------------------------ swimming
    dict(
        id="swimming",
        slots={"pool": "pools", "distance": "swim_distances", "stroke": "swim_strokes"},
        anchor="{he} started swimming lessons",
        steps=[
            dict(k="start", say=[
                "Confession: I never learned to swim properly, so I've signed up for adult lessons at {pool}",
                ["~Don't laugh", "I'm doing beginner swim classes. At {pool}, with a bunch of other adults who also panic in the deep end"],
                "First adult swim class {ago} at {pool}. I swallowed half the water",
                "Booked a block of lessons at {pool}. Thirty-odd and learning to swim, why not",
            ]),
            dict(k="milestone", gap=[2, 5], say=[
                "Did {distance} of {stroke} {ago}! No stopping, no floats",
                ["~Massive news", "{distance}. {Stroke}, in one go. {ago}. I nearly cried in the changing room"],
                "The instructor says my {stroke} is finally decent, and I managed {distance} {ago}",
            ], pair=[["How many lengths can you do now?", "{distance.reply}"],
                     ["So how far did you get in the pool this week?", "{distance.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Where is {N} taking lessons in the water?", "Which leisure venue does {N} go to for lessons?"], a="{pool}"),
            dict(c="when", ev=["milestone"], ask=["When did {N} hit {his} swimming milestone?", "When did {N} reach {his} big goal in the water?"]),
            dict(c="ell", ev=["milestone"], ask=["How far could {N} swim without stopping?", "What distance did {N} manage in the water?"], a="{distance}"),
            dict(c="multi", ev=["start", "milestone"], ask=["How far did {N} get in the water after signing up for lessons, and where?"], a="{distance}, at {pool}"),
        ],
        cue=["How's the swimming going?"],
        noise=[
            "The lido near me is closing for repairs [again|all summer], typical",
            "Did you know loads of adults can't swim? Read an article about it",
            "My [flatmate|cousin] does open-water swimming in the winter. Madness",
            "Kids were doing swimming lessons at {*pools} and the noise was unreal",
            "I hate the smell of chlorine, it gets in everything",
        ],
    ),
    # ------------------------------------------------------------------ bike (update)
    dict(
        id="bike",
        slots={"bike1": "bikes", "bike2": "bikes", "place": "theft_places"},
        shareable=False,
        anchor="{he} bought {bike1}",
        steps=[
            dict(k="first", say=[
                "Bought {bike1} {ago}! Cycling to work from now on",
                ["~Treated myself", "{bike1}. Got it {ago}, already named it"],
                "Picked up {bike1} from a guy on Gumtree {ago}, [bargain|absolute steal]",
            ]),
            dict(k="second", gap=[3, 8], mood="-", say=[
                "Bike got nicked {place}. Replaced it with {bike2}",
                ["~Worst week", "Bike stolen {place}. Bought {bike2}"],
                "Stolen {place}! Got {bike2} now, two locks",
            ]),
        ],
        qs=[
            dict(c="now", ev=["second"], ask=["What does {N} ride these days?", "What is {N}'s current bicycle?"], a="{bike2}"),
            dict(c="before", ev=["first", "second"], ask=["What bicycle did {N} have before the theft?", "Which bike did {N} own before {bike2}?"], a="{bike1}"),
            dict(c="single", ev=["second"], ask=["Where was {N}'s bicycle taken from?", "Where did the thief strike?"], a="{place}"),
            dict(c="when", ev=["first"], ask=["When did {N} buy {his} first bicycle in the chat?"]),
        ],
        cue=["How's the bike commute?"],
        noise=[
            "A guy on a bike nearly took me out on the pavement [this morning|yesterday]",
            "They're putting new cycle lanes in near the station, total chaos",
            "Bike theft is so bad round here, my neighbour lost two in a year",
            "I saw {*bikes} locked up outside the café and had serious envy",
            "Do you think electric scooters should be allowed on the road?",
        ],
    ),
    # ------------------------------------------------------------------ online course
    dict(
        id="course",
        slots={"topic": "course_topics", "site": "course_sites", "project": "course_projects"},
        anchor="{he} enrolled in the online course",
        steps=[
            dict(k="start", say=[
                "I've enrolled in a {topic} course on {site}, two evenings a week",
                ["~Trying to be productive", "Signed up for {topic} on {site}. Let's see if I stick with it"],
                "Started a {site} course {ago}, {topic}. Homework already, help",
            ]),
            dict(k="project", gap=[2, 6], say=[
                "Handed in my final project {ago}! {project.reply}",
                "Final assignment's done: {project}. Certificate incoming",
            ], pair=[["What did you end up building for the final thing?", "{project.reply}"],
                     ["So what was your capstone in the end?", "{project.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What subject is {N} studying online?", "What is {N} learning in {his} evening classes on the internet?"], a="{topic}"),
            dict(c="single", ev=["start"], ask=["Which e-learning platform is {N} using?"], a="{site}"),
            dict(c="ell", ev=["project"], ask=["What did {N} create for the end of {his} class?", "What was {N}'s capstone?"], a="{project}"),
            dict(c="when", ev=["project"], ask=["When did {N} submit {his} last assignment?"]),
            dict(c="multi", ev=["start", "project"], ask=["Which website hosted the class where {N} made {project.v}?"], a="{site}"),
        ],
        cue=["How's the course going?"],
        noise=[
            "My company keeps pushing these online training modules, they're so dull",
            "Is {*course_sites} any good? Someone at work swears by it",
            "I bought a course on {*course_topics} three years ago and never opened it lol",
            "Everyone's doing certificates these days, do employers even care?",
            "My [brother|sister] did a coding bootcamp and now earns more than me",
        ],
    ),
    # ------------------------------------------------------------------ home brewing
    dict(
        id="brewing",
        slots={"brew": "brews", "outcome": "brew_outcomes"},
        steps=[
            dict(k="start", say=[
                "Started my first batch of {brew} in the airing cupboard {ago}",
                ["~New hobby", "Home-brewing! {brew}, it's bubbling away in a bucket in the kitchen"],
                "I bought a brewing kit and put on {brew}. Flat smells like a pub",
            ]),
            dict(k="taste", gap=[1, 3], say=[
                "Opened the first bottle {ago} and {outcome.v}",
                "The verdict on my brew: {outcome.reply}",
            ], pair=[["Have you tried your homemade stuff yet?", "{outcome.reply}"],
                     ["So?? How did the batch turn out?", "{outcome.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What drink is {N} making at home?", "What kind of booze did {N} try to produce {himself}?"], a="{brew}"),
            dict(c="ell", ev=["taste"], ask=["How did {N}'s homemade drink turn out?", "What happened when {N} sampled {his} first homemade batch?"], a="{outcome}"),
            dict(c="when", ev=["start"], ask=["When did {N} set up {his} first fermentation?"]),
            dict(c="multi", ev=["start", "taste"], ask=["What was {N} brewing, and how did it end up?"], a="{brew}; {outcome}"),
        ],
        noise=[
            "My uncle made wine in his garage in the 90s and it made everyone ill",
            "There's a craft beer place opening near the station, twelve taps",
            "I don't really get kombucha, it tastes like fizzy vinegar to me",
            "Bought a six-pack of some local IPA and it was [amazing|awful]",
            "Someone at work brought homemade cider to the party, lethal stuff",
        ],
    ),
    # ------------------------------------------------------------------ restaurants (recurring)
    dict(
        id="restaurant",
        slots={"rest": "restaurants", "who": "@name"},
        repeat=True,
        steps=[
            dict(k="visit", say=[
                "{rest} with {who} {ago}. {Rest.dish}, [unreal|wow]",
                ["~Found a new favourite", "{rest}! {Rest.cuisine} place near the canal. {who} and I had {rest.dish}"],
                "Tried {rest} with {who} {ago}. {Rest.dish}!",
                "{who} took me to {rest} {ago}. {Rest.dish} 🤤",
            ]),
        ],
        qs=[
            dict(c="single", ev=["visit"], ask=["What did {N} order at {rest}?", "Which dish did {N} rave about at {rest}?"], a="{rest.dish}"),
        ],
        tq=dict(ev=["visit"], ask=["Where did {N} eat out {T}?", "Where did {N} have dinner out {T}?", "{T}, which eatery did {N} try?"], a="{rest}"),
        agg=dict(ev=["visit"], ask=["Which eateries has {N} tried?", "Name the places {N} has been out to eat."], item="{rest}"),
        noise=[
            "I really want to try {*restaurants} but you have to book weeks ahead",
            "Restaurant prices are mad now, twenty quid for a main",
            "Did you see that review of {*restaurants}? Brutal",
            "My [dad|mum] refuses to eat anything spicy, eating out with [him|her] is hard",
            "Honestly a takeaway on the sofa beats a fancy dinner most nights",
        ],
    ),
    # ------------------------------------------------------------------ tv (recurring)
    dict(
        id="series",
        slots={"show": "series"},
        repeat=True,
        steps=[
            dict(k="watch", say=[
                "Binged all of {show} {ago}. Best {show.genre} in years. Zero regrets, some regrets",
                ["~Need to tell you about my new obsession", "{show}. It's a {show.genre}. Watched four episodes last night"],
                "Have you seen {show}? {Show.genre}, started it {ago} and I'm hooked",
                "Finished {show}, what a ending. Proper {show.genre} done right",
            ]),
        ],
        qs=[
            dict(c="single", ev=["watch"], ask=["What genre is {show}, the one {N} got hooked on?"], a="{show.genre}"),
        ],
        tq=dict(ev=["watch"], ask=["What programme was {N} glued to {T}?", "Which programme was {N} hooked on {T}?"], a="{show}"),
        agg=dict(ev=["watch"], ask=["Which TV programmes has {N} raved about?", "What shows has {N} mentioned watching?"], item="{show}"),
        noise=[
            "Everyone at work is talking about {*series} and I refuse to watch it",
            "I've got too many streaming subscriptions, cancelling two this month",
            "Do you ever rewatch the same old show over and over? I'm on my fifth run",
            "The TV in the pub was showing some cooking programme with the sound off",
            "Spoilers everywhere online, I had to mute half the internet",
        ],
    ),
    # ------------------------------------------------------------------ tabletop rpg
    dict(
        id="tabletop",
        slots={"system": "rpg_systems", "character": "rpg_characters", "host": "@name"},
        steps=[
            dict(k="join", say=[
                "I've joined a {system} group! {host} runs it every other Thursday",
                ["~Nerd confession", "Started playing {system} with {host}'s group. Snacks, dice, the lot"],
                "First {system} session {ago} at {host}'s flat. Four hours vanished",
            ]),
            dict(k="char", gap=[0, 3], say=[
                "My character is {character}, and I'm weirdly attached",
                "Made my character for the campaign: {character}",
            ], pair=[["What are you playing as?", "{Character.v}. Obviously"],
                     ["So who's your character?", "{Character.v}, chaotic good"]]),
        ],
        qs=[
            dict(c="single", ev=["join"], ask=["Which role-playing game does {N} play?", "What tabletop game did {N} start on Thursdays?"], a="{system}"),
            dict(c="single", ev=["join"], ask=["Who hosts the game nights {N} goes to?", "Who is the game master of {N}'s group?"], a="{host}"),
            dict(c="ell", ev=["char"], ask=["What character does {N} play in the campaign?", "Who is {N}'s alter ego at the gaming table?"], a="{character}"),
            dict(c="when", ev=["join"], ask=["When did {N} start the role-playing campaign?"]),
        ],
        noise=[
            "My [little brother|cousin] is obsessed with board games, his shelf is bending",
            "Went to a board game café once and we argued over Monopoly for two hours",
            "Is Warhammer still a thing? Saw a shop full of tiny painted soldiers",
            "I never understood role-playing games, all that dice rolling",
        ],
    ),
    # ------------------------------------------------------------------ furniture
    dict(
        id="furniture",
        slots={"item": "furniture", "shop": "shops", "problem": "delivery_problems"},
        steps=[
            dict(k="buy", say=[
                "Ordered {item} from {shop}! Flat finally looking grown-up",
                ["~I've done it", "Bought {item}. From {shop}. Spent way too much"],
                "Went to {shop} for a lamp and came home having bought {item}",
            ]),
            dict(k="delivery", gap=[1, 2], mood="-", say=[
                "The delivery came {ago} and {problem.v}. Furious",
                "Well. {Problem.reply}",
            ], pair=[["Did the new thing arrive in one piece?", "{problem.reply}"],
                     ["How did the delivery go?", "{problem.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["buy"], ask=["What furniture did {N} buy for the flat?", "What big purchase did {N} make for {his} home?"], a="{item}"),
            dict(c="single", ev=["buy"], ask=["Where did {N} get {his} new furniture?"], a="{shop}"),
            dict(c="ell", ev=["delivery"], ask=["What went wrong when {N}'s furniture turned up?", "What was the issue with {N}'s delivery?"], a="{problem}"),
            dict(c="multi", ev=["buy", "delivery"], ask=["What was wrong with the item {N} got from {shop}?"], a="{problem}"),
        ],
        noise=[
            "Flat-pack furniture is the reason I have trust issues",
            "My [aunt|uncle] has a sofa from the 70s that's still going strong",
            "Someone left a perfectly good bookcase on the street outside mine",
            "Delivery companies give you a window of 7am to 7pm, like who is free for that",
            "I keep looking at {*furniture} online but I have nowhere to put it",
        ],
    ),
    # ------------------------------------------------------------------ jury duty
    dict(
        id="jury",
        slots={"trial": "trials", "verdict": "verdicts"},
        shareable=False,
        anchor="{he} got called for jury service",
        steps=[
            dict(k="summons", say=[
                "Got a letter {ago}, I've been called for jury service next month",
                ["~Guess what came in the post", "Jury summons! Two weeks at the crown court"],
                "I've been summoned for jury duty. Slightly terrified",
            ]),
            dict(k="case", gap=[1, 3], say=["Day two of the trial. It's {trial}, and that's all I'm allowed to say", 
                "Can't say much but the trial's {trial}. Very strange being on that side of it",
                "So I'm on the jury for {trial}. Day three and my head hurts",
            ]),
            dict(k="verdict", gap=[0, 1], say=["It's over. {Verdict.reply}", "We reached a verdict {ago}: {verdict}"],
                 pair=[["So what did the jury decide?", "{verdict.reply}"], ["Is the court thing finished? What was the outcome?", "{verdict.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["case"], ask=["What kind of trial did {N} sit on?", "What crime was being tried when {N} served as a juror?"], a="{trial}"),
            dict(c="ell", ev=["verdict"], ask=["What did {N}'s jury conclude?", "How did the trial {N} served on end?"], a="{verdict}"),
            dict(c="when", ev=["summons"], ask=["When did {N} hear {he}'d been picked for civic duty?"]),
            dict(c="multi", ev=["case", "verdict"], ask=["What was the outcome of the {trial.kind} trial {N} was part of?"], a="{verdict}"),
        ],
        noise=[
            "Watching a courtroom drama and shouting at the telly, as you do",
            "My dad did jury service in the 80s and still won't talk about it",
            "Apparently you can get out of it if you're self-employed? Not sure",
            "There was a big fraud case in the news, the guy got eight years",
        ],
    ),
    # ------------------------------------------------------------------ work project (update: manager)
    dict(
        id="manager",
        slots={"mgr1": "@name", "mgr2": "@name", "product": "products"},
        shareable=False,
        anchor="{he} got a new manager",
        steps=[
            dict(k="first", say=[
                "New manager {ago}, {mgr1}. On {product} now",
                ["~Work update", "I'm now reporting to {mgr1}, we're doing {product}"],
                "Got moved onto {product}, my manager is someone called {mgr1}",
            ]),
            dict(k="second", gap=[3, 8], say=[
                "{mgr1} quit! I report to {mgr2} now",
                ["~Office drama", "{mgr1}'s gone, poached by a competitor. My new boss is {mgr2}"],
                "Reshuffle at work: {mgr2} is my line manager now, {mgr1} moved to another team",
            ]),
        ],
        qs=[
            dict(c="now", ev=["second"], ask=["Who does {N} report to now?", "Who is {N}'s current line manager?"], a="{mgr2}"),
            dict(c="before", ev=["first", "second"], ask=["Who was {N}'s supervisor before {mgr2}?", "Who managed {N} before the reshuffle?"], a="{mgr1}"),
            dict(c="single", ev=["first"], ask=["Which work project was {N} assigned to?"], a="{product}"),
        ],
        cue=["How's work these days?"],
        noise=[
            "My manager scheduled a meeting for 5pm on a Friday, who does that",
            "Office politics at my place are worse than a soap opera",
            "Have you ever had a boss you actually liked? Genuine question",
            "Someone on my team got promoted and now acts like a manager in a film",
        ],
    ),
    # ------------------------------------------------------------------ flatmate (update)
    dict(
        id="flatmate",
        slots={"mate1": "@name", "mate2": "@name", "job1": "flatmate_jobs", "job2": "flatmate_jobs"},
        shareable=False,
        anchor="{mate1} moved in with {him}",
        steps=[
            dict(k="first", say=[
                "New flatmate {ago}: {mate1}, {job1}",
                ["~Update on the spare room", "Found someone! {mate1}, {job1}. Seems tidy"],
                "{mate1} moved in {ago}. {Job1.v}",
            ]),
            dict(k="second", gap=[3, 8], say=["Goodbye {mate1}, hello {mate2}. {Job2.v}, moved in {ago}", 
                "{mate1}'s moved out. {mate2} has the room now, {job2}",
                ["~Flat news", "{mate1} moved out {ago}. The new one is {mate2}, {job2}"],
            ]),
        ],
        qs=[
            dict(c="now", ev=["second"], ask=["Who lives with {N} at the moment?", "Who is {N}'s current housemate?"], a="{mate2}"),
            dict(c="before", ev=["first", "second"], ask=["Who shared {N}'s place before {mate2}?", "Who was {N}'s previous housemate?"], a="{mate1}"),
            dict(c="single", ev=["first"], ask=["What does {mate1} do for a living?", "What's the occupation of the person who took {N}'s spare room first?"], a="{job1}"),
        ],
        noise=[
            "My old flatmate used to steal my cheese. Just the cheese",
            "Renting with strangers is such a lottery, isn't it",
            "Saw an advert for a room in a shared house, £900 a month, for a box room",
            "I lived with five people at uni and the kitchen was a crime scene",
        ],
    ),
    # ------------------------------------------------------------------ insomnia
    dict(
        id="insomnia",
        slots={"fix": "sleep_fixes", "doc": "@name"},
        steps=[
            dict(k="problem", mood="-", say=[
                "Insomnia is back. Four hours a night for two weeks, staring at the ceiling",
                ["~I'm a zombie", "Insomnia again. Awake at 3am every single night"],
                "Saw the GP {ago} about my insomnia, Dr {doc} said to try a few things before pills",
            ]),
            dict(k="fix", gap=[1, 4], say=[
                "Sleeping loads better, it was {fix} that did it",
                "Update on the sleep saga: {fix} is working. Eight hours {ago}!",
            ], pair=[["Did anything end up helping with the sleep?", "{fix.reply}"],
                     ["Are you sleeping any better? What worked?", "{fix.reply}"]]),
        ],
        qs=[
            dict(c="ell", ev=["fix"], ask=["What finally cured {N}'s restless nights?", "What helped {N} get some rest?"], a="{fix}"),
            dict(c="multi", ev=["problem", "fix"], ask=["What fixed the problem {N} saw the doctor about?"], a="{fix}"),
        ],
        cue=["How are you sleeping?"],
        noise=[
            "My [partner|flatmate] snores like a motorbike, I sleep with earplugs",
            "Read that you shouldn't look at screens before bed, as I read it on my phone in bed",
            "I could sleep for a week after this month honestly",
            "Those sleep tracking watches just make me anxious about sleep",
        ],
    ),
    # ------------------------------------------------------------------ dentist
    dict(
        id="dentist",
        slots={"treatment": "dental", "dentist": "dentists"},
        steps=[
            dict(k="visit", mood="-", say=[
                "{Treatment.v} {ago} at {dentist}'s. Face numb",
                ["~Ow", "{Treatment.v} this morning with {dentist}. Never again"],
                "{Dentist} did {treatment} {ago}. Still can't feel my lip",
            ]),
        ],
        qs=[
            dict(c="single", ev=["visit"], ask=["What did {N} have done at the dental surgery?", "What treatment did {N}'s teeth need?"], a="{treatment}"),
            dict(c="single", ev=["visit"], ask=["Who is {N}'s dentist?"], a="{dentist}"),
            dict(c="when", ev=["visit"], ask=["When was {N}'s dental appointment?"]),
        ],
        noise=[
            "Why is it so hard to get an NHS dentist, I've been on the list for a year",
            "My [nephew|niece] lost a front tooth and looks like a tiny pirate",
            "I bought an electric toothbrush and it's changed my life, weirdly",
            "The dentist in my town has a fish tank the size of a car",
        ],
    ),
    # ------------------------------------------------------------------ choir
    dict(
        id="choir",
        slots={"choir": "choirs", "part": "voice_parts", "piece": "choir_pieces"},
        anchor="{he} joined a choir",
        steps=[
            dict(lead=True, k="join", say=[
                "I joined {choir}! Tuesday nights in a church hall",
                ["~Brace yourself", "I'm in a choir now. {choir}. No audition, thank god"],
                "First rehearsal with {choir} {ago}, everyone was lovely",
            ], pair=[["Which part did they put you in?", "{part.reply}"]]),
            dict(k="concert", gap=[2, 6], say=["Sang {piece} at our concert {ago}. Nobody fainted", 
                "Our first concert was {ago}! We did {piece} and nobody fell off the risers",
                ["~We performed!", "Sang {piece} in front of about two hundred people. Legs like jelly"],
            ]),
        ],
        qs=[
            dict(c="single", ev=["join"], ask=["What singing group did {N} become a member of?", "Which vocal ensemble is {N} in?"], a="{choir}"),
            dict(c="ell", ev=["join"], ask=["What voice does {N} sing in the group?", "Which vocal section was {N} put in?"], a="{part}"),
            dict(c="single", ev=["concert"], ask=["What song did {N}'s group perform at their first gig?"], a="{piece}"),
            dict(c="when", ev=["concert"], ask=["When was {N}'s first performance with {his} singing group?"]),
        ],
        noise=[
            "There's a gospel choir that rehearses near my office, you can hear them from the street",
            "I can't sing at all, I'm banned from karaoke",
            "Did you see those flash mob videos of choirs at train stations? Cringe but lovely",
            "My [mum|dad] sang in a choir for years, loved the concerts",
        ],
    ),
    # ------------------------------------------------------------------ birding
    dict(
        id="birding",
        slots={"sighting": "birds", "place": "bird_places"},
        steps=[
            dict(k="spot", say=[
                "Saw {sighting} at {place} {ago}!",
                ["~I've become a birder", "Binoculars and everything. Spotted {sighting} at {place}"],
                "{ago} at {place}: {sighting}. I actually gasped",
            ]),
        ],
        qs=[
            dict(c="single", ev=["spot"], ask=["What wildlife did {N} spot?", "Which creature did {N} see while out with binoculars?"], a="{sighting}"),
            dict(c="single", ev=["spot"], ask=["Where did {N} go watching wildlife?"], a="{place}"),
            dict(c="when", ev=["spot"], ask=["When did {N} have {his} big wildlife sighting?"]),
        ],
        noise=[
            "The pigeons on my balcony have built a nest in a plant pot",
            "There's a guy in the park who feeds the crows every morning, they follow him",
            "Some seagull stole a chip right out of my hand at the seaside",
            "I bought a bird feeder and so far only squirrels have used it",
        ],
    ),
    # ------------------------------------------------------------------ cinema (recurring)
    dict(
        id="cinema",
        slots={"film": "films", "who": "@name"},
        repeat=True,
        steps=[
            dict(k="see", say=[
                "Saw {film} at the cinema {ago} with {who}. [Loved it|Mixed feelings|Cried twice]",
                ["~Cinema trip", "{film} with {who}! Big screen, giant popcorn"],
                "Went to see {film} {ago} with {who}, the {film.genre}. Go see it",
            ]),
        ],
        qs=[
            dict(c="single", ev=["see"], ask=["Who went to the pictures with {N} to watch {film}?"], a="{who}"),
        ],
        tq=dict(ev=["see"], ask=["What movie did {N} catch {T}?", "Which picture did {N} watch {T}?"], a="{film}"),
        agg=dict(ev=["see"], ask=["Which movies has {N} been to see?"], item="{film}"),
        noise=[
            "Cinema tickets cost fifteen quid now, I nearly fainted",
            "Someone kept checking their phone during the film last time, I wanted to scream",
            "Is {*films} any good? The trailer looked [awful|amazing]",
            "I prefer watching films at home with subtitles and a blanket",
        ],
    ),
    # ------------------------------------------------------------------ football (recurring)
    dict(
        id="football",
        slots={"team": "teams", "who": "@name"},
        repeat=True,
        steps=[
            dict(k="match", say=[
                "Went to the {team} game {ago} with {who}. {team.score}, what a match",
                ["~Voice gone", "{team} match! Ended {team.score}, I was screaming"],
                "{who} got me a ticket for {team} {ago}. Freezing, but {team.score}",
            ]),
        ],
        qs=[
            dict(c="single", ev=["match"], ask=["What was the final score when {N} watched {team} play?"], a="{team.score}"),
        ],
        tq=dict(ev=["match"], ask=["Which side did {N} watch play live {T}?", "Whose match did {N} attend {T}?"], a="{team}"),
        agg=dict(ev=["match"], ask=["Which clubs has {N} watched play in person?"], item="{team}"),
        noise=[
            "Football on the radio in the taxi the whole way, I know all the scores now",
            "My [dad|uncle] has had a season ticket since 1982",
            "The pub near me is unbearable on match days",
            "Did you see the penalty drama at the weekend? Everyone at work is furious",
        ],
    ),
    # ------------------------------------------------------------------ tennis
    dict(
        id="tennis",
        slots={"racket": "rackets", "coach": "@name", "result": "tennis_results"},
        steps=[
            dict(k="start", say=["{coach} is teaching me tennis now. Got {racket}, look at me", 
                "Started tennis lessons with a coach called {coach}. Bought {racket} and everything",
                ["~Midlife crisis sport", "Tennis! Lessons with {coach} on Saturdays. I've got {racket}"],
            ]),
            dict(k="match", gap=[2, 5], say=["First proper match {ago} and I {result}", "Played my first league game {ago}: {result}"],
                 pair=[["How did your first match go?", "{result.reply}"], ["So did you win the game?", "{result.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Who coaches {N}?", "Who is {N}'s instructor on the court?"], a="{coach}"),
            dict(c="single", ev=["start"], ask=["What racquet does {N} use?"], a="{racket}"),
            dict(c="ell", ev=["match"], ask=["How did {N}'s first competitive game on the court go?", "What happened in {N}'s debut match?"], a="{result}"),
            dict(c="when", ev=["match"], ask=["When did {N} play {his} first league fixture?"]),
        ],
        noise=[
            "Wimbledon's on and my whole office has stopped working",
            "The courts in the park are always full of teenagers",
            "I tried padel on holiday, it's like tennis in a cage",
        ],
    ),
    # ------------------------------------------------------------------ card fraud
    dict(
        id="fraud",
        slots={"merchant": "merchants", "amount": "amounts"},
        steps=[
            dict(k="fraud", mood="-", say=["My card got cloned. {amount} at {merchant}, of all places", 
                "Someone cloned my bank card! {amount} spent at {merchant}. Never been there in my life",
                ["~Worst phone call", "The bank rang {ago}, {amount} gone to {merchant}"],
            ]),
            dict(k="refund", gap=[1, 3], say=["The bank refunded it all {ago}, phew", "Got the money back in the end, all of it"],
                 pair=[["Did you ever get that money back from the bank?", "All of it, {ago}. Took three phone calls"]]),
        ],
        qs=[
            dict(c="single", ev=["fraud"], ask=["How much was stolen from {N}'s account?", "What sum did the scammers take from {N}?"], a="{amount}"),
            dict(c="single", ev=["fraud"], ask=["Where were the dodgy payments on {N}'s account made?"], a="{merchant}"),
            dict(c="when", ev=["refund"], ask=["When did {N} get reimbursed after the scam?"]),
        ],
        noise=[
            "I got a text pretending to be from the post office, so obviously fake",
            "My [gran|grandad] nearly fell for a phone scam last month",
            "Contactless limits going up makes me nervous honestly",
            "Banks make you jump through so many hoops to change an address",
        ],
    ),
    # ------------------------------------------------------------------ home repair
    dict(
        id="repair",
        slots={"fault": "home_faults", "fixer": "@name", "cost": "repair_costs"},
        steps=[
            dict(k="broke", mood="-", say=["{Fault.v} gave up {ago}. Dead", 
                "{Fault.v} packed in {ago}. Of course it did",
                ["~Disaster", "{Fault.v} died. Just died"],
            ]),
            dict(k="fixed", gap=[0, 2], say=[
                "Got a guy called {fixer} out to fix it, {cost} in the end",
                "All fixed! {fixer} came round {ago}, {cost}, ouch",
            ], pair=[["How much did {fixer} charge in the end?", "{cost}. Don't"], ["Was {fixer} expensive in the end?", "{cost}, plus a callout fee"]]),
        ],
        qs=[
            dict(c="single", ev=["broke"], ask=["What broke down in {N}'s home?"], a="{fault}"),
            dict(c="ell", ev=["fixed"], ask=["How much did {N} pay for the repair?", "What was the bill to get {N}'s broken appliance going?"], a="{cost}"),
            dict(c="multi", ev=["broke", "fixed"], ask=["Who repaired the thing that stopped working at {N}'s?"], a="{fixer}"),
            dict(c="when", ev=["broke"], ask=["When did {N}'s {fault.kind} stop working?"]),
        ],
        noise=[
            "My landlord takes about three months to fix anything",
            "Why do all appliances break the week after the warranty runs out",
            "I watched a video on fixing a dripping tap and made it worse",
        ],
    ),
    # ------------------------------------------------------------------ sailing
    dict(
        id="sailing",
        slots={"place": "sail_places", "mishap": "sail_mishaps"},
        steps=[
            dict(k="course", say=["Three days of sailing at {place}, back {ago}", 
                "Did a sailing course at {place}, got back {ago}. I'm basically a pirate now",
                ["~Sea legs acquired", "Learned to sail {ago}! Little dinghy on {place}"],
            ]),
            dict(k="mishap", gap=[0, 1], say=["Also I {mishap} on the second day", "Minor detail: I {mishap}. Instructor laughed"],
                 pair=[["Did anything go wrong on the boat?", "{mishap.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["course"], ask=["Where did {N} take up boating?"], a="{place}"),
            dict(c="ell", ev=["mishap"], ask=["What mishap did {N} have while boating?"], a="{mishap}"),
            dict(c="when", ev=["course"], ask=["When did {N} try boating?"]),
        ],
        noise=["A friend of mine wants to buy a boat, as in actually live on it", "I get seasick on the ferry, no way I'm sailing",
               "The harbour near my parents' is full of yachts worth more than houses"],
    ),
    # ------------------------------------------------------------------ astronomy
    dict(
        id="astronomy",
        slots={"scope": "telescopes", "object": "sky_objects"},
        steps=[
            dict(k="buy", say=["Got {scope} {ago}. Clear skies please", "Bought {scope} telescope off a retired teacher!", "I'm the proud owner of {scope}. Stargazing era"]),
            dict(k="see", gap=[0, 3], say=["Clear sky {ago} and I saw {object}", "Finally: {object}. Through my own telescope"],
                 pair=[["Have you managed to see anything with the telescope yet?", "{object.reply}"], ["What did you look at last night?", "{object.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["buy"], ask=["What optical gear did {N} buy for looking at the sky?"], a="{scope}"),
            dict(c="ell", ev=["see"], ask=["What celestial sight did {N} catch?"], a="{object}"),
            dict(c="multi", ev=["buy", "see"], ask=["What did {N} see with {his} new purchase?"], a="{object}"),
        ],
        noise=["There's meant to be a meteor shower this week but it's cloudy, obviously", "Light pollution in the city is so bad you see about three stars",
               "My [niece|nephew] wants to be an astronaut this week, last week a dinosaur"],
    ),
    # ------------------------------------------------------------------ reunion
    dict(
        id="reunion",
        slots={"year": "reunion_years", "old": "@name", "job": "school_jobs"},
        steps=[
            dict(k="go", say=["The {year} school reunion was {ago}. Weird and wonderful", 
                "Went to my {year} school reunion {ago}. So strange seeing everyone",
                ["~Reunion report", "Survived the {year} reunion! Everyone looks the same but tired"],
            ]),
            dict(k="old", gap=[0, 0], say=["And {old}, who used to set fire to the science lab, is {job} now. {job}!",
                                          "Biggest shock: {old} is {job}. I can't process it"],
                 pair=[["Anyone surprising there?", "{old}! {Job.v} now. {job}!"]]),
        ],
        qs=[
            dict(c="single", ev=["old"], ask=["What does {old} do for a living now?", "What career did {N}'s old classmate {old} end up in?"], a="{job}"),
            dict(c="when", ev=["go"], ask=["When was {N}'s school reunion?"]),
            dict(c="multi", ev=["go", "old"], ask=["Who did {N} bump into at the gathering of old classmates that surprised {him}?"], a="{old}, now {job}"),
        ],
        noise=["Facebook keeps suggesting people from primary school, I have no idea who they are",
               "My [mum|dad] still goes to their school reunion every year", "Saw my old maths teacher in the supermarket and hid behind the cereal"],
    ),
    # ------------------------------------------------------------------ escape room
    dict(
        id="escape",
        slots={"theme": "escape_themes", "result": "escape_results"},
        steps=[
            dict(k="go", say=["Work took us to an escape room {ago}. {Theme.v}", 
                "Did an escape room {ago} for a work social, {theme} themed",
                ["~Puzzle nerds unite", "Escape room with the team! It was {theme}"],
            ]),
            dict(k="result", gap=[0, 0], say=["We got out {result}", "And result: {result}"],
                 pair=[["Did you get out in time?", "{result.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["go"], ask=["What was the setting of the puzzle game {N} did with colleagues?"], a="{theme}"),
            dict(c="ell", ev=["result"], ask=["How did {N}'s team do in the locked room challenge?"], a="{result}"),
            dict(c="when", ev=["go"], ask=["When did {N} do the team puzzle challenge?"]),
        ],
        noise=["Team building days are my personal nightmare", "Someone suggested an escape room for my birthday and I said absolutely not",
               "I'm terrible at puzzles, I can't even do the newspaper crossword"],
    ),
]


# More questions per frame.
EXTRA_QS = {
    "climbing": [dict(c="multi", ev=["start", "goal"], ask=["Who first took {N} to the place where {he} later did {goal}?"], a="{buddy}")],
    "swimming": [dict(c="single", ev=["milestone"], ask=["Which stroke has {N}'s instructor praised?"], a="{stroke}")],
    "bike": [dict(c="multi", ev=["first", "second"], ask=["What happened to {bike1}?"], a="stolen {place}")],
    "course": [dict(c="single", ev=["project"], ask=["What was the final project of {N}'s class?"], a="{project}")],
    "brewing": [],
    "tabletop": [dict(c="multi", ev=["join", "char"], ask=["Who does {N} play in {host}'s campaign?"], a="{character}")],
    "furniture": [dict(c="multi", ev=["buy", "delivery"], ask=["What went wrong with the {item.kind} {N} ordered?"], a="{problem}")],
    "jury": [dict(c="multi", ev=["summons", "case"], ask=["What trial did {N} end up on after being summoned?"], a="{trial}")],
    "manager": [dict(c="multi", ev=["first", "second"], ask=["Why does {N} no longer work under {mgr1}?"], a="{mgr1} left; {mgr2} took over")],
    "flatmate": [dict(c="single", ev=["second"], ask=["What does {mate2} do for work?"], a="{job2}")],
    "insomnia": [],
    "dentist": [],
    "choir": [dict(c="multi", ev=["join", "concert"], ask=["What did {choir} sing at their concert?"], a="{piece}")],
    "birding": [],
    "tennis": [dict(c="multi", ev=["start", "match"], ask=["How did {N} do in {his} first match after lessons with {coach}?"], a="{result}")],
    "fraud": [dict(c="multi", ev=["fraud", "refund"], ask=["Did {N} get back the {amount} taken by fraudsters?"], a="yes, all of it")],
    "repair": [],
    "sailing": [dict(c="multi", ev=["course", "mishap"], ask=["What happened to {N} at {place}?"], a="{mishap}")],
    "astronomy": [],
    "reunion": [],
    "escape": [dict(c="multi", ev=["go", "result"], ask=["How did the {theme.kind} themed challenge end for {N}'s team?"], a="{result}")],
}
for _f in FRAMES:
    _f["qs"] = _f["qs"] + EXTRA_QS.get(_f["id"], [])
