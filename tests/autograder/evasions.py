"""A corpus of plausible evasions of the similarity flags, and their measurement.

Four independent correct submissions are the originals (the demo's vectorized one, one
written with loops, one in torch, and the reference kernels). Each kind of evasion turns an original into a copy a
student might hand in; :func:`measure` says, per kind, how many of its copies the class
report flags beside their original, and how many pairs of *independent* originals it flags
(false alarms). For the copies with the same shape and different logic, :func:`measure_outputs`
grades each original and its copies and says in which kernels their outputs on the hidden inputs
differ. ``bench/similarity.py`` prints both and writes their tables in ``docs/similarity.md``;
``tests/autograder/grade/test_similarity.py`` checks the tables are current.
"""

from __future__ import annotations

import keyword
import random
import re
import tempfile
from pathlib import Path

from autograder.grade import copy_clusters, similarity

ROOT = Path(__file__).resolve().parents[2]
ORIGINALS = {
    "vectorized": ROOT / "autograder" / "assets" / "demo" / "correct.py",
    "loops": ROOT / "tests" / "autograder" / "submissions" / "correct_loops.py",
    "torch": ROOT / "tests" / "autograder" / "submissions" / "correct_torch.py",
    "reference": ROOT / "reference_impl" / "kernels.py",
}
SEEDS = range(4)  # copies per original and kind (the transforms draw names and places from a seed)
# The originals a sandbox can grade (the reference's kernels import reference_impl, which it hides).
GRADED = ("vectorized", "loops", "torch")
WRONG_LOGIC = "wrong logic, same shape"
UNRELATED = (ROOT / "reference_impl" / "keydoor.py").read_text(encoding="utf-8")[:3500]  # real code, pasted in


def _names(source: str) -> list[str]:
    """The identifiers the copy may rename: those it defines (assigned, def, parameters)."""
    defined = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*(?==[^=]|,|\)|:)", source)) | set(re.findall(r"def ([a-z_]\w*)", source))
    return sorted(n for n in defined if not keyword.iskeyword(n) and n not in {"self", "np", "torch", "math"})


def rename(source: str, rng: random.Random) -> str:
    mapping = {n: f"{rng.choice('vwxyz')}{rng.randrange(10**6)}_{n[::-1]}" for n in _names(source)}
    return re.sub(r"\b[a-zA-Z_]\w*\b", lambda m: mapping.get(m.group(), m.group()), source)


def recomment(source: str, rng: random.Random) -> str:
    no_comments = re.sub(r"#[^\n]*", "", source)
    lines = no_comments.splitlines()
    out = []
    for line in lines:
        out.append(line)
        if line.strip().startswith("def ") and rng.random() < 0.8:
            indent = " " * (len(line) - len(line.lstrip()) + 4)
            out.append(f'{indent}"""My own take on this one, written after the lecture ({rng.randrange(100)})."""')
    return "\n".join(out) + "\n"


def reformat(source: str, rng: random.Random) -> str:
    squeezed = re.sub(r" ?([=+\-*/<>,]) ?", r"\1", source)
    return re.sub(r"\n", lambda m: "\n" * rng.choice((1, 2, 3)), squeezed)


def _after_statements(source: str, rng: random.Random, make) -> str:
    """``make(indent, rng)`` inserted after each simple statement line (not after a block opener)."""
    out = []
    depth = 0
    for line in source.splitlines():
        out.append(line)
        depth += line.count("(") + line.count("[") + line.count("{") - line.count(")") - line.count("]") - line.count("}")
        stripped = line.strip()
        if stripped and depth == 0 and not stripped.endswith((":", "\\", ",")) and not stripped.startswith(("#", "@", '"""', "'''")):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(make(indent, rng))
    return "\n".join(out) + "\n"


def pass_padding(source: str, rng: random.Random) -> str:
    return _after_statements(source, rng, lambda indent, _: f"{indent}pass")


def no_op_padding(source: str, rng: random.Random) -> str:
    return _after_statements(source, rng, lambda indent, r: indent + r.choice(["...", "None", "0", "'note'", "_ = None"][:4]))


def lexer_stopper(source: str, rng: random.Random) -> str:
    """A cell holding only ``'''`` before the code (it fails alone; the rest runs)."""
    return "'''" + similarity.CELL_BREAK + source


def pasted(source: str, rng: random.Random) -> str:
    """About 3.5 kB of unrelated real code pasted after the copy."""
    return source + "\n\n" + UNRELATED


def _blocks(source: str) -> tuple[str, list[str]]:
    """(the lines before the first def, each top-level def or statement block)."""
    parts = re.split(r"\n(?=def |[A-Za-z_]\w* = )", source)
    return parts[0], parts[1:]


def reorder(source: str, rng: random.Random) -> str:
    head, blocks = _blocks(source)
    rng.shuffle(blocks)
    return "\n".join([head, *blocks]) + "\n"


def dead_code(source: str, rng: random.Random) -> str:
    head, blocks = _blocks(source)
    helper = (
        "def unused_{n}(values):\n    total = 0\n    for v in values:\n        if v > {k}:\n            total += v * {k}\n"
        "        else:\n            total -= v\n    return total\n"
    )
    out = [head]
    for k, block in enumerate(blocks):
        out.append(block)
        if rng.random() < 0.5:
            out.append(helper.format(n=k, k=rng.randrange(2, 9)))
    return "\n".join(out) + "\n"


def temporaries(source: str, rng: random.Random) -> str:
    """Every ``return EXPR`` split into ``tmp = EXPR`` and ``return tmp`` (a rewrite, not padding)."""

    def split(m: re.Match) -> str:
        name = f"tmp{rng.randrange(1000)}"
        return f"{m.group(1)}{name} = {m.group(2)}\n{m.group(1)}return {name}"

    return re.sub(r"^([ \t]+)return (\S.*)$", split, source, flags=re.M)


def swapped_operands(source: str, rng: random.Random) -> str:
    """``a * b`` and ``a + b`` between plain names or numbers written the other way round (a rewrite)."""
    return re.sub(r"\b(\w+) ([*+]) (\w+)\b", lambda m: f"{m.group(3)} {m.group(2)} {m.group(1)}", source)


def all_at_once(source: str, rng: random.Random) -> str:
    """Every edit above together (renamed, re-commented, padded, reordered, dead code added)."""
    return pass_padding(dead_code(reorder(recomment(rename(source, rng), rng), rng), rng), rng)


def wrong_logic(source: str, rng: random.Random) -> str:
    """The same shape with different logic (max -> min, argmax -> argmin): it should be flagged, and
    read as graded differently (tests/autograder/grade/test_similarity.py checks that)."""
    changed = re.sub(r"\bargmax\b", "argmin", source)
    changed = re.sub(r"\bmax\b", "min", changed)
    return changed.replace("(1 - ", "(1 + ").replace("(1.0 - ", "(1.0 + ")


KINDS = {
    "verbatim": lambda s, r: s,
    "renamed": rename,
    "re-commented": recomment,
    "reformatted": reformat,
    "pass after each statement": pass_padding,
    "no-op statements": no_op_padding,
    "a lone ''' cell first": lexer_stopper,
    "3.5 kB of unrelated code pasted": pasted,
    "functions reordered": reorder,
    "dead helpers inserted": dead_code,
    "renamed, re-commented, padded, reordered, dead helpers at once": all_at_once,
    "returns split into temporaries": temporaries,
    "operands of * and + swapped": swapped_operands,
    WRONG_LOGIC: wrong_logic,
}


def _record(label: str, code: str, given: set[int]) -> dict:
    return {"label": label, "score": 120.0, "failed": [], "answers": [], "fingerprints": sorted(similarity.fingerprints(code) - given)}


def measure() -> dict:
    """{kind: (flagged, total)} of copies next to their original, and ("independent", (flagged, pairs))."""
    given = similarity.released_fingerprints()
    originals = {name: path.read_text(encoding="utf-8") for name, path in ORIGINALS.items()}
    results: dict[str, tuple[int, int]] = {}
    for kind, transform in KINDS.items():
        flagged = total = 0
        for name, source in originals.items():
            for seed in SEEDS:
                copy = transform(source, random.Random(f"{kind}/{name}/{seed}"))
                pairs = copy_clusters.flagged_pairs([_record("original", source, given), _record("copy", copy, given)])
                flagged += bool(pairs)
                total += 1
        results[kind] = (flagged, total)
    records = [_record(name, source, given) for name, source in originals.items()]
    independent = len(records) * (len(records) - 1) // 2
    results["independent originals (false alarms)"] = (len(copy_clusters.flagged_pairs(records)), independent)
    return results


def table(results: dict) -> str:
    """The markdown table docs/similarity.md holds."""
    rows = ["| evasion | flagged / copies |", "|---|---:|"]
    rows += [f"| {kind} | {flagged} / {total} |" for kind, (flagged, total) in results.items()]
    return "\n".join(rows)


def measure_outputs(corpus) -> dict[str, tuple[int, int, list[str]]]:
    """{original: (copies of the wrong-logic kind whose outputs on the hidden inputs differ from
    the original's in some kernel, copies, the kernels any of them differs in)} for the
    :data:`GRADED` originals, each text graded once in a sandbox, as a class run grades it."""
    from autograder.grade import pipeline  # the corpus' grading: only this measurement needs it

    texts: dict[str, str] = {}  # name -> text
    copies: dict[str, list[str]] = {}
    for name in GRADED:
        source = ORIGINALS[name].read_text(encoding="utf-8")
        texts[name] = source
        copies[name] = [wrong_logic(source, random.Random(f"{WRONG_LOGIC}/{name}/{seed}")) for seed in SEEDS]
    distinct = list(dict.fromkeys([*texts.values(), *(c for found in copies.values() for c in found)]))
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"s{n}.py" for n in range(len(distinct))]
        for path, text in zip(paths, distinct):
            path.write_text(text, encoding="utf-8")
        graded = pipeline.grade_many(paths, corpus, shrink=False)
    outputs = {text: {"outputs": result.outputs} for text, result in zip(distinct, graded)}
    results = {}
    for name in GRADED:
        differ = [copy_clusters.outputs_agree(outputs[texts[name]], outputs[copy])["different"] for copy in copies[name]]
        kernels = list(dict.fromkeys(k for found in differ for k in found))
        results[name] = (sum(bool(found) for found in differ), len(differ), kernels)
    return results


def outputs_table(results: dict) -> str:
    """The markdown table of :func:`measure_outputs` docs/similarity.md holds."""
    rows = ["| original | outputs differ / copies | kernels whose outputs differ |", "|---|---:|---|"]
    rows += [f"| {name} | {n} / {total} | {', '.join(f'`{k}`' for k in kernels) or '—'} |" for name, (n, total, kernels) in results.items()]
    return "\n".join(rows)


def ring_class(rings: int = 40, ring_size: int = 50, code_chars: int = 5400) -> list[dict]:
    """Class-report records of ``rings`` x ``ring_size`` submissions: every member of a ring holds
    that ring's fingerprints (150 of them) and ``code_chars`` of code (the scale the issue set)."""
    rng = random.Random(7)
    prints = [[rng.getrandbits(63) for _ in range(150)] for _ in range(rings)]
    return [
        {
            "label": f"student{i:04d}/m05_assignment_en.ipynb",
            "score": float(rng.randrange(121)),
            "maximum": 120.0,
            "graded": True,
            "error": "",
            "seconds": 0.3,
            "failed": [],
            "mistakes": [],
            "answers": [],
            "limits": [],
            "code": "x = 1\n" * (code_chars // 6),
            "fingerprints": prints[i // ring_size],
        }
        for i in range(rings * ring_size)
    ]
