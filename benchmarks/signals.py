"""Signals against a corpus with known truth, and near-duplicates beside plain datasketch.

    .venv/bin/python benchmarks/signals.py --rows 20000 --json

Builds an SFT table of ~1 KiB rows (prose and Python code) in a temporary Podium home:
- near-duplicate copies of some rows: 5-20% of characters edited, sentences reordered,
  identifiers renamed in code (each copy names its source);
- rows with an eval problem pasted in, against an eval table of such problems;
- private data and secrets of every kind the signal knows, in realistic contexts, and
  look-alikes that are none (dates, versions, hashes, UUIDs, order numbers);
- rows made of one language's sentences (en, fr, de, es, it).

Then runs each signal as `compute_signals` does (scan the Iceberg snapshot, compute,
write the signal table) and reports precision and recall per signal, rows/s, and, in
the same run, a plain `datasketch` MinHash + MinHashLSH loop with the same shingles,
permutations and bands over the same texts (held in memory, no table read or written).

Near-duplicate truth: pairs whose exact Jaccard of shingles is >= the threshold (among
the constructed pairs and every pair either side reports). Precision counts the pairs the
signal states, each cluster member with its canonical row (what "keep one per cluster"
acts on); recall, the true pairs put in one cluster (and, as `recall_not_both_kept`, the
true pairs of which keeping one per cluster keeps at most one row). Recall is also given
per edit kind over all constructed pairs, whatever their Jaccard.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import resource
import shutil
import string
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS_SEED = 7
LANG_SENTENCES = {
    "en": [
        "The committee will meet again next week to discuss the budget for the new library.",
        "She walked along the river every morning before the city woke up.",
        "Most of the students agreed that the exam had been harder than expected.",
        "We should probably leave early because the roads are busy on Fridays.",
        "His grandmother still remembers the winter when the lake froze completely.",
        "The museum has opened a new exhibition about the history of navigation.",
    ],
    "fr": [
        "Le comité se réunira de nouveau la semaine prochaine pour discuter du budget.",
        "Elle marchait le long de la rivière chaque matin avant le réveil de la ville.",
        "La plupart des étudiants ont trouvé que l'examen était plus difficile que prévu.",
        "Nous devrions partir tôt parce que les routes sont chargées le vendredi.",
        "Sa grand-mère se souvient encore de l'hiver où le lac a complètement gelé.",
        "Le musée a ouvert une nouvelle exposition sur l'histoire de la navigation.",
    ],
    "de": [
        "Der Ausschuss wird sich nächste Woche erneut treffen, um den Haushalt zu besprechen.",
        "Sie ging jeden Morgen am Fluss entlang, bevor die Stadt erwachte.",
        "Die meisten Studenten waren sich einig, dass die Prüfung schwerer war als erwartet.",
        "Wir sollten wahrscheinlich früh losfahren, weil die Straßen freitags voll sind.",
        "Seine Großmutter erinnert sich noch an den Winter, als der See ganz zufror.",
        "Das Museum hat eine neue Ausstellung über die Geschichte der Seefahrt eröffnet.",
    ],
    "es": [
        "El comité se reunirá de nuevo la próxima semana para hablar del presupuesto.",
        "Ella caminaba junto al río cada mañana antes de que la ciudad despertara.",
        "La mayoría de los estudiantes pensó que el examen había sido más difícil de lo esperado.",
        "Deberíamos salir temprano porque las carreteras están llenas los viernes.",
        "Su abuela todavía recuerda el invierno en que el lago se congeló por completo.",
        "El museo ha abierto una nueva exposición sobre la historia de la navegación.",
    ],
    "it": [
        "Il comitato si riunirà di nuovo la prossima settimana per discutere il bilancio.",
        "Camminava lungo il fiume ogni mattina prima che la città si svegliasse.",
        "La maggior parte degli studenti ha trovato l'esame più difficile del previsto.",
        "Dovremmo partire presto perché le strade sono trafficate il venerdì.",
        "Sua nonna ricorda ancora l'inverno in cui il lago gelò completamente.",
        "Il museo ha aperto una nuova mostra sulla storia della navigazione.",
    ],
}


# ---------------------------------------------------------------- the corpus


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        n = rng.choice((3, 4, 5, 6, 7, 8, 9))
        words.add("".join(rng.choice("abcdefghiklmnoprstuvwy") for _ in range(n)))
    return sorted(words)


def prose(rng: random.Random, vocab: list[str], chars: int = 1000) -> str:
    sentences = []
    total = 0
    while total < chars:
        n = rng.randint(8, 20)
        words = [
            vocab[min(int(rng.paretovariate(0.8)) * 7 + rng.randrange(7), len(vocab) - 1)]
            for _ in range(n)
        ]
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        total += len(sentence) + 1
    return " ".join(sentences)


def code(rng: random.Random, vocab: list[str], chars: int = 1000) -> str:
    lines = []
    total = 0
    while total < chars:
        name = "_".join(rng.sample(vocab, 2))
        args = ", ".join(rng.sample(vocab, rng.randint(1, 3)))
        var = rng.choice(vocab)
        body = [
            f"def {name}({args}):",
            f'    """{prose(rng, vocab, 60)}"""',
            f"    {var} = []",
            f"    for item in {args.split(', ')[0]}:",
            f"        if item > {rng.randint(1, 999)}:",
            f"            {var}.append(item * {rng.randint(2, 9)})",
            f"    return {var}",
            "",
        ]
        lines.extend(body)
        total += sum(len(b) + 1 for b in body)
    return "\n".join(lines)


def char_edits(rng: random.Random, text: str, fraction: float) -> str:
    chars = list(text)
    for _ in range(max(1, int(len(chars) * fraction))):
        i = rng.randrange(len(chars))
        op = rng.random()
        letter = rng.choice(string.ascii_lowercase)
        if op < 0.5:
            chars[i] = letter
        elif op < 0.75:
            chars.insert(i, letter)
        elif len(chars) > 1:
            del chars[i]
    return "".join(chars)


def reorder(rng: random.Random, text: str) -> str:
    sentences = [s for s in text.split(". ") if s]
    rng.shuffle(sentences)
    return ". ".join(sentences)


def rename(rng: random.Random, text: str, vocab: list[str]) -> str:
    import re

    names = sorted(
        set(re.findall(r"^def (\w+)", text, re.M)) | set(re.findall(r"    (\w+) = \[\]", text))
    )
    for old in rng.sample(names, min(len(names), 3)):
        text = re.sub(rf"\b{re.escape(old)}\b", rng.choice(vocab) + "_" + rng.choice(vocab), text)
    return text


def luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    from podium.signals.private_patterns import luhn_ok

    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for d in string.digits:
        if luhn_ok(body + d):
            return body + d
    raise AssertionError


def iban(country: str, length: int, rng: random.Random) -> str:
    bban = "".join(rng.choice(string.digits) for _ in range(length - 4))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(numeric) % 97
    return f"{country}{check:02d}{bban}"


def grouped(value: str, sizes: list[int]) -> str:
    out, at = [], 0
    for s in sizes:
        out.append(value[at : at + s])
        at += s
    return " ".join(out)


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits


def private_value(kind: str, rng: random.Random) -> tuple[str, str]:
    """(a value of `kind`, the sentence it sits in with {} where it goes)."""
    first = rng.choice(["anna", "li.wei", "omar", "j.smith", "maria_g", "kenji"])
    if kind == "email":
        domain = rng.choice(["gmail.com", "corp.example.org", "uni-bonn.de"])
        value = f"{first}{rng.randint(1, 99)}@{domain}"
        return value, rng.choice(
            ["Contact me at {} for details.", 'AUTHOR_EMAIL = "{}"', "From: {}"]
        )
    if kind == "phone":
        value = rng.choice(
            [
                f"+1 415 555 {rng.randint(1000, 9999)}",
                f"({rng.randint(200, 989)}) 555-{rng.randint(1000, 9999)}",
                f"+44 20 7946 {rng.randint(1000, 9999)}",
                f"+49 30 {rng.randint(10000000, 99999999)}",
            ]
        )
        return value, rng.choice(["Call {} after six.", "phone: {}", "Support line {} (weekdays)."])
    if kind == "ip_address":
        if rng.random() < 0.8:
            value = ".".join(str(rng.randint(1, 254)) for _ in range(4))
        else:
            value = f"2001:db8:{rng.randint(1, 9999):x}::{rng.randint(1, 65535):x}"
        return value, rng.choice(['HOST = "{}"', "ssh deploy@{} -p 22", "the server at {} is down"])
    if kind == "card_number":
        prefix, length, sizes = rng.choice(
            [("4", 16, [4, 4, 4, 4]), ("5", 16, [4, 4, 4, 4]), ("37", 15, [4, 6, 5])]
        )
        number = luhn_complete(
            prefix + (str(rng.randint(1, 5)) if prefix == "5" else ""), length, rng
        )
        value = grouped(number, sizes) if rng.random() < 0.7 else number
        return value, rng.choice(["card {} exp 12/29", "Paid with {}.", 'card_number = "{}"'])
    if kind == "iban":
        country, length = rng.choice([("DE", 22), ("GB", 22), ("FR", 27), ("NL", 18)])
        if country in ("GB", "NL"):
            bban = rand(rng, string.ascii_uppercase, 4) + rand(rng, string.digits, length - 8)
            numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
            value = f"{country}{98 - int(numeric) % 97:02d}{bban}"
        else:
            value = iban(country, length, rng)
        if rng.random() < 0.5:
            value = " ".join(value[i : i + 4] for i in range(0, len(value), 4))
        return value, rng.choice(
            ["Please transfer to IBAN {} by Friday.", "IBAN: {}", 'iban = "{}"']
        )
    if kind == "secret":
        value = rng.choice(
            [
                "AKIA" + rand(rng, string.ascii_uppercase + string.digits, 16),
                "ghp_" + rand(rng, ALNUM, 36),
                "xoxb-"
                + rand(rng, string.digits, 11)
                + "-"
                + rand(rng, string.digits, 12)
                + "-"
                + rand(rng, string.ascii_lowercase + string.digits, 24),
                "sk_live_" + rand(rng, ALNUM, 24),
                "AIza" + rand(rng, ALNUM + "_-", 35),
                "hf_" + rand(rng, string.ascii_letters, 34),
                "sk-proj-" + rand(rng, ALNUM + "_-", 48),
                "eyJhbGciOiJIUzI1NiJ9." + rand(rng, ALNUM, 40) + "." + rand(rng, ALNUM + "_-", 43),
                "-----BEGIN RSA PRIVATE KEY-----\n"
                + rand(rng, ALNUM + "+/", 64)
                + "\n-----END RSA PRIVATE KEY-----",
            ]
        )
        return value, rng.choice(['API_KEY = "{}"', "export TOKEN={}", "key:\n{}\n"])
    raise ValueError(kind)


LOOK_ALIKES = [
    "Released on 2024-03-15 as version 3.12.1 (build 20240315).",
    "Order #48213377 shipped; tracking 1Z999AA10123456784.",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
    "request id 123e4567-e89b-12d3-a456-426614174000 timed out at 12:30:45",
    "The ratio was 16:9 and the score 3-2; pi is 3.14159265358979.",
    "x = 1234567890123456  # not a card: fails Luhn",
    "@dataclass\nclass Point: x: int = 0",
]
PRIVATE_KINDS = ("email", "phone", "ip_address", "card_number", "iban", "secret")


def eval_problems(rng: random.Random, n: int) -> list[str]:
    names = [
        "Natalia",
        "Weng",
        "Betty",
        "Julie",
        "James",
        "Mark",
        "Albert",
        "Ken",
        "Alexis",
        "Tina",
    ]
    things = ["clips", "apples", "books", "marbles", "stickers", "cookies", "pencils", "cards"]
    out = []
    for i in range(n):
        a, b, c = rng.randint(2, 90), rng.randint(2, 9), rng.randint(10, 500)
        out.append(
            f"{rng.choice(names)} had {a} {rng.choice(things)} on day {i}. Each week she buys {b} "
            f"more and gives away {rng.randint(1, b)} to her friend who lives {c} meters away. "
            f"How many {rng.choice(things)} does she have after {rng.randint(2, 12)} weeks if she "
            f"started with {a} and spent {c} cents?"
        )
    return out


Truth = tuple[str, Any]  # ("pair", (src, how)), ("pasted", p), ("private", (kind, a, b)), ...


def corpus_row(
    rng: random.Random,
    vocab: list[str],
    problems: list[str],
    i: int,
    source: Callable[[int], tuple[str, str]],
) -> tuple[str, str, Truth | None] | None:
    """Row `i`'s text, kind and truth, drawn from `rng`; `source(j)` gives an earlier
    row's text and kind (a near-copy's original). None: the draw picked an original
    that is not prose or code, and the caller draws again."""
    r = rng.random()
    if r < 0.12 and i > 10:  # a near-duplicate of an earlier row
        src = rng.randrange(i)
        original, kind = source(src)
        if kind not in ("prose", "code"):
            return None
        if kind == "code":
            how = rng.choice(["rename", "edit", "exact"])
        else:
            how = rng.choice(["edit", "reorder", "exact"])
        if how == "exact":  # the same text in other case and white space
            text = "  ".join(original.upper().split(" "))
        elif how == "edit":
            fraction = rng.uniform(0.05, 0.20)
            how = f"edit {int(fraction * 100 // 5 * 5)}-{int(fraction * 100 // 5 * 5) + 5}%"
            text = char_edits(rng, original, fraction)
        elif how == "reorder":
            text = reorder(rng, original)
        else:
            text = rename(rng, original, vocab)
        return text, "copy", ("pair", (src, how))
    if r < 0.125:  # an eval problem pasted into prose
        p = rng.randrange(len(problems))
        body = prose(rng, vocab, 800)
        cut = body.find(". ", len(body) // 2) + 2
        text = body[:cut] + "Here is a question: " + problems[p] + " " + body[cut:]
        return text, "pasted", ("pasted", p)
    if r < 0.185:  # private data
        kind = PRIVATE_KINDS[i % len(PRIVATE_KINDS)]
        value, context = private_value(kind, rng)
        before = prose(rng, vocab, 400) + "\n"
        sentence = context.format(value)
        start = len(before) + sentence.index(value)
        text = before + sentence + "\n" + prose(rng, vocab, 400)
        return text, "private", ("private", (kind, start, start + len(value)))
    if r < 0.2:  # one language
        lang = rng.choice(sorted(LANG_SENTENCES))
        text = " ".join(rng.choices(LANG_SENTENCES[lang], k=rng.randint(2, 6)))
        return text, "language", ("language", lang)
    is_code = rng.random() < 0.3
    text = code(rng, vocab) if is_code else prose(rng, vocab)
    if rng.random() < 0.05:
        text += "\n" + rng.choice(LOOK_ALIKES)
    return text, "code" if is_code else "prose", None


def build_corpus(rows: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    vocab = vocabulary(random.Random(WORDS_SEED))
    texts: list[str] = []
    kinds: list[str] = []
    pairs: list[tuple[int, int, str]] = []
    problems = eval_problems(rng, 200)
    pasted: dict[int, int] = {}
    private: list[tuple[int, str, int, int]] = []  # row, kind, start, end
    language: dict[int, str] = {}
    while len(texts) < rows:
        i = len(texts)
        row = corpus_row(rng, vocab, problems, i, lambda j: (texts[j], kinds[j]))
        if row is None:
            continue
        text, kind, truth = row
        texts.append(text)
        kinds.append(kind)
        if truth is None:
            continue
        what, value = truth
        if what == "pair":
            pairs.append((value[0], i, value[1]))
        elif what == "pasted":
            pasted[i] = value
        elif what == "private":
            private.append((i, *value))
        else:
            language[i] = value
    return {
        "texts": texts,
        "kinds": kinds,
        "pairs": pairs,
        "problems": problems,
        "pasted": pasted,
        "private": private,
        "language": language,
    }


def streamed_problems(seed: int) -> list[str]:
    """The eval problems `streamed_texts` pastes (the same for every size)."""
    return eval_problems(random.Random(seed), 200)


def streamed_texts(start: int, stop: int, seed: int) -> list[str]:
    """Rows start..stop-1 of a corpus of the same kinds and shares as `build_corpus`'s, in
    bounded memory: each row is drawn from its own seed, so a near-copy makes its
    original again instead of keeping every earlier row (10 GB at 10M rows), and a row
    is the same whatever the corpus's size or the chunk it is made in."""
    vocab = vocabulary(random.Random(WORDS_SEED))
    problems = streamed_problems(seed)

    def row(i: int) -> tuple[str, str]:
        rng = random.Random((seed << 40) | i)
        while (made := corpus_row(rng, vocab, problems, i, row)) is None:
            pass
        return made[0], made[1]

    return [row(i)[0] for i in range(start, stop)]


# ---------------------------------------------------------------- measuring


def row_id(i: int) -> str:
    return f"row{i:08d}"


def exact_jaccard_of(texts: list[str], k: int) -> Any:
    import numpy as np

    from podium.signals.minhash import jaccard, shingle_sets

    cache: dict[int, Any] = {}

    def sets(i: int) -> Any:
        if i not in cache:
            h, o = shingle_sets([texts[i]], k)
            cache[i] = np.unique(h[o[0] : o[1]])
        return cache[i]

    return lambda a, b: jaccard(sets(a), sets(b))


def pr(tp: int, predicted: int, truth: int) -> dict[str, float | int]:
    return {
        "precision": round(tp / predicted, 4) if predicted else 1.0,
        "recall": round(tp / truth, 4) if truth else 1.0,
        "true": truth,
        "predicted": predicted,
    }


def datasketch_loop(
    texts: list[str], num_perm: int, bands: int, k: int, seed: int
) -> tuple[float, set[tuple[int, int]]]:
    """The plain library loop: shingles, MinHash per row, MinHashLSH insert and query."""
    from datasketch import MinHash, MinHashLSH

    start = time.perf_counter()
    lsh = MinHashLSH(num_perm=num_perm, params=(bands, num_perm // bands))
    hashes = []
    for i, text in enumerate(texts):
        norm = " ".join(text.lower().split())
        m = MinHash(num_perm=num_perm, seed=seed)
        m.update_batch([norm[j : j + k].encode() for j in range(len(norm) - k + 1)])
        lsh.insert(i, m)
        hashes.append(m)
    found = set()
    for i, m in enumerate(hashes):
        for j in lsh.query(m):
            if j != i:
                found.add((min(i, j), max(i, j)))
    return time.perf_counter() - start, found


def write_corpus(corpus: dict[str, Any]) -> None:
    """The corpus as `bench.corpus` (ids row00000000, ...) and its eval problems as
    `bench.evals`, in the Podium home PODIUM_HOME names."""
    texts = corpus["texts"]
    write_texts("bench.corpus", "row", (texts[at : at + 5000] for at in range(0, len(texts), 5000)))
    write_texts("bench.evals", "eval", [corpus["problems"]])


def write_texts(name: str, prefix: str, chunks: Iterable[list[str]], start: int = 0) -> None:
    """`chunks` of texts as table `name`, one user turn each, ids prefix00000000 on
    (appended from id `start` on, when it is not 0), streamed: one chunk in memory at a
    time."""
    import pyarrow as pa

    from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
    from podium.store.write.write import write_batches

    def batches() -> Any:
        at = start
        for chunk in chunks:
            yield pa.RecordBatch.from_pylist(
                [
                    {"id": f"{prefix}{i:08d}", "messages": [{"role": "user", "content": t}]}
                    for i, t in enumerate(chunk, start=at)
                ],
                schema=SFT_ARROW_SCHEMA,
            )
            at += len(chunk)

    write_batches(name, batches(), schema=SFT_SCHEMA, mode="append" if start else "create")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="Print one JSON document.")
    parser.add_argument("--no-baseline", action="store_true", help="Skip the datasketch loop.")
    parser.add_argument(
        "--only",
        default="near-dup,exact-dup,contamination,private-data,language,length",
        help="Comma-separated signals to measure (default: all).",
    )
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="podium-bench-signals-")
    atexit.register(shutil.rmtree, home, True)  # the corpus and its signal tables
    os.environ["PODIUM_HOME"] = home

    from podium.signals.job import SignalsConfig, compute_signals
    from podium.signals.settings import NearDupSettings
    from podium.store.read.read import read_small

    only = {s.strip() for s in args.only.split(",")}
    corpus = build_corpus(args.rows, args.seed)
    texts: list[str] = corpus["texts"]
    write_corpus(corpus)
    mean_bytes = sum(len(t.encode()) for t in texts) / len(texts)
    report: dict[str, Any] = {
        "rows": len(texts),
        "mean_row_bytes": round(mean_bytes),
        "signals": {},
    }

    def run(signal: str, **settings: Any) -> tuple[list[dict[str, Any]], float]:
        config = SignalsConfig.model_validate(
            {"table": {"name": "bench.corpus"}, "signals": [signal], **settings}
        )
        start = time.perf_counter()
        compute_signals(config)
        seconds = time.perf_counter() - start
        rows = read_small(f"bench.corpus__sig_{signal.replace('-', '_')}", max_rows=10_000_000)[0]
        return rows.to_pylist(), seconds

    def rate(seconds: float) -> float:
        return round(len(texts) / seconds, 1)

    if "near-dup" in only:
        # near-duplicates
        settings = NearDupSettings()
        near, seconds = run("near-dup")
        cluster = {r["id"]: r["cluster"] for r in near}
        jac = exact_jaccard_of(texts, settings.shingle)
        constructed = {(a, b): how for a, b, how in corpus["pairs"]}
        base_seconds, base_pairs = 0.0, set[tuple[int, int]]()
        if not args.no_baseline:
            base_seconds, base_pairs = datasketch_loop(
                texts, settings.num_perm, settings.bands, settings.shingle, settings.seed
            )
        # What the signal states: each member is a near-copy of its cluster's canonical
        # row (and what "keep one per cluster" acts on). Precision: those pairs within
        # the threshold. Recall: true pairs put in one cluster.
        ours = {
            (
                min(int(r["id"][3:]), int(r["cluster"][3:])),
                max(int(r["id"][3:]), int(r["cluster"][3:])),
            )
            for r in near
            if not r["is_canonical"]
        }
        considered = set(constructed) | ours | base_pairs
        truth = {p for p in considered if jac(*p) >= settings.threshold}
        ours_tp = len(ours & truth)
        together = sum(
            1
            for a, b in truth
            if cluster.get(row_id(a)) is not None
            and cluster.get(row_id(a)) == cluster.get(row_id(b))
        )
        # for keeping one: a true pair is handled when not both of its rows are kept
        kept = set(range(len(texts))) - {int(r["id"][3:]) for r in near if not r["is_canonical"]}
        not_both_kept = sum(1 for a, b in truth if not (a in kept and b in kept))
        base_tp = len(base_pairs & truth)
        by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for (a, b), how in constructed.items():
            by_kind[how][1] += 1
            by_kind[how][0] += int(
                cluster.get(row_id(a)) is not None
                and cluster.get(row_id(a)) == cluster.get(row_id(b))
            )
        report["signals"]["near-dup"] = {
            "precision": round(ours_tp / len(ours), 4) if ours else 1.0,
            "recall": round(together / len(truth), 4) if truth else 1.0,
            "true": len(truth),
            "predicted": len(ours),
            "recall_not_both_kept": round(not_both_kept / len(truth), 4) if truth else 1.0,
            "pairs": "precision: (member, its canonical) within the threshold; "
            "recall: true pairs in one cluster",
            "rows_per_s": rate(seconds),
            "seconds": round(seconds, 2),
            "settings": settings.model_dump(),
            "constructed_pairs_found": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_kind.items())},
            "datasketch": (
                {
                    **pr(base_tp, len(base_pairs), len(truth)),
                    "rows_per_s": rate(base_seconds),
                    "seconds": round(base_seconds, 2),
                    "note": "LSH candidates, no verification; texts in memory",
                }
                if base_seconds
                else None
            ),
            "speedup_vs_datasketch": round(base_seconds / seconds, 2) if base_seconds else None,
        }

    if "exact-dup" in only:
        # exact duplicates: truth = equal normalised texts
        from podium.signals.exact_dup import normalised

        exact, seconds = run("exact-dup")
        groups: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(texts):
            groups[normalised(t)].append(i)
        truth_rows = {i for g in groups.values() if len(g) > 1 for i in g}
        found_rows = {int(r["id"][3:]) for r in exact}
        report["signals"]["exact-dup"] = {
            **pr(len(found_rows & truth_rows), len(found_rows), len(truth_rows)),
            "rows_per_s": rate(seconds),
        }

    if "contamination" in only:
        # contamination
        hits, seconds = run("contamination", contamination={"evals": ["bench.evals"]})
        flagged = {int(r["id"][3:]) for r in hits}
        right_eval = {
            int(r["id"][3:])
            for r in hits
            if int(r["id"][3:]) in corpus["pasted"]
            and r["eval_id"] == f"eval{corpus['pasted'][int(r['id'][3:])]:08d}"
        }
        pasted = set(corpus["pasted"])
        # a near-copy of a pasted row carries the problem too: it is contaminated, not clean
        carriers = pasted | {b for a, b, _ in corpus["pairs"] if a in pasted}
        clean = len(texts) - len(carriers)
        report["signals"]["contamination"] = {
            "recall_on_pasted": round(len(flagged & pasted) / len(pasted), 4) if pasted else 1.0,
            "right_eval_row": round(len(right_eval) / len(pasted), 4) if pasted else 1.0,
            "clean_rows_flagged": len(flagged - carriers),
            "clean_flagged_fraction": round(len(flagged - carriers) / clean, 6),
            "pasted": len(pasted),
            "rows_per_s": rate(seconds),
        }

    if "private-data" in only:
        # private data: a hit counts when its kind matches and its span overlaps the value
        found, seconds = run("private-data")
        planted: dict[int, list[tuple[str, int, int]]] = defaultdict(list)
        for row, kind, start, end in corpus["private"]:
            planted[row].append((kind, start, end))
        # a near-copy of a row with private data may carry it too (edited or not): leave
        # such rows out of the count either way
        copied = {b for a, b, _ in corpus["pairs"] if a in planted}
        per_kind: dict[str, list[int]] = {
            k: [0, 0, 0] for k in PRIVATE_KINDS
        }  # tp, predicted, truth
        for items in planted.values():
            for kind, _, _ in items:
                per_kind[kind][2] += 1
        matched: set[tuple[int, str]] = set()
        for r in found:
            row = int(r["id"][3:])
            if row in copied:
                continue
            per_kind[r["kind"]][1] += 1
            if any(
                k == r["kind"] and r["start"] < e and s < r["end"]
                for k, s, e in planted.get(row, [])
            ):
                if (row, r["kind"]) not in matched:
                    per_kind[r["kind"]][0] += 1
                    matched.add((row, r["kind"]))
        report["signals"]["private-data"] = {
            **{k: pr(v[0], v[1], v[2]) for k, v in per_kind.items()},
            "rows_per_s": rate(seconds),
        }

    if "language" in only:
        # language: each engine over all its languages, and lingua told the five only;
        # per language, precision and recall over the rows written in one language
        written: dict[int, str] = corpus["language"]

        def languages_of(name: str, **language: Any) -> None:
            langs, seconds = run("language", language=language)
            got = {int(r["id"][3:]): r["language"] for r in langs}
            right = sum(1 for i, lang in written.items() if got.get(i) == lang)
            per: dict[str, Any] = {}
            for lang in sorted(set(written.values())):
                tp = sum(1 for i, t in written.items() if t == lang and got.get(i) == lang)
                said = sum(1 for i in written if got.get(i) == lang)
                per[lang] = pr(tp, said, sum(1 for t in written.values() if t == lang))
            report["signals"][name] = {
                "accuracy": round(right / len(written), 4) if written else 1.0,
                "rows": len(written),
                "per_language": per,
                "rows_per_s": rate(seconds),
                "settings": language,
            }

        languages_of("language")  # the default: fastText
        languages_of("language (lingua)", engine="lingua")
        languages_of(
            "language (lingua, 5 languages)", engine="lingua", languages=sorted(LANG_SENTENCES)
        )

    if "length" in only:
        _, seconds = run("length")
        report["signals"]["length"] = {"rows_per_s": rate(seconds)}
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, values in report["signals"].items():
            print(name, json.dumps(values))
        print(
            "rows",
            report["rows"],
            "mean bytes",
            report["mean_row_bytes"],
            "peak RSS MB",
            report["peak_rss_mb"],
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
