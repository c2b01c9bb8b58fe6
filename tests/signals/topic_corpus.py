"""A corpus with known topics for the map's benchmark and tests: every row is made of
sentences from one of K topic templates (their own vocabulary, a few shared filler
sentences), so the topic each row came from is the truth clusters are scored against."""

from __future__ import annotations

import random
from collections.abc import Iterator

TOPICS: dict[str, list[str]] = {
    "baking": [
        "Knead the dough for ten minutes until it is smooth and elastic.",
        "Let the sourdough rise overnight in a cool kitchen.",
        "Preheat the oven and bake the loaf until the crust is golden brown.",
        "Feed the starter with flour and water every morning.",
        "Brush the pastry with egg before it goes into the oven.",
        "Measure the butter, sugar and flour for the cake batter.",
    ],
    "football": [
        "The striker scored a late goal to win the match.",
        "The goalkeeper saved a penalty in the second half.",
        "The referee showed a red card to the defender.",
        "The team climbed to the top of the league table.",
        "Fans sang in the stadium as the final whistle blew.",
        "The coach changed the formation at half time.",
    ],
    "python": [
        "A Python list is a mutable sequence of values.",
        "Use a dictionary to map keys to values in Python.",
        "The function raises a ValueError when the argument is negative.",
        "Install the package with pip inside a virtual environment.",
        "A list comprehension builds a new list from an iterable.",
        "Type hints help the checker find bugs before the code runs.",
    ],
    "astronomy": [
        "The telescope observed a distant galaxy full of young stars.",
        "Jupiter has dozens of moons and a giant red storm.",
        "A supernova can outshine its entire galaxy for weeks.",
        "The planet orbits its star once every three hundred days.",
        "Astronomers measured the redshift of the quasar.",
        "A black hole bends the light of the stars behind it.",
    ],
    "medicine": [
        "The doctor prescribed antibiotics for the bacterial infection.",
        "Vaccines train the immune system to recognise a virus.",
        "The patient's blood pressure was checked every hour.",
        "The nurse cleaned the wound and changed the bandage.",
        "Clinical trials test whether a new drug is safe.",
        "A fever is the body's response to an infection.",
    ],
    "finance": [
        "The central bank raised interest rates to curb inflation.",
        "Investors sold shares as the stock market fell.",
        "A diversified portfolio spreads risk across many assets.",
        "The company reported higher quarterly earnings and revenue.",
        "Bond yields rose after the inflation figures were published.",
        "The loan carries a fixed rate of interest for five years.",
    ],
    "gardening": [
        "Plant the tomato seedlings after the last frost.",
        "Water the roses early in the morning.",
        "Compost improves the soil and feeds the worms.",
        "Prune the apple tree in late winter.",
        "Mulch keeps the weeds down and the soil moist.",
        "Sow the carrot seeds in shallow rows.",
    ],
    "music": [
        "The orchestra tuned their violins before the symphony.",
        "She practised the piano sonata every evening.",
        "The guitarist played a solo over the drum beat.",
        "The choir sang the hymn in four-part harmony.",
        "The composer wrote the opera in three acts.",
        "The band released a new album and went on tour.",
    ],
}
FILLER = [
    "This is worth remembering.",
    "Many people ask about this.",
    "Here is a short note on it.",
]


def topic_rows(rows: int, k: int = 8, seed: int = 0, sentences: int = 8) -> list[tuple[str, int]]:
    """`rows` texts of ~`sentences` sentences, each with the index of its topic."""
    return list(iter_topic_rows(rows, k, seed, sentences))


def iter_topic_rows(
    rows: int, k: int = 8, seed: int = 0, sentences: int = 8
) -> Iterator[tuple[str, int]]:
    """`topic_rows` one row at a time (a benchmark's million rows are never all held)."""
    names = list(TOPICS)[:k]
    rng = random.Random(seed)
    for i in range(rows):
        topic = i % len(names)
        picked = [rng.choice(TOPICS[names[topic]]) for _ in range(sentences)]
        picked.insert(rng.randrange(len(picked) + 1), rng.choice(FILLER))
        yield f"({i}) " + " ".join(picked), topic
