"""Which submissions share their code: flagged pairs and the clusters they form, at class scale.

Each record carries the winnowed fingerprints of its own code (:mod:`.similarity`). Here:

* **Idioms**: a fingerprint held by more than half of the class (and by at least
  :data:`IDIOM_MIN` submissions) is the task's common code, not evidence, and is removed.
  Below that share a fingerprint counts however many hold it: a copy ring of any size short
  of half the class is found (the old fixed limit of 10 to 50 holders dropped larger rings).
* **Pairs**: two submissions are flagged when they share at least :data:`THRESHOLD` of
  their fingerprints (Jaccard index), or when the smaller one's fingerprints lie at least
  :data:`CONTAINMENT` inside the larger one's (unrelated code pasted into a copy lowers the
  first, not the second; the smaller needs :data:`CONTAINED_MIN` fingerprints, so one
  shared kernel is not a copy); each needs :data:`MIN_FINGERPRINTS` of its own. Submissions with
  the same fingerprints are one node, so a ring of identical copies costs one comparison,
  and candidate pairs come from an inverted index of the fingerprints held by at most
  :data:`PAIR_LIMIT` nodes.
* **Clusters**: the connected components of the flagged pairs, each listed once.

Each pair says how far apart the two scores are, whether the two were graded alike (the
same tests failed, the same numerical answers) and, kernel by kernel, whether their outputs
on the hidden inputs agree (:func:`outputs_agree`, from the digests of
:mod:`.output_digest`): near-identical code whose outputs differ is the same shape with
different logic, not a copy of a working solution. Flags never change a grade.
"""

from __future__ import annotations

from collections import defaultdict

THRESHOLD = 0.8
CONTAINMENT = 0.8
MIN_FINGERPRINTS = 20
CONTAINED_MIN = 60  # a containment flag needs this much code on the smaller side: one shared kernel is not a copy
IDIOM_SHARE = 0.5
IDIOM_MIN = 10
PAIR_LIMIT = 200  # nodes a fingerprint may have and still propose candidate pairs (cost grows with its square)


def idioms(sets: list[set[int]]) -> set[int]:
    """Fingerprints held by more than half of the submissions (and at least :data:`IDIOM_MIN`)."""
    held: dict[int, int] = defaultdict(int)
    for prints in sets:
        for p in prints:
            held[p] += 1
    limit = max(IDIOM_MIN, len(sets) * IDIOM_SHARE)
    return {p for p, n in held.items() if n > limit}


def graded_alike(a: dict, b: dict) -> bool:
    """The same outcome on the hidden tests: the same score, the same failed properties and the same numerical answers."""
    return (
        a.get("score") == b.get("score")
        and sorted(map(tuple, a.get("failed", []))) == sorted(map(tuple, b.get("failed", [])))
        and sorted(map(str, a.get("answers", []))) == sorted(map(str, b.get("answers", [])))
    )


def outputs_agree(a: dict, b: dict) -> dict[str, list[str]]:
    """Kernel by kernel, whether two records' outputs on the hidden inputs agree (their
    ``outputs`` digests): ``same`` (equal digests), ``different`` (unequal), ``unknown`` (a
    digest missing on either side: the kernel was not run to the end, the record predates the
    digests, or its ``outputs`` is not a mapping). Kernels in the order the records list them."""
    mine, theirs = (r.get("outputs") if isinstance(r.get("outputs"), dict) else {} for r in (a, b))
    out: dict[str, list[str]] = {"same": [], "different": [], "unknown": []}
    for kernel in dict.fromkeys([*mine, *theirs]):
        x, y = mine.get(kernel), theirs.get(kernel)
        out["unknown" if x is None or y is None else "same" if x == y else "different"].append(kernel)
    return out


def _pair(records: list[dict], i: int, j: int, jaccard: float, containment: float) -> dict:
    a, b = records[i], records[j]
    return {
        "a": a["label"],
        "b": b["label"],
        "similarity": round(jaccard, 4),
        "containment": round(containment, 4),
        "scores": [a["score"], b["score"]],
        "score_difference": round(abs(a["score"] - b["score"]), 4),
        "graded_alike": graded_alike(a, b),
        "outputs_agree": outputs_agree(a, b),
    }


def flagged_pairs(records: list[dict]) -> list[dict]:
    """Every flagged pair of ``records`` (each with ``label``, ``score``, ``fingerprints``), most similar first."""
    nodes = _nodes(records)
    keys = list(nodes)
    pairs = []
    for members in nodes.values():  # identical copies
        for x, i in enumerate(members):
            pairs += [_pair(records, i, j, 1.0, 1.0) for j in members[x + 1 :]]
    for m, n in _candidate_nodes(keys):
        a, b = keys[m], keys[n]
        shared = len(a & b)
        jaccard, containment = shared / len(a | b), shared / min(len(a), len(b))
        if jaccard >= THRESHOLD or (containment >= CONTAINMENT and min(len(a), len(b)) >= CONTAINED_MIN):
            pairs += [_pair(records, i, j, jaccard, containment) for i in nodes[a] for j in nodes[b]]
    return _in_class_order(records, pairs)


def _nodes(records: list[dict]) -> dict[frozenset, list[int]]:
    """The records with at least :data:`MIN_FINGERPRINTS` fingerprints beyond the idioms,
    grouped by those fingerprints: identical ones are one node (record indices in order)."""
    raw = [set(r.get("fingerprints") or ()) for r in records]
    common = idioms(raw)
    nodes: dict[frozenset, list[int]] = defaultdict(list)
    for i, prints in enumerate(raw):
        own = prints - common
        if len(own) >= MIN_FINGERPRINTS:
            nodes[frozenset(own)].append(i)
    return nodes


def _candidate_nodes(keys: list[frozenset]) -> set[tuple[int, int]]:
    """Pairs of nodes (indices into ``keys``) that share a fingerprint held by at most
    :data:`PAIR_LIMIT` nodes: the only pairs worth comparing."""
    owners: dict[int, list[int]] = defaultdict(list)
    for n, key in enumerate(keys):
        for p in key:
            owners[p].append(n)
    candidates: set[tuple[int, int]] = set()
    for holders in owners.values():
        if 1 < len(holders) <= PAIR_LIMIT:
            candidates.update((holders[x], y) for x in range(len(holders)) for y in holders[x + 1 :])
    return candidates


def _in_class_order(records: list[dict], pairs: list[dict]) -> list[dict]:
    """``pairs``, each with its two members in class order, most similar first."""
    order = {r["label"]: k for k, r in enumerate(records)}
    for pair in pairs:
        if order[pair["a"]] > order[pair["b"]]:
            pair["a"], pair["b"] = pair["b"], pair["a"]
            pair["scores"].reverse()
    return sorted(pairs, key=lambda p: (-p["similarity"], -p["containment"], order[p["a"]], order[p["b"]]))


def clusters(records: list[dict], pairs: list[dict]) -> list[dict]:
    """The connected components of ``pairs``: members in class order, how alike, and how each
    was graded and what it output compared with the cluster's first member."""
    parent = {r["label"]: r["label"] for r in records}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in pairs:
        parent[root(pair["a"])] = root(pair["b"])
    groups: dict[str, list[dict]] = defaultdict(list)
    flagged = {p["a"] for p in pairs} | {p["b"] for p in pairs}
    for r in records:
        if r["label"] in flagged:
            groups[root(r["label"])].append(r)
    inside: dict[str, list[dict]] = defaultdict(list)
    for pair in pairs:
        inside[root(pair["a"])].append(pair)
    out = []
    for key, members in groups.items():
        first = members[0]
        similarities = [p["similarity"] for p in inside[key]]
        out.append(
            {
                "size": len(members),
                "members": [
                    {
                        "label": m["label"],
                        "score": m["score"],
                        "graded_alike": graded_alike(first, m),
                        "outputs_agree": outputs_agree(first, m),
                        "code": m.get("code", ""),
                    }
                    for m in members
                ],
                "pairs": len(inside[key]),
                "similarity": [min(similarities), max(similarities)],
                "scores": [min(m["score"] for m in members), max(m["score"] for m in members)],
            }
        )
    return sorted(out, key=lambda c: (-c["size"], -c["similarity"][1], c["members"][0]["label"]))
