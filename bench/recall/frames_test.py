"""Content library of the TEST split (report on it; never tune on it).

Topics, wording, slot values and names here share nothing with `frames_dev.py`. The format
is the one described in `frames_dev.py` and README.md.
"""

NAMES = [
    ("Priya", "f"), ("Jon", "m"), ("Amelia", "f"), ("Kai", "m"), ("Beatriz", "f"), ("Omar", "m"),
    ("Hannah", "f"), ("Luca", "m"), ("Chen", "m"), ("Aaliyah", "f"), ("Ben", "m"), ("Zara", "f"),
    ("Mateus", "m"), ("Ife", "f"), ("Gabriel", "m"), ("Saoirse", "f"), ("Kenta", "m"), ("Layla", "f"),
    ("Nikolai", "m"), ("Imani", "f"), ("Ethan", "m"), ("Farah", "f"), ("Joaquín", "m"), ("Mira", "f"),
    ("Tunde", "m"), ("Elif", "f"), ("Marcus", "m"), ("Sunita", "f"), ("Oscar", "m"), ("Keira", "f"),
    ("Ahmed", "m"), ("Noemi", "f"), ("Ryo", "m"), ("Chloe", "f"), ("Darius", "m"), ("Vanya", "f"),
    ("Malik", "m"), ("Georgia", "f"), ("Pedro", "m"), ("Asha", "f"), ("Felix", "m"), ("Amina", "f"),
    ("Viktor", "m"), ("Lina", "f"), ("Kieran", "m"), ("Rania", "f"), ("Hugo", "m"), ("Soo-ah", "f"),
    ("Isaac", "m"), ("Mariam", "f"), ("Teo", "m"), ("Ngozi", "f"), ("Benedikt", "m"), ("Camila", "f"),
    ("Jasper", "m"), ("Hiba", "f"), ("Akira", "m"), ("Daniela", "f"), ("Olu", "m"), ("Harriet", "f"),
    ("Sami", "m"), ("Yara", "f"), ("Anders", "m"), ("Lucy", "f"), ("Jamal", "m"), ("Eun-ji", "f"),
    ("Patrick", "m"), ("Salma", "f"), ("Quentin", "m"), ("Naledi", "f"), ("Ruben", "m"), ("Polly", "f"),
    ("Vikram", "m"), ("Sienna", "f"), ("Mohammed", "m"), ("Agnes", "f"), ("Tiago", "m"), ("Ruth", "f"),
    ("Kaito", "m"), ("Sadie", "f"), ("Ibrahim", "m"), ("Nell", "f"), ("Enzo", "m"), ("Dalia", "f"),
    ("Aleksander", "m"), ("Flora", "f"), ("Juan", "m"), ("Maeve", "f"), ("Hassan", "m"), ("Iris", "f"),
    ("Declan", "m"), ("Bo-ra", "f"), ("Wojciech", "m"), ("Tamsin", "f"), ("Femi", "m"), ("Carmen", "f"),
    ("Lorenzo", "m"), ("Annika", "f"), ("Sipho", "m"), ("Ottilie", "f"), ("Rashid", "m"), ("Jade", "f"),
]

RELATIONSHIPS = ["best friends since primary school", "sisters-in-law", "colleagues at the same firm",
                 "neighbours", "friends from a language exchange", "old bandmates", "gym buddies"]

POOLS = {
    # pets
    "pets": [{"v": "a beagle puppy", "kind": "dog", "young": "pup"}, {"v": "a ginger tabby kitten", "kind": "cat", "young": "kitten"},
             {"v": "a rescue greyhound", "kind": "dog", "young": "hound"}, {"v": "a lop-eared rabbit", "kind": "rabbit", "young": "bunny"},
             {"v": "a border collie", "kind": "dog", "young": "pup"}, {"v": "a black rescue cat", "kind": "cat", "young": "kitty"},
             {"v": "a cockapoo", "kind": "dog", "young": "pup"}, {"v": "a long-haired guinea pig", "kind": "guinea pig", "young": "piggy"},
             {"v": "a Siamese kitten", "kind": "cat", "young": "kitten"}, {"v": "a staffie cross", "kind": "dog", "young": "pup"}],
    "pet_names": ["Biscotti", "Mochi", "Pickle", "Juniper", "Waffles", "Ziggy", "Pudding", "Miso", "Clementine", "Rolo", "Bramble", "Nacho"],
    "shelters": ["the Battersea centre", "a rescue in Kent", "the RSPCA branch near my mum's", "a farm in Wales",
                 "Blue Cross", "a breeder in Devon", "the Cats Protection lot", "a shelter outside town"],
    "vet_issues": [{"v": "an ear infection", "part": "ears", "reply": "Just an infection, drops twice a day"},
                   {"v": "a sprained paw", "part": "leg", "reply": "Sprain, nothing broken. Cage rest for a week, poor thing"},
                   {"v": "worms", "part": "tummy", "reply": "Worms! Gross. Tablets sorted it"},
                   {"v": "a bad tooth", "part": "mouth", "reply": "A rotten tooth, had to come out. £300"},
                   {"v": "an allergy", "part": "skin", "reply": "Allergic to chicken, of all things. New food"},
                   {"v": "an eye infection", "part": "eye", "reply": "Conjunctivitis. Ointment, which they hate"}],
    # jobs
    "employers": [{"v": "Fernhill Bakery", "kind": "bakery"}, {"v": "Northwind Logistics", "kind": "logistics firm"},
                  {"v": "the city library", "kind": "library"}, {"v": "Brightside Dental", "kind": "dental practice"},
                  {"v": "Quayside Architects", "kind": "architecture firm"}, {"v": "Pellucid Games", "kind": "games studio"},
                  {"v": "St Aidan's Hospital", "kind": "hospital"}, {"v": "Copperleaf Bank", "kind": "bank"},
                  {"v": "the Riverside Hotel", "kind": "hotel"}, {"v": "Orbital Media", "kind": "ad agency"},
                  {"v": "Greenmarket Foods", "kind": "supermarket chain"}, {"v": "Halden Engineering", "kind": "engineering company"}],
    "roles": ["office manager", "junior designer", "data analyst", "shift supervisor", "receptionist", "project coordinator",
              "sous chef", "marketing assistant", "QA tester", "account manager"],
    # moving
    "cities": [{"v": "Leeds", "country": "England"}, {"v": "Glasgow", "country": "Scotland"}, {"v": "Bristol", "country": "England"},
               {"v": "Lisbon", "country": "Portugal"}, {"v": "Cardiff", "country": "Wales"}, {"v": "Manchester", "country": "England"},
               {"v": "Rotterdam", "country": "the Netherlands"}, {"v": "Edinburgh", "country": "Scotland"}, {"v": "Belfast", "country": "Northern Ireland"},
               {"v": "Valencia", "country": "Spain"}, {"v": "Newcastle", "country": "England"}, {"v": "Dublin", "country": "Ireland"},
               {"v": "Sheffield", "country": "England"}, {"v": "Copenhagen", "country": "Denmark"}],
    "move_reasons": [{"v": "a new job", "reply": "Work, mostly. The commute was killing me"},
                     {"v": "to be closer to family", "reply": "To be nearer my parents, they're getting older"},
                     {"v": "cheaper rent", "reply": "Honestly? Rent. Half what I was paying"},
                     {"v": "a fresh start", "reply": "Needed a fresh start after everything this year"}],
    # instruments
    "instruments": [{"v": "cello", "kind": "string instrument", "player": "cellist"}, {"v": "saxophone", "kind": "wind instrument", "player": "saxophonist"},
                    {"v": "piano", "kind": "keyboard instrument", "player": "pianist"}, {"v": "violin", "kind": "string instrument", "player": "violinist"},
                    {"v": "drums", "kind": "percussion", "player": "drummer"}, {"v": "ukulele", "kind": "string instrument", "player": "ukulele player"},
                    {"v": "trumpet", "kind": "brass instrument", "player": "trumpeter"}, {"v": "flute", "kind": "wind instrument", "player": "flautist"},
                    {"v": "bass guitar", "kind": "string instrument", "player": "bassist"}, {"v": "harp", "kind": "string instrument", "player": "harpist"}],
    "pieces": ["Clair de Lune", "a Bach minuet", "Fly Me to the Moon", "the Game of Thrones theme", "Moon River",
               "a Chopin nocturne", "Take Five", "Hallelujah", "Wonderwall", "the Pink Panther theme"],
    "recitals": [{"v": "it went really well", "reply": "Nailed it! Only one wrong note and nobody noticed"},
                 {"v": "they froze halfway", "reply": "Froze halfway through. Just stopped. Mortifying"},
                 {"v": "a string broke", "reply": "Something snapped mid-piece, had to start again"},
                 {"v": "they got a standing ovation", "reply": "Standing ovation! Ok it was mostly parents but still"}],
    # races (recurring)
    "races": [{"v": "the Bath 10K", "dist": "10K", "time": "52 minutes"}, {"v": "the Great North Run", "dist": "half marathon", "time": "1:58"},
              {"v": "a park run in Hackney", "dist": "5K", "time": "27:40"}, {"v": "the Brighton half", "dist": "half marathon", "time": "2:07"},
              {"v": "the Loch Ness marathon", "dist": "marathon", "time": "4 hours 31"}, {"v": "a trail race in the Peak District", "dist": "trail run", "time": "1 hour 40"},
              {"v": "the Swansea half", "dist": "half marathon", "time": "1:49"}, {"v": "the Regent's Park 10K", "dist": "10K", "time": "49:12"},
              {"v": "a charity 5K in Victoria Park", "dist": "5K", "time": "31 minutes"}],
    # trips (recurring)
    "trips": [{"v": "Japan", "place": "Kyoto", "thing": "the temples"}, {"v": "Portugal", "place": "Porto", "thing": "the custard tarts"},
              {"v": "Morocco", "place": "Marrakech", "thing": "the souks"}, {"v": "Iceland", "place": "Reykjavik", "thing": "the northern lights"},
              {"v": "Mexico", "place": "Oaxaca", "thing": "the markets"}, {"v": "Italy", "place": "Naples", "thing": "the pizza"},
              {"v": "Vietnam", "place": "Hanoi", "thing": "the street food"}, {"v": "Greece", "place": "Crete", "thing": "the beaches"},
              {"v": "Canada", "place": "Vancouver", "thing": "the mountains"}, {"v": "Norway", "place": "Bergen", "thing": "the fjords"},
              {"v": "Turkey", "place": "Istanbul", "thing": "the bazaars"}],
    # injury
    "injuries": [{"v": "a sprained ankle", "part": "ankle"}, {"v": "a broken wrist", "part": "wrist"},
                 {"v": "a torn hamstring", "part": "leg"}, {"v": "a dislocated shoulder", "part": "shoulder"},
                 {"v": "a cracked rib", "part": "ribs"}, {"v": "a fractured toe", "part": "foot"}],
    "injury_causes": ["playing five-a-side", "slipping on ice outside the office", "falling off a ladder", "tripping over the dog lead",
                      "a netball match", "missing the last step on the stairs"],
    # diet
    "diets": [{"v": "vegan", "what": "no animal products"}, {"v": "vegetarian", "what": "no meat"}, {"v": "sugar-free", "what": "no sugar"},
              {"v": "low-carb", "what": "hardly any bread or pasta"}, {"v": "dairy-free", "what": "no milk or cheese"},
              {"v": "pescatarian", "what": "fish but no meat"}],
    "diet_reasons": [{"v": "a documentary", "reply": "Watched a documentary and couldn't unsee it"},
                     {"v": "their cholesterol", "reply": "The GP said my cholesterol is through the roof"},
                     {"v": "a bet with a colleague", "reply": "A bet with someone at work. Loser buys lunch for a month"},
                     {"v": "the environment", "reply": "Climate stuff, mostly. Felt like the least I could do"}],
    "cravings": [{"v": "bacon sandwiches", "reply": "Bacon sandwiches. Every single morning"}, {"v": "cheese", "reply": "Cheese. I dream about cheese"},
                 {"v": "chocolate", "reply": "Chocolate, obviously. I walk past the vending machine like it's an ex"},
                 {"v": "fresh bread", "reply": "Fresh bread. The bakery smell nearly broke me"}],
    # weddings
    "venues": ["a barn in the Cotswolds", "a castle near Inverness", "Brighton town hall", "a vineyard in Sussex",
               "a hotel by Lake Como", "a registry office then the pub", "a country house in Yorkshire", "the botanical gardens"],
    "wedding_roles": [{"v": "a witness", "kind": "witness"}, {"v": "the officiant", "kind": "ran the ceremony"},
                      {"v": "giving a reading", "kind": "reading"}, {"v": "DJ for the evening", "kind": "music"},
                      {"v": "the photographer", "kind": "photos"}, {"v": "doing a speech", "kind": "speech"}],
    "wedding_mishaps": [{"v": "the cake collapsed", "reply": "The cake. Collapsed. Three tiers on the floor"},
                        {"v": "the rings were forgotten", "reply": "Someone left the rings at the hotel, twenty minute delay"},
                        {"v": "it poured with rain", "reply": "Torrential rain, the marquee leaked"},
                        {"v": "the groom fainted", "reply": "He fainted! Right at the vows"}],
    # exams
    "exams": [{"v": "the ACCA exams", "field": "accounting"}, {"v": "the AWS Solutions Architect certification", "field": "cloud computing"},
              {"v": "the CIPD diploma", "field": "HR"}, {"v": "the final bar exam", "field": "law"},
              {"v": "the PMP certification", "field": "project management"}, {"v": "a nursing degree final", "field": "nursing"},
              {"v": "the CFA level one", "field": "finance"}, {"v": "the Cisco networking exam", "field": "networking"}],
    "exam_results": [{"v": "passed with distinction", "reply": "Distinction!! I had to read it three times"},
                     {"v": "passed", "reply": "Passed. Just. But a pass is a pass"},
                     {"v": "failed by two marks", "reply": "Failed by two marks. Two!"},
                     {"v": "came top of the cohort", "reply": "Top of the year group, apparently"}],
    # languages
    "languages": ["Japanese", "Portuguese", "Korean", "Italian", "Arabic", "Greek", "Mandarin", "Polish", "Turkish", "Welsh", "Dutch"],
    "lang_motives": [{"v": "their partner's family", "reply": "So I can talk to my in-laws without a translator"},
                     {"v": "an upcoming trip", "reply": "We're going next year and I don't want to just point at menus"},
                     {"v": "for work, the clients speak it", "reply": "Half the clients speak it, so work's paying"},
                     {"v": "their grandparents", "reply": "It's what my grandparents spoke, I want it back"}],
    # recipes (recurring)
    "dishes": [{"v": "a beef rendang", "kind": "curry"}, {"v": "homemade gnocchi", "kind": "pasta"}, {"v": "a lemon drizzle cake", "kind": "cake"},
               {"v": "a shakshuka", "kind": "egg dish"}, {"v": "jollof rice", "kind": "rice dish"}, {"v": "a beef wellington", "kind": "roast"},
               {"v": "dumplings from scratch", "kind": "dumplings"}, {"v": "a paella", "kind": "rice dish"},
               {"v": "a tarte tatin", "kind": "dessert"}, {"v": "a Thai massaman", "kind": "curry"}, {"v": "a moussaka", "kind": "bake"}],
    # books (recurring)
    "books": [{"v": "The Salt Path", "by": "Raynor Winn", "genre": "memoir"}, {"v": "Piranesi", "by": "Susanna Clarke", "genre": "novel"},
              {"v": "Project Hail Mary", "by": "Andy Weir", "genre": "sci-fi novel"}, {"v": "Educated", "by": "Tara Westover", "genre": "memoir"},
              {"v": "The Thursday Murder Club", "by": "Richard Osman", "genre": "mystery"}, {"v": "Circe", "by": "Madeline Miller", "genre": "novel"},
              {"v": "Sapiens", "by": "Yuval Noah Harari", "genre": "history book"}, {"v": "Klara and the Sun", "by": "Kazuo Ishiguro", "genre": "novel"},
              {"v": "The Midnight Library", "by": "Matt Haig", "genre": "novel"}, {"v": "Born a Crime", "by": "Trevor Noah", "genre": "memoir"},
              {"v": "Rebecca", "by": "Daphne du Maurier", "genre": "classic"}],
    # concerts (recurring)
    "bands": [{"v": "Arctic Monkeys", "venue": "the O2"}, {"v": "Little Simz", "venue": "Brixton Academy"},
              {"v": "Fleetwood Mac tribute act", "venue": "the Town Hall"}, {"v": "Wet Leg", "venue": "the Roundhouse"},
              {"v": "Coldplay", "venue": "Wembley"}, {"v": "Florence and the Machine", "venue": "Alexandra Palace"},
              {"v": "Khruangbin", "venue": "the Barrowland"}, {"v": "The National", "venue": "the Apollo"},
              {"v": "Fontaines D.C.", "venue": "the Olympia"}, {"v": "Stormzy", "venue": "the Hydro"}],
    # cars
    "cars": [{"v": "a 2015 Honda Jazz", "kind": "hatchback"}, {"v": "a secondhand Toyota Prius", "kind": "hybrid"},
             {"v": "a red Fiat 500", "kind": "small car"}, {"v": "a used Nissan Leaf", "kind": "electric car"},
             {"v": "an old Volvo estate", "kind": "estate"}, {"v": "a Ford Transit camper", "kind": "van"},
             {"v": "a VW Golf", "kind": "hatchback"}],
    "car_prices": ["£4,500", "£7,200", "£11,000", "£3,800", "£9,950", "£6,300"],
    "car_faults": [{"v": "a dead clutch", "reply": "Clutch has gone. Eight hundred quid"}, {"v": "a flat battery", "reply": "Battery, just the battery, phew"},
                   {"v": "a cracked exhaust", "reply": "Exhaust's cracked, hence the tractor noise"},
                   {"v": "worn brake pads", "reply": "Brake pads worn to nothing. Scary, apparently"}],
    # garden
    "crops": [{"v": "tomatoes", "kind": "veg"}, {"v": "courgettes", "kind": "veg"}, {"v": "strawberries", "kind": "fruit"},
              {"v": "runner beans", "kind": "veg"}, {"v": "chillies", "kind": "peppers"}, {"v": "potatoes", "kind": "veg"},
              {"v": "rhubarb", "kind": "fruit"}, {"v": "garlic", "kind": "bulbs"}],
    "pests": [{"v": "slugs", "reply": "Slugs. Hundreds of them. It's war"}, {"v": "pigeons", "reply": "Pigeons, the flying rats, stripped the lot"},
              {"v": "a fox", "reply": "A fox! Dug up everything overnight"}, {"v": "aphids", "reply": "Greenfly. Tiny, evil, everywhere"}],
    "plots": ["an allotment by the railway", "a raised bed in the back yard", "a community garden plot", "the balcony in pots",
              "a patch at my parents' place"],
    # volunteering
    "volunteer_places": [{"v": "a food bank", "task": "sorting donations"}, {"v": "a hospice shop", "task": "pricing clothes"},
                         {"v": "a homework club", "task": "helping kids with maths"}, {"v": "a refugee charity", "task": "teaching English"},
                         {"v": "a befriending service", "task": "phoning lonely older people"}, {"v": "a park conservation group", "task": "clearing brambles"},
                         {"v": "a soup kitchen", "task": "serving meals"}],
    "volunteer_days": ["Saturday mornings", "Tuesday evenings", "every other Sunday", "Wednesday lunchtimes", "Thursday nights"],
    # work conflict
    "conflicts": [{"v": "took credit for their presentation", "reply": "He presented my slides. As his. To the director"},
                  {"v": "kept cancelling meetings", "reply": "She cancels every meeting five minutes before"},
                  {"v": "rewrote their report without asking", "reply": "He rewrote my report and put his name on it"},
                  {"v": "complained about them to the boss", "reply": "Went to the boss behind my back about my hours"}],
    "resolutions": [{"v": "an apology", "reply": "An apology! In writing, even"}, {"v": "a move to a different team", "reply": "They're moving him to another team"},
                    {"v": "mediation with HR", "reply": "HR sat us down. Awkward but fine now"}, {"v": "nothing changed", "reply": "Nothing. Absolutely nothing happened"}],
    # pottery
    "pots": [{"v": "a set of mugs", "kind": "mugs"}, {"v": "a fruit bowl", "kind": "bowl"}, {"v": "a plant pot", "kind": "pot"},
             {"v": "a wonky vase", "kind": "vase"}, {"v": "a teapot", "kind": "teapot"}, {"v": "four side plates", "kind": "plates"}],
    "studios": ["Clayworks on Baker Street", "the Muddy Hands studio", "a night class at the college", "Kiln House",
                "the arts centre", "Wheel & Glaze"],
    # dating
    "date_spots": ["a tapas bar", "the crazy golf place", "a pottery painting café", "a walk along the canal", "a ramen place",
                   "an open-mic night", "a wine bar in town"],
}

POOLS["meet_ways"] = [
    {"v": "on a dating app", "reply": "An app. Swiped right on a whim"},
    {"v": "at a friend's wedding", "reply": "At a wedding, we got seated together"},
    {"v": "at a pub quiz", "reply": "Pub quiz! Their team beat us"},
    {"v": "at a book club", "reply": "Book club, of all places"},
    {"v": "through work", "reply": "Work, different department. Don't tell HR"},
]

POOLS.update({
    # babies
    "baby_names": ["Aurora", "Theo", "Isla", "Arlo", "Nia", "Rufus", "Esther", "Otis", "Wilhelmina", "Jude", "Marigold", "Ezra"],
    "baby_weights": ["7lb 2oz", "8lb 10oz", "6lb 4oz", "9lb exactly", "7lb 13oz", "5lb 11oz"],
    # games
    "games": [{"v": "Elden Ring", "kind": "RPG"}, {"v": "Stardew Valley", "kind": "farming game"}, {"v": "Baldur's Gate 3", "kind": "RPG"},
              {"v": "Hades", "kind": "roguelike"}, {"v": "Zelda: Tears of the Kingdom", "kind": "adventure game"},
              {"v": "Hollow Knight", "kind": "platformer"}, {"v": "Football Manager", "kind": "sports sim"}, {"v": "Disco Elysium", "kind": "RPG"}],
    "game_feats": [{"v": "beat the final boss", "reply": "Final boss down! 47 attempts"}, {"v": "got every achievement", "reply": "Every single achievement. 100%"},
                   {"v": "finished it in one weekend", "reply": "The whole thing, one weekend, no sleep"},
                   {"v": "beat it on the hardest difficulty", "reply": "Hardest difficulty, done. Hands shaking"}],
    # photography
    "cameras": [{"v": "a Fujifilm X-T30", "kind": "mirrorless"}, {"v": "a secondhand Canon 5D", "kind": "DSLR"},
                {"v": "an old Olympus film camera", "kind": "film camera"}, {"v": "a Sony a6400", "kind": "mirrorless"},
                {"v": "a Nikon Z50", "kind": "mirrorless"}, {"v": "a Pentax K1000", "kind": "film camera"}],
    "photo_wins": [{"v": "a photo in the local paper", "reply": "The local paper printed my heron shot!"},
                   {"v": "second place in a competition", "reply": "Came second in the council photo competition"},
                   {"v": "a sold print", "reply": "Someone bought a print! Forty quid"},
                   {"v": "a shot used by a magazine", "reply": "A magazine is using my sunset photo"}],
    # renovation (update)
    "paints": ["sage green", "terracotta", "navy blue", "mustard yellow", "dusky pink", "off-white", "charcoal grey", "duck egg blue"],
    "rooms": ["living room", "bedroom", "kitchen", "hallway", "bathroom"],
    # museums (recurring)
    "exhibitions": [{"v": "the Frida Kahlo exhibition", "museum": "the V&A"}, {"v": "the dinosaur exhibit", "museum": "the Natural History Museum"},
                    {"v": "the Hokusai prints", "museum": "the British Museum"}, {"v": "a Van Gogh immersive thing", "museum": "a warehouse in Shoreditch"},
                    {"v": "the Egyptian mummies", "museum": "the Ashmolean"}, {"v": "the Banksy show", "museum": "a gallery in Bath"},
                    {"v": "a Titanic exhibition", "museum": "the SeaCity museum"}, {"v": "the Yayoi Kusama rooms", "museum": "Tate Modern"},
                    {"v": "the space gallery", "museum": "the Science Museum"}],
    # gadgets
    "gadgets": [{"v": "a Pixel 8", "kind": "phone"}, {"v": "a MacBook Air", "kind": "laptop"}, {"v": "an iPad", "kind": "tablet"},
                {"v": "a Kindle", "kind": "e-reader"}, {"v": "noise-cancelling Sony headphones", "kind": "headphones"},
                {"v": "a Samsung Galaxy", "kind": "phone"}, {"v": "a Steam Deck", "kind": "handheld console"}, {"v": "a Garmin watch", "kind": "smartwatch"}],
    "gadget_faults": [{"v": "the screen cracked", "reply": "Dropped it. Screen's cracked corner to corner"},
                      {"v": "the battery swelled", "reply": "Battery swelled up like a pillow, sent it back"},
                      {"v": "it won't charge", "reply": "Won't charge. Tried three cables"},
                      {"v": "it fell in the bath", "reply": "It went in the bath. Rice did nothing"}],
    # camping
    "campsites": ["the Lake District", "Snowdonia", "a farm near St Ives", "the Isle of Skye", "the New Forest", "Dartmoor",
                  "the Brecon Beacons", "a forest in Norfolk"],
    "camp_mishaps": [{"v": "the tent flooded", "reply": "Tent flooded at 2am. Sleeping bags soaked"},
                     {"v": "cows surrounded the tent", "reply": "Woke up surrounded by cows. A lot of cows"},
                     {"v": "they forgot the tent poles", "reply": "Forgot the poles. Slept in the car"},
                     {"v": "a storm snapped the tent", "reply": "Storm snapped the tent in half"}],
    # side business
    "crafts": [{"v": "soy candles", "kind": "candles"}, {"v": "linocut prints", "kind": "prints"}, {"v": "beaded earrings", "kind": "jewellery"},
               {"v": "crochet plant hangers", "kind": "homeware"}, {"v": "hand-painted tote bags", "kind": "bags"},
               {"v": "dog bandanas", "kind": "pet accessories"}, {"v": "sourdough starter kits", "kind": "kits"}],
    "shopfronts": ["Etsy", "Instagram", "a stall at the Sunday market", "Depop", "a little website", "Folksy"],
    "big_orders": [{"v": "a hotel chain", "reply": "A hotel! They want sixty for their rooms"},
                   {"v": "a wedding", "reply": "A bride wants a hundred for wedding favours"},
                   {"v": "a café", "reply": "The café on the corner wants to stock them"},
                   {"v": "a corporate gift order", "reply": "Some company wants forty for Christmas gifts"}],
    # dance
    "dances": ["salsa", "swing", "tango", "contemporary", "hip hop", "bachata", "ballroom", "Lindy hop", "flamenco"],
    # lost items
    "lost_items": [{"v": "wallet", "kind": "purse"}, {"v": "passport", "kind": "travel document"}, {"v": "keys", "kind": "house keys"},
                   {"v": "wedding ring", "kind": "ring"}, {"v": "laptop bag", "kind": "bag"}, {"v": "bank card", "kind": "card"}],
    "found_places": [{"v": "in the freezer", "reply": "In the freezer. Don't ask"}, {"v": "at the lost property office", "reply": "Someone handed it in at the station"},
                     {"v": "in the car door", "reply": "Down the side of the car door the whole time"},
                     {"v": "in the dog's bed", "reply": "The dog had it in his bed"},
                     {"v": "in a coat pocket", "reply": "In my other coat. The one I was wearing, actually"}],
    # grandparents
    "gp_conditions": [{"v": "a hip replacement", "kind": "operation"}, {"v": "a fall", "kind": "accident"}, {"v": "pneumonia", "kind": "illness"},
                      {"v": "a mild stroke", "kind": "illness"}, {"v": "cataract surgery", "kind": "operation"}],
    "gp_updates": [{"v": "walking again", "reply": "Walking up and down the ward already, bossing the nurses"},
                   {"v": "home from hospital", "reply": "Home! Complaining about the telly, so back to normal"},
                   {"v": "moving into care", "reply": "Moving into a care home next month. It's the right call"},
                   {"v": "needs another operation", "reply": "Needs another operation, sadly"}],
    # birthday
    "ages": ["30th", "40th", "25th", "35th", "50th", "21st", "45th"],
    "party_venues": ["a karaoke bar", "a bowling alley", "my parents' garden", "a rooftop bar", "a curry house", "a boat on the Thames"],
    "gifts": [{"v": "a hot air balloon ride", "reply": "A hot air balloon ride! I'm scared of heights"},
              {"v": "a puppy portrait", "reply": "A painting of me. As a dog. Surprisingly moving"},
              {"v": "concert tickets", "reply": "Tickets to a gig in Berlin"},
              {"v": "a vintage record player", "reply": "A proper old record player"}],
    # tattoo
    "tattoos": [{"v": "a swallow", "kind": "bird"}, {"v": "a compass", "kind": "compass"}, {"v": "their gran's handwriting", "kind": "lettering"},
                {"v": "a sprig of lavender", "kind": "flower"}, {"v": "a tiny wave", "kind": "wave"}, {"v": "a little fox", "kind": "animal"},
                {"v": "a moon phase line", "kind": "moons"}],
    "body_spots": ["inner wrist", "calf", "shoulder blade", "forearm", "collarbone", "behind the ear", "lower back"],
    # yoga
    "yoga_styles": ["hot yoga", "Ashtanga", "yin yoga", "vinyasa", "aerial yoga", "Iyengar"],
    "yoga_feats": [{"v": "a headstand", "reply": "Headstand! Held it for ten seconds"}, {"v": "the splits", "reply": "Full splits. My hamstrings are screaming"},
                   {"v": "crow pose", "reply": "Crow pose, finally, didn't fall on my face"}, {"v": "a wheel", "reply": "Full wheel, back arch and everything"}],
    # podcast
    "pod_topics": [{"v": "true crime in Yorkshire", "kind": "crime"}, {"v": "bad films", "kind": "film"}, {"v": "80s pop", "kind": "music"},
                   {"v": "gardening for beginners", "kind": "gardening"}, {"v": "local history", "kind": "history"},
                   {"v": "women in tech", "kind": "tech"}, {"v": "football tactics", "kind": "football"}],
    "pod_guests": ["a retired detective", "a local MP", "the guy who runs the chippy", "a former Olympic rower", "an author from Wigan"],
    # friend visiting
    "visit_cities": ["Sydney", "Toronto", "Lagos", "Mumbai", "Buenos Aires", "Seoul", "Cape Town", "Berlin", "Chicago"],
    "visit_things": [{"v": "a West End show", "reply": "Dragged them to a West End musical"}, {"v": "Stonehenge", "reply": "Stonehenge! They said it was smaller than expected"},
                     {"v": "a proper pub roast", "reply": "Took them for a Sunday roast, they cried at the Yorkshire puddings"},
                     {"v": "a football match", "reply": "A football match, they loved the chanting"}],
    # neighbours
    "neighbour_issues": [{"v": "a hedge", "reply": "The hedge. It's blocking all my light"}, {"v": "loud parties", "reply": "Parties until 4am, every weekend"},
                         {"v": "parking", "reply": "Keeps parking across my drive"}, {"v": "a barking dog", "reply": "That dog barks nine hours a day"},
                         {"v": "bins", "reply": "Leaves their bins outside my front door"}],
    "neighbour_ends": [{"v": "a mediator", "reply": "The council sent a mediator"}, {"v": "cake and an apology", "reply": "Came round with a cake and said sorry!"},
                       {"v": "they moved out", "reply": "They've moved out. Problem solved, I guess"}, {"v": "a solicitor's letter", "reply": "Sent a solicitor's letter"}],
    # skiing
    "resorts": ["Val Thorens", "Chamonix", "Whistler", "St Anton", "Niseko", "Les Arcs", "Cervinia", "Zermatt", "Andorra"],
    "ski_feats": [{"v": "a black run", "reply": "A black run! On purpose!"}, {"v": "going off-piste", "reply": "Went off-piste with a guide"},
                  {"v": "snowboarding", "reply": "I switched to a snowboard. Fell 200 times"}, {"v": "a ski jump", "reply": "Did a small jump in the park"}],
    # chess
    "chess_events": ["the county chess congress", "a rapid tournament at the library", "the club championship", "a blitz event in a pub",
                     "an online league final"],
    "chess_results": [{"v": "won it", "reply": "Won the whole thing!!"}, {"v": "came third", "reply": "Third place, a tiny trophy"},
                      {"v": "lost every game", "reply": "Lost every game. Every one"}, {"v": "beat a grandmaster", "reply": "Beat a grandmaster in the simul!"}],
    # kids
    "schools": ["St Mary's Primary", "Oakfield Primary", "Hillside Infants", "Riverbank School", "Greenway Primary", "Elm Park Academy"],
    # fillers
    "fill_foods": ["a meal deal", "cereal", "cheese on toast", "half a lasagne", "a sad salad", "a jacket potato", "a kebab",
                   "some questionable sushi", "the last of the crumpets", "a pot noodle"],
    "fill_shows": ["that baking show", "the quiz on BBC Two", "a documentary about sharks", "the snooker", "some reality nonsense",
                   "the weather forecast, riveting stuff"],
    "fill_places": ["the dentist's waiting room", "Lidl", "the recycling centre", "the launderette", "the sorting office", "B&Q", "the GP surgery",
                    "the big Sainsbury's", "the petrol station"],
    "fill_jobs": ["the washing up", "my emails", "the hoovering", "my expenses", "changing the bed", "the shopping list", "the garden"],
    "fill_times": ["at 6am", "at midnight", "before 8", "at half seven", "at 2 in the morning", "by 10"],
    "fill_prices": ["£2.80", "£15", "£3.50", "£40", "£9.99", "£120"],
})

_LEADIN = ["[Ok so|Right so|So] [news|big news|update time]", "You'll [never|not] guess what [happened|I did]", "[Brace yourself|Sit down for this]",
           "[Got|I have] [a story|gossip] for you", "[Oh|Ooh], [before I forget|while I remember]", "[Small|Big] life update"]
_TP = "[| How do you feel?| I need the full story next time.| Proper milestone, that.| Knew you'd manage it.| We should toast to that.| What a week for you.| You must be buzzing.|]"
_TN = "[| Shout if I can do anything.| Hope it's sorted soon.| Honestly not fair.| Sending strength.| That's properly rotten luck.|]"
_TU = "[| Every day's a school day.| Who knew.| Makes you wonder.| My mum says the same thing, weirdly.|]"

FILLER = {
    "leadin": _LEADIN,
    "prefix": ["To be fair, ", "Mind you, ", "Anyway, ", "Listen, ", "Well, ", "Not gonna lie, ", "Oh, ", "Okay, ", "Look, ",
               "Funny thing, ", "Speaking of which, ", "Ha, ", "Um, ", "Right so "],
    "suffix": [" 😂", " hah", "!!!", ", you know?", " for real", " :D", " 🙈", "…", " xx", " 😬", ", mind", " honestly", " 👍"],
    "lowercase_ok": ["went", "got", "saw", "finally", "started", "bought", "tried", "did", "had", "found", "made", "took",
                     "just", "booked", "spent", "signed"],
    "greet": {
        "morning": ["[Morning|Top of the morning|Good morning], {O}! [Slept well?|Are you alive?|How's the commute?|Kettle on?]",
                    "[Early one|Up with the larks], {O}. [Got a minute before work?|Are you awake?|Fancy a chat?]",
                    "[Morning morning|Hiya, morning]! [Brain's not working yet|On my second coffee|Still in my dressing gown]"],
        "afternoon": ["[Afternoon|Hey there], {O}! [Got a sec?|How's the day shaping up?|Escaped the office yet?]",
                      "[Hiya|Hey] {O}, [on a break|hiding in the stairwell|avoiding a spreadsheet], [how are you?|what's new?]",
                      "[Quick afternoon hello|Afternoon check-in] [from a very boring meeting|from the car park|from my sofa]"],
        "evening": ["[Evening|Hey], {O}! [Finally done for the day?|Busy day?|Dinner sorted?]",
                    "[Hiya|Heya] {O}, [feet up at last|just put the kettle on|finally home from work]",
                    "[You still up?|Are you around tonight?] [Got news|Need a natter|Fancy a catch-up]"],
        "any": ["[Heya|Hiya|Hey you] {O}! [How's tricks?|What's the latest?|How are you keeping?|Been too long]",
                "{O}! [Long time no chat|Finally caught you|Where've you been hiding?]",
                "[Hello hello|Knock knock|Oi oi] [{O}|stranger]! [Got a sec?|You about?]",
                "[Hey|Hi|Hiya], sorry I've been [rubbish at replying|a ghost|MIA] [lately|this month|for weeks]",
                "[Hey|Hiya] {O}, [how's your week been?|what's happening?|how's everything?]"],
    },
    "greet_reply": ["[Heya!|Oh hello!|Hiya!] [Not too bad|Muddling along|All good], [yourself?|how about you?|what's new?]",
                    "[Ha, speak of the devil|Oh perfect|Good timing], I was [just about to text you|thinking about you|about to call]",
                    "[Hey hey|Hiya|Oh hi] {O}! [Yes I'm here|Yep, free for a bit|Go for it]",
                    "[Not bad|Surviving|Bit tired], [busy week|long day|lots going on], [you?|and you?|how about yourself?]",
                    "[Evening!|Hello!|Hey!] [It has been too long|Missed you|Finally]"],
    "close": ["[Okay|Right|Anyway] I'd [better|best] [crack on|go and make tea|get some sleep|get back to it]. [Speak soon!|Catch you later|Bye for now]",
              "[Ah|Argh], [the delivery's here|my train's pulling in|the baby's awake|my lunch is over], [gotta go|must fly]!",
              "[Let's|We should] [grab a coffee|do a proper call|meet up] [soon|next week|before the month's out], yeah?",
              "I'm [yawning my head off|dropping off|cream crackered], [night night|speak tomorrow|more soon]",
              "[Okay|Right], [off I pop|that's me|I'm signing off]. [Give everyone my love|Look after yourself|Have a good one]!"],
    "close_reply": ["[Night!|Cheerio!|Bye!|Catch you later] [xx|:)|!|👋]", "[Yes please|Definitely|Absolutely], [let's|sounds good]! [Bye for now|Speak soon|Take it easy]",
                    "[Go!|Off you go]! [haha|😂|lol]", "[No worries|Okay lovely|Sure], [night|ta-ra|bye] {O}", "[Sleep tight|Enjoy your evening|Good luck with everything] [x|!|:)]"],
    "react_pos": ["[Oh my days|Get in|Brilliant|Whoa|Ooh], [that's fantastic|what great news|I'm made up for you|what a win]!" + _TP,
                  "[Ha|Hah], [you absolute star|nice one|fair play to you|look at you go]" + _TP,
                  "[Truly|Properly|Genuinely] [chuffed for you|thrilled for you|delighted]" + _TP,
                  "[Hang on|Wait a sec], [really?|for real?|no kidding?] [That's ace|Fair play|Smashing]!" + _TP,
                  "[Yay|Woohoo|Hooray][ 🎉|!|!!]" + _TP, "[So jealous|Aw lovely|Sounds amazing], [send pics|I want to hear more|good on you]" + _TP,
                  "[Finally!|At last!] [You earned that|Good things come to those who wait]" + _TP],
    "react_neg": ["[Oh heck|Oh dear|Bloody hell], [that's grim|I'm really sorry|what a faff|that's rough]" + _TN,
                  "[Nooo|Oh god|Ah no]. [Are you alright?|That's awful|How stressful]" + _TN,
                  "[Rotten luck|What a palaver|Horrible], [hope it's sorted soon|keep me posted|let me know how it goes]" + _TN,
                  "[Ouch|Oof|Eek], [poor thing|big hugs|that's not fun]" + _TN, "[Blimey|Crikey]. [That's a lot to deal with|What a time of it]" + _TN],
    "react_neutral": ["[Hah|Huh], [fancy that|who'd have thought|I'd never have guessed]" + _TU, "[No way?|Really?] [That's news to me|Funny that]" + _TU,
                      "[Fair enough|Fair dos], [I suppose|when you put it like that|can't argue]" + _TU, "[Haha|Hah] [so true|too right|spot on]" + _TU,
                      "[Hmm|Ooh], [not sure about that|could be|you might be right]" + _TU, "[Bonkers|Nuts], [isn't it|really]" + _TU,
                      "[Yep|Yeah], [I've heard that|same over here|my cousin swears by that]" + _TU],
    "ack": ["[Cheers|Ta very much]! [Still sinking in|Bit of a whirlwind|Can't quite believe it]", "[Hah|Haha] [tell me about it|don't I know it|yep]",
            "[I know, right?|Honestly!|Exactly that]", "[Aw ta|Thanks lovely|Appreciate it] [x|:)|!]", "[Yeah|Mm], [we'll see how it goes|fingers crossed|touch wood]"],
    "backchannel": ["Oh yeah?", "Go on then", "Mhm", "Ooh?", "And then?", "No!", "Uh huh", "Really?"],
    "cue": ["[So|Anyway|Right], [what's the news with you?|anything exciting happening?|what's new in your world?]",
            "How are things [with you|your end|over there] [these days|at the moment]?", "[Go on|Come on], tell me [some gossip|something cheerful|what you've been up to]",
            "What's been happening [lately|this week|since I last saw you]?", "[So|Anyway], how's everything going [generally|at your end]?"],
    "smalltalk": [
        ["The weather's been [all over the place|absolutely miserable|bizarrely sunny] [this week|lately|since Monday]", "[Tell me about it|Same here|Don't get me started], I've had [four seasons in a day|the heating on in June|to buy a new brolly]"],
        ["[Caught|Watched] {*fill_shows} last night [with a takeaway|in bed|instead of sleeping]", "[Ha|Lol], [rock and roll|living the dream|that's my Friday sorted too]"],
        ["I've been putting off {*fill_jobs} [for days|all week|since the weekend]", "[Same|Snap], {*fill_jobs} is [glaring at me|on tomorrow's list|never-ending]"],
        ["Had {*fill_foods} for [tea|lunch|brekkie] [again|today], [very nutritious|chef's kiss|such glamour]", "[Ha|Haha], I had {*fill_foods} so no judgement here"],
        ["I was in {*fill_places} [this morning|at lunchtime|for an hour] and [bumped into my old teacher|the queue was endless|the card machine was broken]", "[Classic|Typical|Of course], [it's always the way|nothing ever runs smoothly]"],
        ["[Our|My] [boiler|washing line|doorbell] [is playing up|has broken|went funny] again", "[Ugh|Nightmare|Oh no], [they never go wrong at a good time|call a bloke|give it a kick]"],
        ["My [upstairs|next-door|opposite] neighbours are [having a loft done|drilling every morning|learning the bagpipes]", "[Ha|Oh no|Dear me], [earplugs time|that's character building|poor you]", "[Yeah|Mm], {*fill_times} as well"],
        ["I'm [desperate|gagging|dying] for a [proper break|week off|long lie-in]", "[Same|Aren't we all], [even a day by the sea would do|roll on the summer|one day]"],
        ["Did you see the price of [petrol|butter|train tickets] [this week|now|lately]? [Madness|Daylight robbery]", "[I know|Honestly], I paid {*fill_prices} for [a sandwich|parking|a pint] the other day"],
        ["Stayed up [way too late|till silly o'clock|until 1am] [watching videos of cats|reading about shipwrecks|doing a jigsaw]", "[Hah|Been there], [the internet rabbit hole|no regrets though|worth it?]"],
        ["Oh, I still have your [tupperware|book|scarf] by the way", "[Ha|Oh], [keep it|I'd forgotten|no rush], [it's yours now|I'll grab it next time]"],
        ["When's the next [bank holiday|long weekend|day off]? I need to [plan something|not move|sleep for a week]", "[Ages away|Not for ages], [I checked|sadly|I'm counting the days]"],
        ["[I'm|Feeling] [shattered|wrecked|drained] after [this week|that weekend|the last few days]", "[Big one?|What happened?|Good tired or bad tired?]", "[Bit of both|Just too much on|Life, mostly], [honestly|to be fair]"],
        ["[Battery's|Phone's] about to die, so if I go quiet that's [why|the reason]", "[No worries|Understood|Ha okay], [charge it|go plug in]"],
        ["Had a [bizarre|proper weird|vivid] dream [about work|about you|that I could fly] last night", "[Hah|Ooh], [were we famous?|what happened?|dreams are so odd]"],
        ["Have you ever tried [those recipe boxes|a smoothie maker|meal prepping on Sundays]?", "[Gave up after a week|Once, never again|Lasted a fortnight], [too much faff|too much washing up|got bored]"],
        ["The [bin men|postman|recycling lorry] skipped our road [again|this week|twice now]", "[Not again|Seriously?|Typical], [you should report it|ring them up|leave a note]"],
        ["I [finally|at last] [defrosted the freezer|sorted the sock drawer|cleared the junk drawer] and [found three single gloves|it took all day|I feel reborn]", "[Ha|Amazing|Nice], [very productive|adulting achieved|come do mine]"],
        ["Got any plans for [the weekend|Saturday|the bank holiday]?", "[Not really|Nothing yet|Sofa mostly], might [do {*fill_jobs}|see my mum|go for a wander]"],
        ["I'm [in bed by ten|up at six|drinking herbal tea] these days like a [pensioner|proper adult|granny]", "[Ha|Lol], [honestly bliss|join the club|it's the dream]"],
        ["Treated myself to a new [frying pan|coffee machine|pair of slippers] and I'm [irrationally excited|obsessed|quite emotional]", "[Ha|Aw], [the little things|you deserve it|adulthood in a nutshell]"],
        ["The [buses|trains|trams] were [all over the place|cancelled|rammed] {*fill_times}", "[Ugh|Nightmare|Standard], did you [make it in|get a seat|give up]?", "[Just about|Barely|Eventually], [an hour late|standing all the way|with a very sore back]"],
        ["I really must [book the dentist|sort my car insurance|get my eyes tested]", "[Same|Haha], mine's been [overdue|on the list|nagging me] for [months|a year|ages]"],
        ["Is it too [early|soon] to [get the big coat out|put the fire on|stock up on mince pies]?", "[Never|Nope], [do it|comfort comes first|I'm already there]"],
        ["What's for [tea|dinner] [tonight|at yours]?", "[Fish fingers|Stir fry|No idea, toast probably], [yourself?|you?|what about you?]", "[Leftovers|A takeaway, sadly|Soup from a tin], [glamorous|living large]"],
        ["Sorry I [went AWOL|disappeared|didn't reply] [yesterday|on Sunday|last week], it was [manic|mental|a blur]", "[Don't be daft|No bother|No worries], [me too|I get it|happens to everyone]"],
        ["Found [a tenner|twenty quid|a gift card] in my [jeans|old handbag|jacket] [this morning|earlier|yesterday]", "[Result!|Ooh lucky|Lovely], [treat time|free money]"],
        ["My [gran|uncle|dad] has just discovered [GIFs|voice notes|the family group chat] and it's [chaos|relentless|adorable]", "[Hah|Haha], mine [sends photos of his dinner|replies 'ok' to everything|types in capitals]"],
        ["I walked past that [pub|café|chip shop] we used to go to, it's [a vape shop|boarded up|a bank] now", "[No way|Nooo|Gutted], [end of an era|they did the best chips|so many memories]"],
        ["Thinking of [dyeing my hair|getting a fringe|growing a moustache] [for a change|just because|for charity]", "[Go for it|Why not|Do it], [it grows back|you only live once]"],
        ["Spent [an hour|45 minutes|most of lunch] on hold to [the council|my phone company|the GP] [today|this morning]", "[Ugh|The worst|Ridiculous], did you get anywhere?", "[Nope|Kind of|They hung up], [tomorrow's problem|I give up]"],
        ["[All my|My] [basil|houseplants|succulents] [are wilting|have died|look sad] [again|already]", "[Too much water?|Not enough sun?|Sing to them], [works for my nan|apparently]"],
        ["Can't believe it's [Thursday|Friday|nearly the weekend] already", "[I know|Where's the week gone|About time], [flown by|thank goodness]"],
        ["My [shoulders|knees|neck] are [so stiff|creaking|in bits] from [the laptop|the new chair|sleeping funny]", "[Stretch!|Get a massage|Same], we're [getting old|falling apart]"],
        ["Have you sorted anything for [Christmas|the summer hols|half term] yet?", "[Not yet|Nope|Starting to panic], it's all [so pricey|booked up|a headache]"],
        ["The [internet|wifi|telly] keeps [cutting out|buffering|freezing] [tonight|all week|every evening]", "[Same here|Ugh|Classic], [switch it off and on|ring them up|threaten to leave them]"],
        ["[Saw|Heard] a [badger|owl|hedgehog] [outside|in the garden|on the street] [last night|at 3am|earlier]", "[Ooh|Eek|Wow], [that's lovely|terrifying noise|lucky you]"],
        ["I've got to buy [a new coat|work shoes|a suit] and I'd rather [eat a wasp|do my taxes|walk on Lego]", "[Ha|Same], [order online and send back|get it over with|take me with you]"],
        ["It's been [a year|ages|nearly two years] since [that barbecue at yours|the karaoke night|we went camping], hasn't it", "[Madness|I know|Scary], we [need a repeat|should do it again|must plan something]"],
        ["My [laptop|car|kettle] is making [a funny whirring|a strange rattle|an odd hum] [again|lately|today]", "[Uh oh|Not good|Ignore it], [it's probably fine|famous last words]"],
        ["[Work's|The office is] [dead quiet|absolutely hectic|bonkers] [today|this week|at the moment]", "[Make the most of it|Hang in there|Same here], [Friday's coming|nearly there]"],
        ["Had a go at [baking bread|a new curry|homemade soup] [last night|on Sunday|yesterday] and it was [alright|a triumph|inedible]", "[Ha|Ooh], [save me a bit|you tried|props for trying]"],
        ["Parking at [the station|the hospital|town] has gone up to {*fill_prices} [a day|an hour|now]", "[Scandalous|Robbery|Wow], [I'll stick to the bus|that's shocking]"],
        ["I keep getting [spam calls|those parcel scam texts|emails from my old gym] [every day|constantly|all week]", "[Block them|Same|Ugh], [they never stop|they've got my number too]"],
        ["Do you reckon it's worth getting [a heated airer|an air fryer|a robot hoover]? Everyone's raving about them", "[Mine's brilliant|Never had one|My sister loves hers], [go for it|depends on the price]"],
        ["My [eye|knee|tooth] has been [twitching|aching|clicking] [all day|for a week|since Monday]", "[Stress?|Too much coffee?|Get it checked], [just in case|to be safe]"],
        ["Went for a long walk [by the river|up the hill|round the park] [this morning|at lunch|earlier] and [saw about fifty dogs|got caught in the rain|felt human again]", "[Lovely|Nice|Ha], [needed that|you've earned a biscuit]"],
        ["So the thing about [working from home|open-plan offices|hot-desking] is that [nobody can find anyone|I talk to the cat all day|my back hates it], and honestly [I'm not sure I could ever go back|it's driving me slowly round the bend|I think it's made me a worse person but a happier one]", "[Ha|Haha], [couldn't agree more|you're not alone|same boat]"],
        ["My [cousin|aunt|brother-in-law] spent [the entire|the whole] Sunday lunch explaining [cryptocurrency|his diet|the offside rule] to everyone, and [nobody had the heart to stop him|we all just nodded|I think my nan fell asleep], so that was [a highlight|fun|an experience]", "[Oh no|Hahaha|Bless him], [every family has one|sounds exhausting]"],
        ["[Took|I took] [my nephew|my niece|the kids next door] to [the zoo|the aquarium|a soft play place] [on Saturday|at the weekend] and [I think I'm more tired than after a marathon|they wanted to see the same penguin eleven times|I lost my voice from shouting over the noise], [never again|until next time obviously]", "[Ha|Aw|Lol], [brave of you|sounds like a good auntie-uncle day|respect]"],
        ["[Our|My] [team|department] is being [restructured|merged with another one|moved to a new floor] [again|for the third time in two years], and nobody will tell us [what it means|who we'll report to|where the kettle is going], [so I'm just keeping my head down|so everyone's job-hunting on their lunch break]", "[Ugh|Classic|Nightmare], [the joys of corporate life|hang in there]"],
        ["[So|Right], [the bloke who fixed|the man who came to fix] [our washing machine|the boiler|the leaky tap] [told me his whole life story|stayed for three cups of tea|showed me photos of his pigeons], which was [lovely honestly|a lot for a Tuesday morning|weirdly the highlight of my week]", "[Ha|Aw], [the best kind of tradesman|did he fix it at least?]"],
        ["[Spent|I spent] [the whole evening|all of Sunday|three hours] trying to [assemble a wardrobe|put up a shelf|fix the wobbly table] with [an Allen key and optimism|the wrong screws|instructions that were just pictures of a smiling man], and [it's still wonky|there are four pieces left over|I've given up]", "[Hah|Oh no|Classic], [flat-pack always wins|call a handyman]"],
        ["My [sister|cousin|best mate from school] has started [sending me voice notes that are nine minutes long|a sourdough account on TikTok|doing crossfit] and [I don't know how to tell her I never listen to them|now it's all she talks about|she's insufferable but I love her]", "[Hahaha|Ha|Lol], [speed them up|every family has one]"],
        ["[Honestly|I swear], [the self-checkout|the parking machine|my printer] [hates me|has a personal vendetta against me], [it|the thing] [told me there was an unexpected item|ate my coins|jammed] [three times|twice] [before I gave up and walked off|and a teenager had to come and help me]", "[Hah|Oh dear], [machines are not your friend|been there]"],
    ],
}

FRAMES = [
    # ------------------------------------------------------------------ 1 pet
    dict(
        id="pet",
        slots={"pet": "pets", "petname": "pet_names", "shelter": "shelters", "issue": "vet_issues"},
        anchor="{he} got {his} {pet.kind}",
        steps=[
            dict(k="adopt", say=[
                "We picked up {pet} from {shelter} {ago}! I'm in love",
                ["~{O} guess what", ">What??", "I've got {pet}. From {shelter}. Brought it home {ago}"],
                "So the flat now contains {pet}. Collected from {shelter} {ago}, zero regrets",
                "Brought {pet} home {ago} from {shelter}. Nobody slept last night",
                "Guess who's got {pet}?? Me. {shelter} had it for months and I couldn't say no",
            ]),
            dict(k="name", gap=[0, 2], say=[
                "We've settled on {petname}. [It just fits|Suits the little face]",
                "Official name: {petname}. Took us three days of arguing",
            ], pair=[["Have you decided what to call the new arrival?", "{petname}! [Perfect, right?|Don't laugh]"],
                     ["So what's the name in the end?", "{petname}. Non-negotiable"]]),
            dict(k="vet", gap=[1, 4], mood="-", say=[
                "Took the {pet.young} in for a check-up {ago}, turns out it's {issue}",
                ["~Vet bills, here we go", "The [little one|{pet.young}] has {issue}. Poor baby"],
            ], pair=[["What did the vet say about the {pet.young}'s {issue.part}?", "{issue.reply}"],
                     ["Is the [little one|{pet.young}] ok? You said something about the {issue.part}", "{issue.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["adopt"], ask=["What animal did {N} take in?", "What sort of animal did {N} bring home?", "What new pet does {N} have?"], a="{pet}"),
            dict(c="single", ev=["adopt"], ask=["Where did {N} get {his} {pet.kind} from?", "Which organisation did {N}'s new companion come from?"], a="{shelter}"),
            dict(c="when", ev=["adopt"], ask=["When did {N} get {his} {pet.kind}?", "When did {N}'s new animal arrive?"]),
            dict(c="single", ev=["name"], ask=["What is {N}'s {pet.kind} called?"], a="{petname}"),
            dict(c="ell", ev=["vet"], ask=["What health problem did {N}'s {pet.kind} turn out to have?", "What did the vet say was wrong with {N}'s {pet.kind}?", "What was wrong with {N}'s animal at the check-up?"], a="{issue}"),
            dict(c="multi", ev=["adopt", "name"], ask=["What's the name of the {pet.kind} {N} collected from {shelter}?"], a="{petname}"),
        ],
        cue=["How's the new furball?", "How's the little one settling in?"],
        noise=[
            "My [neighbour's|landlady's|colleague's] dog [barks at the postman every single morning|ate a whole birthday cake|has its own fan club]",
            "[Do you think|I wonder if] rescue centres are too strict? My cousin got turned down for having a small garden",
            "There's a [cat|dog] on my street that [visits every house for treats|sits on cars|follows the bin lorry], everyone's adopted it",
            "I saw a man walking {*pets} on a lead in the park, [wild|actual scenes|iconic]",
            "Pet insurance is [so expensive|a scam|basically a second mortgage] now, I read an article about it",
            "[My|Our] childhood [hamster|goldfish|budgie] was called {*pet_names}, [RIP|bless it|what a legend]",
        ],
    ),
    # ------------------------------------------------------------------ 2 job (update)
    dict(
        id="job",
        slots={"job1": "employers", "job2": "employers", "role1": "roles", "role2": "roles"},
        shareable=False,
        anchor="{he} started at {job1}",
        steps=[
            dict(k="first", say=[
                "First day at {job1} {ago}! {Role1.v}. Everyone's lovely so far",
                ["~Got some news", "I've started at {job1}! {Role1.v}. First week done"],
                "Signed the contract with {job1} {ago}. Going to be their {role1}",
                "Started as {role1} at {job1} {ago}, brain is full",
            ]),
            dict(k="second", gap=[4, 9], say=[
                "Handed in my notice! I'm leaving for {job2}, {role2} there",
                ["~Plot twist", "New job. {job2}. I start next month as {role2}"],
                "So I've moved to {job2}. {Role2.v}, better pay, shorter commute",
            ]),
        ],
        qs=[
            dict(c="now", ev=["second"], ask=["Where does {N} work now?", "Where did {N} hand in {his} notice to go?", "Who is {N}'s current employer?", "Which company employs {N} at the moment?"], a="{job2}"),
            dict(c="before", ev=["first", "second"], ask=["Where did {N} work before {his} current job?", "What was {N}'s previous employer?"], a="{job1}"),
            dict(c="single", ev=["first"], ask=["What position did {N} take when {he} started {his} first new job?"], a="{role1}"),
            dict(c="when", ev=["first"], ask=["When did {N} begin working at the {job1.kind}?"]),
            dict(c="now", ev=["second"], ask=["What job title does {N} have now?"], a="{role2}"),
        ],
        cue=["How's the new place treating you?", "Work still good?"],
        noise=[
            "[My brother|A mate of mine|Someone I know] just got a job at {*employers}, [the interview was six rounds|they've got a slide in the office|the pay is ridiculous]",
            "Do you think anyone actually [enjoys|reads] job descriptions? 'Fast-paced environment' means chaos",
            "I saw an advert for a {*roles} position that wanted ten years' experience for entry level, [lol|brilliant|classic]",
            "[Honestly|I reckon] the four-day week should be everywhere, some firm near me is trialling it",
            "A recruiter messaged me about a {*roles} role [in Aberdeen|that pays in exposure|at a company I've never heard of]",
        ],
    ),
    # ------------------------------------------------------------------ 3 moving (update)
    dict(
        id="moving",
        slots={"city1": "cities", "city2": "cities", "reason": "move_reasons"},
        shareable=False,
        anchor="{he} moved to {city1}",
        steps=[
            dict(lead=True, k="first", say=[
                "We got the keys {ago}! Officially a {city1} resident",
                ["~Boxes everywhere", "Moved to {city1} {ago}. Can't find a single mug"],
                "I've done it, I've moved to {city1}. Flat's tiny but I love it",
            ], pair=[["Why there though?", "{reason.reply}"], ["What made you pick it?", "{reason.reply}"]]),
            dict(k="second", gap=[4, 9], say=[
                "Moving again! {City2.v} this time. The {city1} flat was just too damp",
                ["~Promise not to laugh", "I'm relocating. To {city2}. Lease signed"],
                "Last night in {city1}, the van comes tomorrow and then it's {city2}",
            ]),
        ],
        qs=[
            dict(c="now", ev=["second"], ask=["Which city does {N} live in now?", "Where has {N} moved to most recently?", "Where is {N} based these days?"], a="{city2}"),
            dict(c="before", ev=["first", "second"], ask=["Where did {N} live before {city2}?", "What was {N}'s previous home town?"], a="{city1}"),
            dict(c="ell", ev=["first"], ask=["Why did {N} relocate to {city1}?", "What made {N} pick {his} first new city?"], a="{reason}"),
            dict(c="when", ev=["first"], ask=["When did {N} settle into {his} first new home?", "When did {N} relocate the first time?"]),
        ],
        cue=["How's the new place?", "Settled in yet?"],
        noise=[
            "[Moving house|Moving flat] is [the most stressful thing|worse than a breakup|pure chaos], I read that somewhere",
            "My [sister|friend from school|old flatmate] is thinking about {*cities}, [is it nice?|what's it like?|any good?]",
            "There's a film about someone moving to {*cities} and starting a bakery, very twee",
            "Rents in {*cities} have gone [mad|through the roof|silly] apparently",
            "Every time I see a removal van I feel [anxious|sympathy|tired] for whoever's moving",
        ],
    ),
    # ------------------------------------------------------------------ 4 instrument
    dict(
        id="instrument",
        slots={"inst": "instruments", "teacher": "@name", "piece": "pieces", "recital": "recitals"},
        anchor="{he} started {inst} lessons",
        steps=[
            dict(k="start", say=[
                "Had my first {inst} lesson {ago}! My teacher {teacher} is very patient",
                ["~Midlife crisis incoming", "I bought a {inst} and had my first lesson {ago}, with someone called {teacher}"],
                "Started learning the {inst} {ago} with a teacher called {teacher}. The neighbours hate me already",
                "{ago} was lesson one on the {inst}, with {teacher}. Fingers hurt",
            ]),
            dict(lead=True, k="recital", gap=[2, 6], say=[
                "Played {piece} at the student concert {ago}. Shaking the whole time",
                ["~Recital day", "Did {piece} in front of people {ago}. Survived"],
            ], pair=[["How did the recital go?", "{recital.reply}"], ["Tell me about the performance!", "{recital.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What instrument is {N} learning?", "What instrument did {N} start learning?", "Which instrument did {N} take up?"], a="{inst}"),
            dict(c="single", ev=["start"], ask=["Who is {N}'s music tutor?"], a="{teacher}"),
            dict(c="when", ev=["start"], ask=["When did {N} start studying music?"]),
            dict(c="single", ev=["recital"], ask=["What piece did {N} perform at the student show?", "Which tune did {N} play for an audience?"], a="{piece}"),
            dict(c="ell", ev=["recital"], ask=["How did {N}'s first performance go?", "How did {N}'s recital go?"], a="{recital}"),
            dict(c="multi", ev=["start", "recital"], ask=["Which {inst.kind} did {N} play {piece} on?"], a="{inst}"),
        ],
        cue=["How's the practice going?"],
        noise=[
            "[Someone|A busker] outside the station was playing the {*instruments} [beautifully|badly|at 8am], [made my morning|no idea why]",
            "My [niece|nephew] has taken up the {*instruments} and [the whole house suffers|it's actually sweet|it's loud]",
            "Do you think it's too late to learn an instrument as an adult? Asking for a friend",
            "There's a [jazz|folk|classical] night at the pub on Thursdays, [want to go?|it's free|proper talent]",
        ],
    ),
    # ------------------------------------------------------------------ 5 race (recurring)
    dict(
        id="race",
        slots={"race": "races"},
        repeat=True,
        steps=[
            dict(k="run", say=[
                "Ran {race} {ago}! {race.time}, legs are jelly",
                ["~Medal acquired", "{race}, done {ago}. {race.time}. Can't walk"],
                "Finished {race} in {race.time} {ago}, way better than I hoped",
                "{ago} was {race}. Hit the wall at halfway but crossed the line in {race.time}",
            ]),
        ],
        qs=[
            dict(c="single", ev=["run"], ask=["What was {N}'s finishing time in {race}?", "How long did {race} take {N}?"], a="{race.time}"),
        ],
        tq=dict(ev=["run"], ask=["Which running event did {N} take part in {T}?", "What race did {N} do {T}?", "{T}, which event did {N} run?"], a="{race}"),
        agg=dict(ev=["run"], ask=["Which races has {N} completed?", "What running events has {N} taken part in?"], item="{race}"),
        noise=[
            "[The marathon|A fun run] closed [half the roads|my street] [on Sunday|this weekend], [chaos|couldn't get anywhere]",
            "I don't understand people who run for fun, my knees hurt watching",
            "Someone at work ran {*races} dressed as a [banana|rhino|Dalek]",
            "[My|Our] running app says I've done 2k this month. Impressive",
        ],
    ),
    # ------------------------------------------------------------------ 6 trip (recurring)
    dict(
        id="trip",
        slots={"dest": "trips", "buddy": "@name"},
        repeat=True,
        steps=[
            dict(k="go", say=[
                "Back from {dest.place} with {buddy}! {Dest.thing} were unreal",
                ["~Tanned and broke", "Just got back from {dest.place} with {buddy}. {Dest.thing}!!"],
                "Flew home from {dest.place} {ago}. {buddy} and I already miss {dest.thing}",
                "{ago} {buddy} and I landed back from {dest.place}. {Dest.thing}, honestly, best week in years",
            ]),
        ],
        qs=[
            dict(c="single", ev=["go"], ask=["Who went with {N} to {dest.place}?"], a="{buddy}"),
            dict(c="single", ev=["go"], ask=["What did {N} love most about {dest.place}?"], a="{dest.thing}"),
        ],
        tq=dict(ev=["go"], ask=["Where did {N} go on holiday {T}?", "Which country did {N} visit {T}?", "{T}, where did {N} travel abroad?"], a="{dest.place}"),
        agg=dict(ev=["go"], ask=["Which places has {N} travelled to?", "Where has {N} been on holiday abroad?"], item="{dest.place}"),
        noise=[
            "[My parents|My aunt|Someone at work] just booked {*trips.place}, [so jealous|they're retiring there|three weeks!]",
            "Flights are so expensive now, I'm holidaying in my garden",
            "Do you think travel insurance is worth it? My friend's never bought it",
            "There's a documentary on about {*trips}, [looks stunning|it's on my list]",
            "[The airport|Border control] was [a zoo|two hours|chaos] when I picked my brother up",
        ],
    ),
    # ------------------------------------------------------------------ 7 injury
    dict(
        id="injury",
        slots={"injury": "injuries", "cause": "injury_causes"},
        steps=[
            dict(k="hurt", mood="-", say=[
                "So I've got {injury}. {Cause.v}, {ago}. Idiot",
                ["~Guess who's in A&E", "{Injury.v}. From {cause}"],
                "Ended up in A&E {ago} after {cause}. {Injury.v}, apparently",
            ]),
            dict(k="heal", gap=[2, 5], say=[
                "Physio says my {injury.part} is nearly back to normal, walking without the crutch since {ago}",
                "The {injury.part} is so much better! Back at the gym next week",
            ], pair=[["How's the {injury.part} doing?", "[Loads better|Nearly there]! [Physio's a miracle worker|Back to normal soon]"]]),
        ],
        qs=[
            dict(c="single", ev=["hurt"], ask=["What injury did {N} suffer?", "What did {N} end up in A&E with?", "How did {N} hurt {himself}?"], a="{injury}"),
            dict(c="single", ev=["hurt"], ask=["What was {N} doing when {he} got hurt?", "How did {N} end up in A&E?", "What caused {N}'s accident?"], a="{cause}"),
            dict(c="when", ev=["hurt"], ask=["When did {N} have {his} accident?", "When did {N} end up in the emergency department?"]),
            dict(c="multi", ev=["hurt", "heal"], ask=["Which body part was {N} recovering, and how did {he} damage it?"], a="{injury}, from {cause}"),
        ],
        noise=[
            "I [twisted|tweaked] my back picking up a sock once. A sock",
            "[A&E|The walk-in centre] near me has a six-hour wait, [someone posted a photo|it's a disgrace]",
            "My [dad|uncle] insists on climbing ladders at 70, it's only a matter of time",
            "Five-a-side is basically a sport where grown men injure each other on purpose",
        ],
    ),
    # ------------------------------------------------------------------ 8 diet
    dict(
        id="diet",
        slots={"diet": "diets", "reason": "diet_reasons", "craving": "cravings"},
        steps=[
            dict(lead=True, k="start", say=[
                "I've gone {diet}, as of today. Send snacks",
                ["~New me", "{Diet.v}, starting {ago}. {Diet.what}"],
                "Doing the {diet} thing now, {diet.what}, wish me luck",
            ], pair=[["Why the sudden change?", "{reason.reply}"]]),
            dict(k="crave", gap=[1, 4], say=["The only thing I really miss is {craving}", "Still sticking with it, but I'd kill for {craving}"],
                 pair=[["What do you miss the most?", "{craving.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What eating plan has {N} adopted?", "What diet is {N} on now?", "How has {N} changed what {he} eats?"], a="{diet}"),
            dict(c="ell", ev=["start"], ask=["Why did {N} change {his} eating habits?", "What prompted {N}'s new way of eating?"], a="{reason}"),
            dict(c="ell", ev=["crave"], ask=["What food does {N} miss most since changing {his} eating habits?"], a="{craving}"),
            dict(c="when", ev=["start"], ask=["When did {N} begin {his} new eating regime?"]),
        ],
        noise=[
            "Everyone at work is on some diet [this month|after Christmas|for a wedding], the biscuit tin is untouched",
            "[Have you seen|There's] a {*diets} café opened [near the station|in town], the queue was massive",
            "I read that [eggs|coffee|red wine] is good for you again this week",
            "My gran's diet is mostly custard creams and she's 94",
        ],
    ),
    # ------------------------------------------------------------------ 9 sibling wedding
    dict(
        id="wedding",
        slots={"venue": "venues", "role": "wedding_roles", "mishap": "wedding_mishaps"},
        shareable=False,
        anchor="{his} {sib.rel}'s wedding",
        steps=[
            dict(k="engaged", say=["Ring on the finger! {Sib.v} said yes {ago}, and guess who's {role}", 
                "{Sib.v} got engaged!! And I'm down for {role} at the wedding",
                ["~Family news", "My {sib.rel} {sib} is getting married! I've been roped in as {role}"],
            ]),
            dict(lead=True, k="wedding", gap=[3, 8], say=[
                "{Sib.v}'s wedding was {ago}, at {venue}. I cried through the whole thing",
                ["~Still hungover", "The wedding {ago}! {Venue.v}. Absolutely gorgeous day"],
            ], pair=[["Did anything go wrong on the day?", "{mishap.reply}"], ["Any disasters at the wedding?", "{mishap.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["engaged"], ask=["What part did {N} play in {his} {sib.rel}'s big day?", "What job was {N} given for the nuptials?"], a="{role}"),
            dict(c="single", ev=["wedding"], ask=["Where did {N}'s {sib.rel} tie the knot?", "Where was {N}'s {sib.rel}'s wedding?", "Where was {sib}'s ceremony held?"], a="{venue}"),
            dict(c="when", ev=["wedding"], ask=["When did {sib} get married?", "When did {N}'s {sib.rel} tie the knot?"]),
            dict(c="ell", ev=["wedding"], ask=["What went wrong at {sib}'s ceremony?", "What went wrong at {sib}'s wedding?", "What mishap happened at the family celebration?"], a="{mishap}"),
            dict(c="multi", ev=["engaged", "wedding"], ask=["What did {N} do at the ceremony held at {venue}?"], a="{role}"),
        ],
        noise=[
            "I've been invited to [four|five|three] weddings this summer and I'm [skint|going to need a new outfit|exhausted already]",
            "Why do weddings cost so much now? Someone at work spent forty grand",
            "Went to a bridal shop with a friend once, never again",
            "[My|A] cousin's wedding had a [magician|llama|ice sculpture], so that's the bar",
        ],
    ),
    # ------------------------------------------------------------------ 10 exam
    dict(
        id="exam",
        slots={"exam": "exams", "result": "exam_results"},
        anchor="{he} sat {exam}",
        steps=[
            dict(k="study", say=[
                "Revising for {exam} every night, my brain is soup",
                ["~Life's on hold", "Exam season. {Exam.v}. Three weeks to go"],
                "Booked {exam} for next month, no going back",
            ]),
            dict(k="sit", gap=[1, 2], say=["That's the exam done, {ago}. Three hours, my hand still aches", "Sat the exam {ago}. No idea how it went", "Exam done {ago}! Never want to see a calculator again"]),
            dict(k="result", gap=[1, 3], say=["Results are in: {result}", "Got the email {ago}: {result}!"],
                 pair=[["Have you heard back about the exam yet?", "{result.reply}"], ["So?? Results??", "{result.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["study"], ask=["What qualification was {N} studying for?", "Which exam was {N} revising for?", "Which test was {N} preparing for?"], a="{exam}"),
            dict(c="when", ev=["sit"], ask=["When did {N} take {his} {exam.field} test?"]),
            dict(c="ell", ev=["result"], ask=["How did {N} do in {his} {exam.field} qualification?", "What were {N}'s exam results?", "What was the outcome of {N}'s test?"], a="{result}"),
            dict(c="multi", ev=["study", "result"], ask=["What result did {N} get in {exam}?"], a="{result}"),
        ],
        noise=[
            "[My nephew|The kid next door] has GCSEs next week and [the whole family is stressed|he's not revised at all]",
            "I still have nightmares about my maths A level",
            "Do employers care about professional qualifications, or is it all who you know?",
            "Saw a student crying over flashcards on the bus, [felt that|poor thing]",
        ],
    ),
    # ------------------------------------------------------------------ 11 language
    dict(
        id="language",
        slots={"lang": "languages", "tutor": "@name", "motive": "lang_motives"},
        steps=[
            dict(lead=True, k="start", say=[
                "I've started {lang} classes! Tuesday nights with a tutor called {tutor}",
                ["~Learning something new", "{Lang}. Lessons with {tutor}. Grammar is already melting me"],
            ], pair=[["Why that language?", "{motive.reply}"], ["Ooh, what made you pick that one?", "{motive.reply}"]]),
            dict(k="progress", gap=[2, 5], say=["Ordered dinner and argued about the bill entirely in the language {ago}. Tiny victory", "Had my first whole conversation with a native speaker {ago}! The man at the corner shop",
                                               "First full chat without switching to English {ago}. Only cried a little"]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What language is {N} studying?", "What language is {N} taking classes in?", "Which foreign tongue is {N} learning?"], a="{lang}"),
            dict(c="single", ev=["start"], ask=["Who teaches {N} {lang}?", "Who is {N}'s language teacher?"], a="{tutor}"),
            dict(c="ell", ev=["start"], ask=["Why is {N} learning {lang}?", "What motivated {N} to pick up a new language?"], a="{motive}"),
            dict(c="when", ev=["progress"], ask=["When did {N} manage a full chat in {his} new language?"]),
        ],
        noise=[
            "[Duolingo|That owl app] keeps sending me guilt-trip notifications, I've lost a 200-day streak",
            "My [colleague|neighbour] speaks five languages and I can barely do one",
            "I tried ordering in {*languages} on holiday and they answered in English",
            "Kids pick up languages so fast, my [niece|nephew] is basically bilingual",
        ],
    ),
    # ------------------------------------------------------------------ 12 recipe (recurring)
    dict(
        id="recipe",
        slots={"dish": "dishes", "guest": "@name"},
        repeat=True,
        steps=[
            dict(k="cook", say=[
                "Made {dish} for {guest} {ago}. Took four hours. Worth it",
                ["~Kitchen triumph", "{Dish.v}! From scratch! {guest} had seconds"],
                "Attempted {dish} for {guest} {ago}, it actually worked",
                "Cooked {dish} for {guest} {ago}, kitchen looks like a bomb went off",
            ]),
        ],
        qs=[dict(c="single", ev=["cook"], ask=["Who did {N} make {dish} for?"], a="{guest}")],
        tq=dict(ev=["cook"], ask=["What did {N} cook {T}?", "Which dish did {N} make {T}?", "{T}, what did {N} make from scratch?"], a="{dish}"),
        agg=dict(ev=["cook"], ask=["What dishes has {N} cooked recently?", "Which recipes has {N} attempted?"], item="{dish}"),
        noise=[
            "[Those|The] cooking shows make everything look so easy, then I try and set off the smoke alarm",
            "I bought {*dishes.v} from the supermarket and pretended I made it",
            "My [mum's|dad's] [roast|curry|lasagne] is still the best thing I've ever eaten",
            "Do you ever follow recipes exactly? I never have the right [pan|spices|time]",
        ],
    ),
    # ------------------------------------------------------------------ 13 book (recurring)
    dict(
        id="book",
        slots={"book": "books"},
        repeat=True,
        steps=[
            dict(k="read", say=[
                "Just finished {book}, {book.by}. Couldn't put it down",
                ["~Book report", "{book} by {book.by}. Read it in two sittings"],
                "Stayed up till 2am {ago} finishing {book} by {book.by}",
                "{book} was [so good|incredible|heartbreaking], the {book.by} one",
            ]),
        ],
        qs=[dict(c="single", ev=["read"], ask=["Who is the author of {book}, which {N} read?"], a="{book.by}")],
        tq=dict(ev=["read"], ask=["What was {N} reading {T}?", "Which book did {N} finish {T}?"], a="{book}"),
        agg=dict(ev=["read"], ask=["Which books has {N} finished?", "What titles has {N} mentioned reading?"], item="{book}"),
        noise=[
            "[My book club|Our reading group] picked {*books} [and nobody finished it|this month, any good?]",
            "I buy books faster than I read them, there's a tower by my bed",
            "Do audiobooks count as reading? Having an argument with my [brother|sister] about it",
            "The library near me is closing, [so sad|there's a petition]",
        ],
    ),
    # ------------------------------------------------------------------ 14 concert (recurring)
    dict(
        id="concert",
        slots={"band": "bands", "mate": "@name"},
        repeat=True,
        steps=[
            dict(k="gig", say=[
                "Saw {band} at {band.venue} {ago}! Ears still ringing",
                ["~Can't talk, no voice", "{band}. {band.venue}. With {mate}. Incredible"],
                "{mate} had a spare ticket for {band} at {band.venue}, so that was my {ago}. Unreal",
                "{band} were [phenomenal|so good|amazing live] at {band.venue} {ago}, best night in ages",
            ]),
        ],
        qs=[dict(c="single", ev=["gig"], ask=["Where did {N} see {band} perform?"], a="{band.venue}")],
        tq=dict(ev=["gig"], ask=["Who did {N} see play live {T}?", "Which act did {N} watch in concert {T}?"], a="{band}"),
        agg=dict(ev=["gig"], ask=["Which artists has {N} seen live?", "What gigs has {N} been to?"], item="{band}"),
        noise=[
            "Gig tickets are [£90|£120|daylight robbery] now, plus the booking fee",
            "[Someone|A bloke] in front of me filmed the entire concert on his phone last time",
            "I saw {*bands} are touring again, [want to go?|tickets sold out in minutes]",
            "My ears still ring from that festival in 2019",
        ],
    ),
    # ------------------------------------------------------------------ 15 car
    dict(
        id="car",
        slots={"car": "cars", "price": "car_prices", "fault": "car_faults", "mech": "@name"},
        steps=[
            dict(k="buy", say=[
                "Bought {car} {ago}! {Price.v}, bit of a bargain",
                ["~I'm mobile", "{Car.v}, {price}. First proper motor"],
                "Picked up {car} from a dealer {ago}, paid {price}",
            ]),
            dict(k="fault", gap=[2, 6], mood="-", say=["The car's in the garage, {mech} says it's {fault}", "Took the car to {mech} {ago}: {fault}"],
                 pair=[["What did {mech} say about the car?", "{fault.reply}"], ["Is the car fixed? What did {mech} find?", "{fault.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["buy"], ask=["What vehicle did {N} buy?", "What car did {N} pick up?", "What does {N} drive?"], a="{car}"),
            dict(c="single", ev=["buy"], ask=["How much did {N} pay for {his} {car.kind}?"], a="{price}"),
            dict(c="ell", ev=["fault"], ask=["What was wrong with {N}'s vehicle?", "What did the mechanic say was wrong with {N}'s car?", "What did the garage find on {N}'s motor?"], a="{fault}"),
            dict(c="when", ev=["buy"], ask=["When did {N} get {his} {car.kind}?"]),
            dict(c="multi", ev=["buy", "fault"], ask=["Who repairs the {car.kind} {N} bought for {price}?"], a="{mech}"),
        ],
        noise=[
            "Petrol prices [again|this week]. I'm getting a horse",
            "Someone reversed into my [neighbour's|colleague's] car and just drove off",
            "[Electric cars|Hybrids] are everywhere on my street now, the charging cables are a trip hazard",
            "My [dad|uncle] has had the same {*cars.kind} for twenty years",
        ],
    ),
    # ------------------------------------------------------------------ 16 garden
    dict(
        id="garden",
        slots={"crop": "crops", "plot": "plots", "pest": "pests"},
        steps=[
            dict(k="plant", say=["Got my hands dirty {ago}: {crop} in {plot}", 
                "Planted {crop} in {plot} {ago}, fingers crossed",
                ["~Green fingers era", "I've got {plot} now! First thing in, {ago}: {crop}"],
            ]),
            dict(k="pest", gap=[1, 4], mood="-", say=["Something ate half of what I planted. {Pest.v}, I think", "Everything in my plot is being destroyed by {pest}"],
                 pair=[["What's been eating your plants?", "{pest.reply}"], ["Did you find out what's attacking the veg patch?", "{pest.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["plant"], ask=["What is {N} growing?", "What did {N} plant?", "What crop did {N} put in the ground?"], a="{crop}"),
            dict(c="single", ev=["plant"], ask=["Where does {N} do {his} growing?"], a="{plot}"),
            dict(c="ell", ev=["pest"], ask=["What is damaging {N}'s crops?", "What has been destroying {N}'s harvest?"], a="{pest}"),
            dict(c="when", ev=["plant"], ask=["When did {N} sow {his} crop?"]),
        ],
        noise=[
            "[My neighbour's|The council's] hedge is [taller than the house|blocking the pavement] now",
            "Allotment waiting lists round here are [fifteen years|ridiculous]",
            "I bought a cactus and managed to kill it. A cactus",
            "[My gran|Grandad] grows {*crops} the size of footballs, no idea how",
        ],
    ),
    # ------------------------------------------------------------------ 17 volunteering
    dict(
        id="volunteer",
        slots={"place": "volunteer_places", "day": "volunteer_days"},
        steps=[
            dict(k="start", say=[
                "Started volunteering at {place} {ago}, {day}. {Place.task}",
                ["~Doing something useful for once", "I help out at {place} now, started {ago}. {Day}, mostly {place.task}"],
                "Signed up to help at {place}, {day}, {place.task}. First shift {ago}",
            ]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Where does {N} give {his} time for free?", "Where does {N} volunteer?", "What charity work does {N} do?"], a="{place}"),
            dict(c="single", ev=["start"], ask=["What does {N} do during {his} unpaid shifts?", "What's {N}'s job as a helper at the charity?"], a="{place.task}"),
            dict(c="single", ev=["start"], ask=["When in the week does {N} do {his} charity shifts?"], a="{day}"),
            dict(c="when", ev=["start"], ask=["When did {N} begin {his} unpaid work?"]),
        ],
        noise=[
            "[Work|The office] wants us to do a volunteering day [in a park|painting a school], team building apparently",
            "The food bank near me is [desperate for|short of] [tins|nappies|volunteers] this winter",
            "My [mum|aunt] has volunteered at the same charity shop for thirty years",
        ],
    ),
    # ------------------------------------------------------------------ 18 work conflict
    dict(
        id="conflict",
        slots={"rival": "@name", "issue": "conflicts", "outcome": "resolutions"},
        steps=[
            dict(k="issue", mood="-", say=[
                "{Rival.v} at work {issue} and I'm fuming",
                ["~Need to vent", "{Rival.v}. That's it, that's the rant. {Issue.reply}"],
            ], pair=[["What did {rival} do this time?", "{issue.reply}"]]),
            dict(k="end", gap=[1, 4], say=["The office saga is over: {outcome}", "Update on work drama: {outcome}"],
                 pair=[["Did anything come of the drama with your colleague?", "{outcome.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["issue"], ask=["Who is {N} clashing with at the office?", "Which colleague at work is {N} fuming about?", "Which colleague is {N} having problems with?"], a="{rival}"),
            dict(c="ell", ev=["issue"], ask=["What did {N}'s co-worker do to upset {him}?"], a="{issue}"),
            dict(c="ell", ev=["end"], ask=["How was {N}'s dispute with {his} co-worker resolved?", "How did the office feud end?"], a="{outcome}"),
        ],
        noise=[
            "[Our|My] office has a passive-aggressive note on the fridge about [milk|yoghurts|washing up] again",
            "Do you think HR is ever actually on your side?",
            "There's a guy on my floor who [replies all|microwaves fish|whistles] [constantly|every day]",
        ],
    ),
    # ------------------------------------------------------------------ 19 pottery
    dict(
        id="pottery",
        slots={"pot": "pots", "studio": "studios", "for": "@name"},
        steps=[
            dict(k="start", say=["Took the plunge {ago} and joined {studio}. Clay under my nails already", 
                "Signed up for a pottery course at {studio}! Wheel and everything",
                ["~Ghost vibes", "Pottery! {Studio.v}. Covered in clay already"],
            ]),
            dict(k="make", gap=[1, 4], say=["Made {pot} for {for}, it came out of the kiln {ago}", "My first proper piece: {pot}. Giving it to {for}"],
                 pair=[["What did you end up making?", "{Pot.v}! For {for}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Where does {N} take {his} ceramics class?", "Where does {N} do pottery?", "Where does {N} do ceramics?"], a="{studio}"),
            dict(c="ell", ev=["make"], ask=["What did {N} create in {his} ceramics class?", "What did {N} produce at {his} evening ceramics?"], a="{pot}"),
            dict(c="single", ev=["make"], ask=["Who was {N}'s handmade ceramics for?"], a="{for}"),
            dict(c="when", ev=["start"], ask=["When did {N} enrol in ceramics?"]),
        ],
        noise=["[Those|The] pottery programmes on telly are weirdly relaxing", "I bought a handmade mug at a market for £30 and it leaks",
               "My [cousin|flatmate] did a pottery date night and they [broke up|got engaged] the week after"],
    ),
    # ------------------------------------------------------------------ 20 dating
    dict(
        id="dating",
        slots={"date": "@name", "how": "meet_ways", "spot": "date_spots"},
        anchor="{he} started seeing {date}",
        steps=[
            dict(lead=True, k="meet", say=[
                "I've been on a date! {Date.v}. We went to {spot}",
                ["~Don't make a big deal", "There's someone. {Date.v}. First date was {spot} {ago}"],
            ], pair=[["Ooh! Where did you two meet?", "{how.reply}"], ["How did you two meet?", "{how.reply}"]]),
            dict(k="official", gap=[2, 5], say=["So we had the talk {ago}. Boyfriend-girlfriend-whatever, official", "We're official now! Met the parents {ago}", "It's official, we're a couple. Facebook official, even"]),
        ],
        qs=[
            dict(c="single", ev=["meet"], ask=["Who is {N} seeing?", "Who did {N} go on a date with?", "Who has {N} been dating?"], a="{date}"),
            dict(c="ell", ev=["meet"], ask=["How did {N} meet {date}?", "Where did {N} first cross paths with {his} new love interest?"], a="{how}"),
            dict(c="single", ev=["meet"], ask=["Where did {N} go on {his} first evening out with {date}?"], a="{spot}"),
            dict(c="when", ev=["official"], ask=["When did {N} make the relationship official?"]),
        ],
        noise=["Dating apps are a nightmare, my friend matched with her dentist", "[My|A] colleague met her husband in a lift, so there's hope",
               "Is it weird to go on a first date to {*date_spots}?"],
    ),
]

FRAMES += [
    # ------------------------------------------------------------------ 21 new baby in the family
    dict(
        id="baby",
        slots={"baby": "baby_names", "weight": "baby_weights"},
        shareable=False,
        anchor="{his} {sib.rel} had a baby",
        steps=[
            dict(k="news", say=["My {sib.rel} {sib} told us {ago}: a baby! Due in the spring", "{Sib.v} and {sib.his} other half are expecting!! I'm going to be an {aunt}, can't cope", "Big family news: there's a baby on the way for my {sib.rel} {sib}"]),
            dict(k="born", gap=[3, 8], say=[
                "The baby's here! {Baby}, {weight}, born {ago}",
                ["~I'm an {aunt}!!", "{Sib.v}'s baby arrived {ago}. {Baby}. {weight}"],
            ], pair=[["What did they call the baby?", "{Baby}! {weight}, [gorgeous|after our great-gran]"]]),
        ],
        qs=[
            dict(c="ell", ev=["born"], ask=["What did {N}'s {sib.rel} name the newborn?", "What did {N}'s {sib.rel} call the baby?", "What is the name of {N}'s new niece or nephew?"], a="{baby}"),
            dict(c="when", ev=["born"], ask=["When was {N}'s {sib.rel}'s child born?"]),
            dict(c="single", ev=["born"], ask=["How much did {sib}'s little one weigh at birth?"], a="{weight}"),
        ],
        noise=["Everyone I know is having babies, my feed is all scan photos", "[A|The] toddler on the train sang the same song for an hour",
               "Baby names now are wild, someone at work called theirs {*baby_names}"],
    ),
    # ------------------------------------------------------------------ 22 video game
    dict(
        id="game",
        slots={"game": "games", "feat": "game_feats"},
        steps=[
            dict(k="play", say=["I picked up {game} {ago}, one more go turned into 3am", "Started {game} {ago}, I've lost a whole weekend", ["~Sorry I've been quiet", "{game}. Started it {ago} and it's eaten my life"]]),
            dict(k="feat", gap=[1, 4], say=["Finally {feat}!!", "I {feat} {ago}. Screamed", "Guess who {feat} {ago}? Me"],
                 pair=[["Did you ever get past the bit you were stuck on?", "{feat.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["play"], ask=["What video game is {N} playing?", "Which game has {N} been hooked on?"], a="{game}"),
            dict(c="ell", ev=["feat"], ask=["What did {N} achieve in {his} game?"], a="{feat}"),
            dict(c="when", ev=["play"], ask=["When did {N} start playing the {game.kind}?"]),
        ],
        noise=["My [nephew|little brother] plays Fortnite with strangers at 2am", "Consoles cost a fortune now, I'm sticking with my old one",
               "Someone on the bus was playing a game on full volume"],
    ),
    # ------------------------------------------------------------------ 23 photography
    dict(
        id="photo",
        slots={"cam": "cameras", "win": "photo_wins"},
        steps=[
            dict(k="buy", say=["My new toy: {cam}. Been taking pictures of literally everything", "Bought {cam}! Going to learn photography properly", ["~New toy", "{Cam.v}. Secondhand. I'm a photographer now"]]),
            dict(k="win", gap=[2, 5], say=["Guess what, I got {win}!", "Big moment {ago}: {win}"],
                 pair=[["How's the photo stuff going?", "{win.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["buy"], ask=["What photography gear does {N} use?", "What camera did {N} buy?"], a="{cam}"),
            dict(c="ell", ev=["win"], ask=["What success did {N} have with {his} pictures?"], a="{win}"),
            dict(c="multi", ev=["buy", "win"], ask=["What did {N} achieve with photos taken on {cam}?"], a="{win}"),
        ],
        noise=["Everyone thinks they're a photographer with a phone now", "I got a photo printed at the chemist and it came out purple",
               "My [dad|uncle] still has slides from the 70s, thousands of them"],
    ),
    # ------------------------------------------------------------------ 24 renovation (update)
    dict(
        id="paint",
        slots={"room": "rooms", "colour1": "paints", "colour2": "paints"},
        shareable=False,
        steps=[
            dict(k="first", say=["Did the {room} {ago}, {colour1}, two days of rollers", "Painted the {room} {colour1} {ago}! Looks like a magazine", ["~DIY weekend", "{Room} is now {colour1}, finished it {ago}. Took three coats"]]),
            dict(k="second", gap=[3, 8], say=["{Colour1.v} is gone. The {room}'s {colour2} as of {ago}", "Repainted the {room}. {Colour1.v} was too dark in winter, it's {colour2} now",
                                             ["~Don't judge", "The {room}'s {colour2} now. I got sick of the {colour1}"]]),
        ],
        qs=[
            dict(c="now", ev=["second"], ask=["What colour are {N}'s redecorated walls now?", "What colour has {N} painted the walls now?", "What shade did {N} most recently put on {his} walls?"], a="{colour2}"),
            dict(c="before", ev=["first", "second"], ask=["What shade did {N} originally choose before redecorating again?", "What colour were {N}'s walls before the latest makeover?"], a="{colour1}"),
            dict(c="when", ev=["first"], ask=["When did {N} first decorate the {room}?"]),
        ],
        noise=["Paint colours have the silliest names, I saw one called 'Elephant's Breath'", "My landlord won't let me put a single nail in the wall",
               "Decorating programmes make it look so quick", "{*paints} seems to be in every café now"],
    ),
    # ------------------------------------------------------------------ 25 museum (recurring)
    dict(
        id="museum",
        slots={"show": "exhibitions", "with": "@name"},
        repeat=True,
        steps=[
            dict(k="visit", say=[
                "Went to {show} at {show.museum} {ago}. Stunning",
                ["~Culture vulture today", "{Show.v}! At {show.museum}. With {with}"],
                "{with} and I did {show} at {show.museum} {ago}, so worth the queue",
            ]),
        ],
        qs=[dict(c="single", ev=["visit"], ask=["Where was {show} that {N} visited?"], a="{show.museum}")],
        tq=dict(ev=["visit"], ask=["What did {N} go and look at {T}?", "Which cultural outing did {N} go on {T}?"], a="{show}"),
        agg=dict(ev=["visit"], ask=["What cultural outings has {N} mentioned?"], item="{show}"),
        noise=["Museums with free entry are the best thing about this country", "[A|The] school trip at the gallery was louder than a football match",
               "I always end up in the gift shop buying a tea towel"],
    ),
    # ------------------------------------------------------------------ 26 gadget
    dict(
        id="gadget",
        slots={"gadget": "gadgets", "fault": "gadget_faults"},
        steps=[
            dict(k="buy", say=["Caved {ago} and bought {gadget}", "Got {gadget} {ago}, finally upgraded", ["~Treat yourself", "{Gadget.v}, bought it {ago}. Couldn't resist"]]),
            dict(k="break", gap=[1, 4], mood="-", say=["Disaster: {fault} on the new {gadget.kind}", "{Fault.reply}. Brand new!"],
                 pair=[["What's up with the new {gadget.kind}?", "{fault.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["buy"], ask=["What device did {N} buy?", "What did {N} upgrade to?", "What new tech did {N} get?"], a="{gadget}"),
            dict(c="ell", ev=["break"], ask=["What went wrong with {N}'s new device?"], a="{fault}"),
            dict(c="when", ev=["buy"], ask=["When did {N} upgrade {his} {gadget.kind}?"]),
        ],
        noise=["Phones cost more than my first car now", "My [mum|dad] still uses a flip phone and refuses to change",
               "Why does every new laptop have fewer ports", "I dropped my phone down the toilet once. Once"],
    ),
    # ------------------------------------------------------------------ 27 camping
    dict(
        id="camping",
        slots={"site": "campsites", "mishap": "camp_mishaps", "with": "@name"},
        steps=[
            dict(k="go", say=["{with} and I camped in {site} {ago}. Cold but magical", "Back from camping in {site} with {with}! Smell of woodsmoke", ["~Survived the wild", "Three nights camping with {with}, {site}, {ago}"]]),
            dict(k="mishap", gap=[0, 0], say=["Slight issue: {mishap}", "Oh and {mishap} on the first night"],
                 pair=[["Did the tent hold up?", "{mishap.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["go"], ask=["Where did {N} pitch a tent?", "Where did {N} go camping?"], a="{site}"),
            dict(c="ell", ev=["mishap"], ask=["What went wrong on {N}'s outdoor trip?"], a="{mishap}"),
            dict(c="single", ev=["go"], ask=["Who went under canvas with {N}?"], a="{with}"),
            dict(c="when", ev=["go"], ask=["When did {N} get back from sleeping outdoors?"]),
        ],
        noise=["Glamping is just a hotel with worse toilets", "[My|Our] neighbours put a tent up in their garden for the kids",
               "I can't sleep on the ground anymore, my back won't have it"],
    ),
    # ------------------------------------------------------------------ 28 side business
    dict(
        id="shop",
        slots={"craft": "crafts", "where": "shopfronts", "order": "big_orders"},
        steps=[
            dict(k="open", say=["My {craft} are on {where} now! Shop went live {ago}", "I've opened a little shop on {where}! Selling {craft}", ["~Side hustle time", "Selling {craft} on {where}. First sale {ago}!"]]),
            dict(k="order", gap=[2, 6], say=["Biggest order yet: {order}!", "{Order.reply}"],
                 pair=[["How's the shop going?", "{order.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["open"], ask=["What does {N} make for customers?", "What does {N} sell online?", "What goods does {N} produce as a side hustle?"], a="{craft}"),
            dict(c="single", ev=["open"], ask=["Where does {N} trade {his} handmade goods?"], a="{where}"),
            dict(c="ell", ev=["order"], ask=["Who placed the biggest order with {N}'s business?"], a="{order}"),
        ],
        noise=["Everyone has a side hustle now, my dentist sells candles", "Online marketplace fees have gone up again apparently",
               "I bought {*crafts} at a craft fair and they were [gorgeous|falling apart]"],
    ),
    # ------------------------------------------------------------------ 29 dance
    dict(
        id="dance",
        slots={"style": "dances", "partner": "@name"},
        steps=[
            dict(k="start", say=["First {style} lesson {ago} with {partner} as my partner. We trod on each other a lot", "Started {style} classes {ago} with {partner}! Two left feet", ["~Promise not to laugh", "{Style} lessons. Thursdays. My partner's {partner}"]]),
            dict(k="show", gap=[2, 6], say=["Showcase done {ago}. Sequins, nerves, no falls", "Did our first showcase {ago}, nobody got dropped", "We performed {ago}! Two minutes of routine, felt like an hour"]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["What kind of dancing is {N} learning?", "What dance classes did {N} start?", "Which dance style did {N} take up?"], a="{style}"),
            dict(c="single", ev=["start"], ask=["Who does {N} dance with?"], a="{partner}"),
            dict(c="when", ev=["show"], ask=["When did {N} dance in front of an audience?"]),
        ],
        noise=["Strictly is on and my mum's texting me commentary", "I dance like a dad at a party, always have",
               "There's a dance night in the church hall, the posters are everywhere"],
    ),
    # ------------------------------------------------------------------ 30 lost item
    dict(
        id="lost",
        slots={"item": "lost_items", "found": "found_places"},
        steps=[
            dict(k="lose", mood="-", say=["Where is my {item}?? It's been gone since {ago}", "I've lost my {item}. Turned the flat upside down", ["~Panic stations", "Can't find my {item} anywhere. Since {ago}"]]),
            dict(k="find", gap=[0, 2], say=["Found it! {Found.reply}", "Panic over, it turned up. {Found.reply}"], pair=[["Did the [thing you lost|missing thing] turn up?", "{found.reply}"], ["Any luck finding it [in the end|yet]?", "{found.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["lose"], ask=["What did {N} misplace?", "What has {N} lost?", "What belonging went missing for {N}?"], a="{item}"),
            dict(c="ell", ev=["find"], ask=["Where did {N}'s missing {item.kind} turn up?", "Where did {N} find the thing {he} lost?", "Where did {N} eventually locate the thing {he} lost?"], a="{found}"),
        ],
        noise=["My [dad|grandad] has lost his glasses while wearing them three times this week", "The lost property at the station has a whole room of umbrellas",
               "I bought one of those tracker tags and now I'm paranoid"],
    ),
    # ------------------------------------------------------------------ 31 grandparent
    dict(
        id="grandparent",
        slots={"gp": "@name", "cond": "gp_conditions", "upd": "gp_updates"},
        shareable=False,
        steps=[
            dict(k="ill", mood="-", say=["Grandma {gp} was taken in {ago}, {cond}", "My gran {gp} is in hospital since {ago}, {cond}", ["~Bit of a rough week", "Grandma {gp} had {cond} {ago}"]]),
            dict(k="update", gap=[1, 3], say=["Update on Gran: {upd}", "Good-ish news about my nan: {upd}"],
                 pair=[["How's your gran doing?", "{upd.reply}"], ["Any news on your [gran|nan]?", "{upd.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["ill"], ask=["Why was {N}'s grandmother admitted?", "Why is {N}'s gran in hospital?", "What happened to {N}'s grandmother?"], a="{cond}"),
            dict(c="ell", ev=["update"], ask=["How is {N}'s grandmother getting on?", "How is {N}'s gran doing?"], a="{upd}"),
            dict(c="single", ev=["ill"], ask=["What is the name of {N}'s grandma?"], a="{gp}"),
            dict(c="when", ev=["ill"], ask=["When was {N}'s grandmother admitted?"]),
        ],
        noise=["Hospital car parks should be free, it's criminal", "My [grandad|nan] is 90 and still does the crossword in pen",
               "Visiting hours at the hospital are so strict now"],
    ),
    # ------------------------------------------------------------------ 32 birthday
    dict(
        id="birthday",
        slots={"age": "ages", "venue": "party_venues", "gift": "gifts"},
        shareable=False,
        anchor="{his} {age} birthday",
        steps=[
            dict(k="party", say=["The {age} party at {venue} {ago}! Feeling old", "My {age} was {ago}! Party at {venue}, still recovering", ["~Officially ancient", "{Age} birthday bash at {venue} {ago}"]]),
            dict(k="gift", gap=[0, 0], say=["And {sib} got me {gift}!", "Best present: {gift}, from {sib}"],
                 pair=[["What did {sib} get you?", "{gift.reply}"], ["Any good presents? What did {sib} give you?", "{gift.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["party"], ask=["Where did {N} celebrate {his} birthday?", "Where was {N}'s birthday party?", "Where was {N}'s party held?"], a="{venue}"),
            dict(c="single", ev=["party"], ask=["Which birthday milestone did {N} reach?", "How old did {N} turn?"], a="{age}"),
            dict(c="ell", ev=["gift"], ask=["What was {N}'s favourite present?", "What did {N} receive for turning {age}?"], a="{gift}"),
            dict(c="when", ev=["party"], ask=["When did {N} celebrate turning {age}?"]),
        ],
        noise=["Office birthday cakes are a scam to make us work through lunch", "My [niece|nephew] wants a bouncy castle for turning five",
               "I forgot my best mate's birthday once and I still feel guilty"],
    ),
    # ------------------------------------------------------------------ 33 tattoo
    dict(
        id="tattoo",
        slots={"tat": "tattoos", "spot": "body_spots", "artist": "@name"},
        steps=[
            dict(k="get", say=["Sat for my first tattoo {ago}. {artist} did {tat} on my {spot}", "Got a tattoo {ago}!! {Tat.v}, on my {spot}. {artist} is a genius", ["~Don't tell my mum", "First tattoo, {ago}. {Tat.v}. {artist} did it, {spot}"]]),
        ],
        qs=[
            dict(c="single", ev=["get"], ask=["What design did {N} have inked?", "What tattoo did {N} get?", "What is {N}'s tattoo of?"], a="{tat}"),
            dict(c="single", ev=["get"], ask=["Where on {his} body is {N}'s new ink?"], a="{spot}"),
            dict(c="when", ev=["get"], ask=["When did {N} get inked?"]),
        ],
        noise=["Everyone under thirty has a fine-line tattoo now", "My [dad|uncle] has a faded anchor tattoo he won't explain",
               "I'd want a tattoo but I can't commit to a haircut"],
    ),
    # ------------------------------------------------------------------ 34 yoga
    dict(
        id="yoga",
        slots={"style": "yoga_styles", "feat": "yoga_feats"},
        steps=[
            dict(k="start", say=["Did my first {style} class {ago}. Dripping", "Started {style} {ago}. So much sweat", ["~Namaste", "{Style} classes, started {ago}. Three times a week from now on"]]),
            dict(k="feat", gap=[2, 5], say=["Managed {feat} {ago}!", "The teacher helped me do {feat} today"],
                 pair=[["How's the stretchy stuff going?", "{feat.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Which style of mat-based practice does {N} do?", "Which yoga style does {N} do?"], a="{style}"),
            dict(c="ell", ev=["feat"], ask=["What pose did {N} finally pull off?"], a="{feat}"),
            dict(c="when", ev=["start"], ask=["When did {N} start going to the stretching classes?"]),
        ],
        noise=["There's a goat yoga class near me, actual goats", "I did a yoga video on YouTube and pulled something",
               "My [flatmate|sister] meditates at 6am and I'm jealous of her calm"],
    ),
    # ------------------------------------------------------------------ 35 podcast
    dict(
        id="podcast",
        slots={"topic": "pod_topics", "co": "@name", "guest": "pod_guests"},
        steps=[
            dict(k="launch", say=["Episode one is out {ago}! {co} and I talk {topic}", "Launched a podcast {ago} with {co}! It's about {topic}", ["~Shameless plug", "Our podcast is live! Me and {co} talking about {topic}"]]),
            dict(k="guest", gap=[2, 5], say=["We had {guest} on the show {ago}!", "Recorded with {guest}, best episode yet"],
                 pair=[["Who was on the show this week?", "{Guest}! [So good|Brilliant stories]"]]),
        ],
        qs=[
            dict(c="single", ev=["launch"], ask=["What's the subject of {N}'s audio series?", "What is {N}'s podcast about?", "What topic do {N} and {co} discuss on air?"], a="{topic}"),
            dict(c="single", ev=["launch"], ask=["Who co-hosts with {N}?"], a="{co}"),
            dict(c="ell", ev=["guest"], ask=["Who did {N} interview recently?"], a="{guest}"),
        ],
        noise=["Everyone and their dog has a podcast now", "I listen to podcasts at double speed, everyone sounds like a chipmunk",
               "A podcast about {*pod_topics.v} got me through the lockdowns"],
    ),
    # ------------------------------------------------------------------ 36 friend visiting
    dict(
        id="visitor",
        slots={"friend_v": "@name", "from": "visit_cities", "did": "visit_things"},
        steps=[
            dict(k="arrive", say=["Picked up {friend_v} from the airport {ago}, all the way from {from}", "{Friend_v} is visiting from {from}, arrived {ago}! First time in years", ["~Houseguest alert", "My mate {friend_v} flew in from {from} {ago}"]]),
            dict(k="did", gap=[0, 1], say=["Took my visitor to {did}", "We did {did}, big success"],
                 pair=[["What did you do with your visitor?", "{did.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["arrive"], ask=["Where did {N}'s overseas guest travel from?", "Where is the friend visiting {N} from?", "Which city is {N}'s visiting friend from?"], a="{from}"),
            dict(c="ell", ev=["did"], ask=["What did {N} show {his} guest from abroad?"], a="{did}"),
            dict(c="multi", ev=["arrive", "did"], ask=["Where did {N} take the friend who came from {from}?"], a="{did}"),
            dict(c="when", ev=["arrive"], ask=["When did {N}'s friend arrive from overseas?"]),
        ],
        noise=["Hosting people is lovely but I need a week to recover", "My spare room is just a pile of laundry with a bed underneath",
               "Showing tourists around makes you notice how grey everything is"],
    ),
    # ------------------------------------------------------------------ 37 neighbour
    dict(
        id="neighbour",
        slots={"neigh": "@name", "issue": "neighbour_issues", "end": "neighbour_ends"},
        steps=[
            dict(k="issue", mood="-", say=["My neighbour {neigh} and I are at war. Over {issue}", ["~Street drama", "{Neigh.v} next door. {Issue.reply}"]],
                 pair=[["What's the problem with {neigh}?", "{issue.reply}"]]),
            dict(k="end", gap=[1, 4], say=["Peace on our street at last. {End.reply}", "The next-door situation is resolved. {End.reply}"], pair=[["Still fighting with next door?", "{end.reply}"]]),
        ],
        qs=[
            dict(c="ell", ev=["issue"], ask=["What is {N} arguing with {his} neighbour about?", "What is {N}'s neighbour dispute about?", "What caused the feud next door?"], a="{issue}"),
            dict(c="single", ev=["issue"], ask=["Who is {N} feuding with on {his} street?"], a="{neigh}"),
            dict(c="ell", ev=["end"], ask=["How did {N}'s dispute with next door end?"], a="{end}"),
        ],
        noise=["Our street WhatsApp group is basically a soap opera", "Someone keeps parking a caravan on our road",
               "My parents have had the same neighbours for forty years and never spoken"],
    ),
    # ------------------------------------------------------------------ 38 skiing
    dict(
        id="ski",
        slots={"resort": "resorts", "feat": "ski_feats"},
        steps=[
            dict(k="trip", say=["Home from {resort} {ago}, legs like concrete", "Back from skiing in {resort}! Knees destroyed", ["~Snow report", "A week in {resort}, got back {ago}"]]),
            dict(k="feat", gap=[0, 0], say=["Proudest moment: {feat}", "And I did {feat}!"], pair=[["Did you try anything scary on the slopes?", "{feat.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["trip"], ask=["Which resort did {N} visit for winter sports?", "Where did {N} go for {his} snow holiday?"], a="{resort}"),
            dict(c="ell", ev=["feat"], ask=["What brave thing did {N} do on the mountain?"], a="{feat}"),
            dict(c="when", ev=["trip"], ask=["When did {N} return from the mountains?"]),
        ],
        noise=["Ski holidays cost about the same as a small car", "There's a dry slope near me that's basically a giant toothbrush",
               "I went on a school ski trip once and spent the week in the café"],
    ),
    # ------------------------------------------------------------------ 39 chess
    dict(
        id="chess",
        slots={"event": "chess_events", "result": "chess_results"},
        steps=[
            dict(k="enter", say=["Spent {ago} at {event}. Five games, one very sore brain", "Played in {event} {ago}! Been practising openings for weeks", ["~Nerd alert", "Chess tournament {ago}. {Event}"]]),
            dict(k="result", gap=[0, 1], say=["Chess update: I {result}", "Results from the tournament: I {result}"],
                 pair=[["How did the chess go?", "{result.reply}"]]),
        ],
        qs=[
            dict(c="single", ev=["enter"], ask=["Which competition did {N} enter?", "Which chess competition did {N} enter?", "What board game event did {N} take part in?"], a="{event}"),
            dict(c="ell", ev=["result"], ask=["How did {N} do in the tournament?"], a="{result}"),
            dict(c="when", ev=["enter"], ask=["When did {N} play in the competition?"]),
        ],
        noise=["Since that chess series on Netflix everyone thinks they're a grandmaster", "My [uncle|grandad] taught me chess and never let me win once",
               "There are old men playing chess in the park every afternoon"],
    ),
    # ------------------------------------------------------------------ 40 kid starting school
    dict(
        id="school",
        slots={"school": "schools", "teacher": "@name"},
        shareable=False,
        anchor="{kid} started school",
        steps=[
            dict(k="start", say=["{Kid.v}'s first day at {school} was {ago}. Didn't even look back at me", "{Kid.v} started at {school} {ago}! Tiny uniform, I sobbed", ["~Big day", "First day of school for {kid}. {School}"]]),
            dict(k="teacher", gap=[0, 2], say=["Met {kid}'s teacher, {teacher}. {Kid.he} thinks {teacher} is the coolest", "{Kid.v}'s teacher is {teacher}, and {kid.he} adores them already"],
                 pair=[["Does {kid} like the teacher?", "Loves them. {Teacher}, very calm. Needs to be"]]),
        ],
        qs=[
            dict(c="single", ev=["start"], ask=["Where is {N}'s {kid.rel} enrolled?", "Which school did {kid} start at?", "Where does {kid} spend weekdays learning?"], a="{school}"),
            dict(c="ell", ev=["teacher"], ask=["Who is in charge of {kid}'s class?"], a="{teacher}"),
            dict(c="when", ev=["start"], ask=["When did {kid} start in reception class?"]),
        ],
        noise=["The school run traffic outside mine is pure carnage", "Kids' school shoes cost more than mine",
               "Parents' WhatsApp groups are a special kind of chaos, my sister says"],
    ),
]


# More questions per frame (kept apart so the frames above stay readable).
EXTRA_QS = {
    "pet": [dict(c="multi", ev=["adopt", "vet"], ask=["What did the vet find wrong with the {pet.kind} {N} got from {shelter}?"], a="{issue}")],
    "job": [dict(c="before", ev=["first", "second"], ask=["What was {N}'s job title before {his} latest move?"], a="{role1}")],
    "diet": [dict(c="multi", ev=["start", "crave"], ask=["What does {N} crave since going {diet}?"], a="{craving}")],
    "garden": [dict(c="multi", ev=["plant", "pest"], ask=["What pest went after the {crop} {N} planted?"], a="{pest}")],
    "conflict": [dict(c="multi", ev=["issue", "end"], ask=["How did things end up with {rival}?"], a="{outcome}")],
    "pottery": [dict(c="multi", ev=["start", "make"], ask=["Who received the piece {N} made at {studio}?"], a="{for}")],
    "baby": [dict(c="multi", ev=["news", "born"], ask=["What's the name of {sib}'s child?"], a="{baby}")],
    "game": [dict(c="multi", ev=["play", "feat"], ask=["What did {N} accomplish in {game}?"], a="{feat}")],
    "gadget": [dict(c="multi", ev=["buy", "break"], ask=["What damage did {N}'s latest tech purchase suffer?"], a="{fault}")],
    "camping": [dict(c="multi", ev=["go", "mishap"], ask=["What went wrong when {N} camped in {site}?"], a="{mishap}")],
    "shop": [dict(c="multi", ev=["open", "order"], ask=["Who placed a big order with {N}'s side business?"], a="{order}")],
    "dance": [dict(c="multi", ev=["start", "show"], ask=["Who partnered {N} on stage?"], a="{partner}")],
    "lost": [dict(c="multi", ev=["lose", "find"], ask=["Where did {N}'s lost belonging reappear?"], a="{found}")],
    "grandparent": [dict(c="multi", ev=["ill", "update"], ask=["How is {N}'s grandmother recovering?"], a="{upd}")],
    "birthday": [dict(c="multi", ev=["party", "gift"], ask=["What was the best present {N} got at the party at {venue}?"], a="{gift}")],
    "tattoo": [dict(c="single", ev=["get"], ask=["Who inked {N}?"], a="{artist}")],
    "yoga": [dict(c="multi", ev=["start", "feat"], ask=["What did {N} eventually master in the classes {he} joined?"], a="{feat}")],
    "podcast": [dict(c="multi", ev=["launch", "guest"], ask=["Who did {N} and {co} interview?"], a="{guest}")],
    "neighbour": [dict(c="multi", ev=["issue", "end"], ask=["How was {N}'s row with {neigh} settled?"], a="{end}")],
    "ski": [dict(c="multi", ev=["trip", "feat"], ask=["What daring thing did {N} do at {resort}?"], a="{feat}")],
    "chess": [dict(c="multi", ev=["enter", "result"], ask=["How did {N} get on at {event}?"], a="{result}")],
    "school": [dict(c="multi", ev=["start", "teacher"], ask=["Who is {kid}'s teacher at {school}?"], a="{teacher}")],
    "visitor": [dict(c="single", ev=["arrive"], ask=["Who came to stay with {N} from abroad?"], a="{friend_v}")],
    "volunteer": [dict(c="multi", ev=["start"], ask=["What task does {N} do at {place}, and on which days?"], a="{place.task}, {day}")],
    "wedding": [dict(c="multi", ev=["wedding"], ask=["Where was the wedding at which {N} was {role}?"], a="{venue}")],
    "language": [dict(c="multi", ev=["start", "progress"], ask=["Which language did {N} finally hold a whole conversation in?"], a="{lang}")],
    "exam": [dict(c="multi", ev=["study", "sit"], ask=["Which exam did {N} sit after weeks of revision?"], a="{exam}")],
    "photo": [dict(c="single", ev=["buy"], ask=["What did {N} buy to take better pictures?"], a="{cam}")],
    "race": [],
}
for _f in FRAMES:
    _f["qs"] = _f["qs"] + EXTRA_QS.get(_f["id"], [])
