"""Searching the local index: the server's query semantics over the local postings (issue 14
item 3; API.md section 6).

:func:`search` parses the query with :func:`loomsync.core.textsearch.query.parse` (``plain``:
ranked, no word required; ``web``: strict), matches each unit on the postings exactly as
PostgreSQL matches its ``tsquery`` (:func:`.vectors.match`), scores threads by
:mod:`.ranking` (the server's rules, exact statistics), and returns the best ``limit``
unarchived threads, highest score first, ties newest first, each with the index of its best
message and a snippet of it (:func:`loomsync.core.textsearch.highlight.snippet` on the message's
content, else its tool-call text; of the title when only the title or git metadata matched).
The phrase bonus of a plain query (:attr:`~loomsync.core.textsearch.query.Query.phrase`) is
matched on the documents its units found only, and scored as the server scores it.
A query that is one hex word of 7 to 40 characters also finds threads a commit SHA of which
starts with it, as the server does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

from loomsync.core.textsearch.commits import commit_prefix, with_hex_prefix
from loomsync.core.textsearch.query import PLAIN, Query, Unit, parse
from loomsync.core.textsearch.scoring import MESSAGE_WEIGHTS, THREAD_WEIGHTS, rank_order, unit_tf
from loomsync.store.localsearch.hitsnippet import hit_snippet
from loomsync.store.localsearch.index import LocalIndex
from loomsync.store.localsearch.ranking import THREAD_SEQ, DocInfo, ThreadScore, score_threads
from loomsync.store.localsearch.vectors import Occurrences, match, unpack, weights_of
from loomsync.store.summary import SearchHit, ThreadSummary

_CHUNK = 500


def _chunks(values: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


class _Postings:
    """Postings of the query's lexemes, read once each (``'x*'``: every lexeme it starts)."""

    def __init__(self, index: LocalIndex) -> None:
        self.db = index.db
        self._by_lexeme: dict[str, dict[int, list[bytes]]] = {}

    def of(self, lexeme: str) -> dict[int, list[bytes]]:
        """Document → the packed occurrences of ``lexeme`` in it: one entry, or for a prefix
        (``'x*'``) one per lexeme it starts, in the vector's order (the lexemes' bytes)."""
        found = self._by_lexeme.get(lexeme)
        if found is not None:
            return found
        if lexeme.endswith("*"):
            stem = lexeme[:-1]
            upper = stem[:-1] + chr(ord(stem[-1]) + 1) if stem else "\U0010ffff"
            rows = self.db.execute(
                "SELECT p.doc, p.pos, l.text FROM postings p JOIN lexemes l ON l.id = p.lexeme "
                "WHERE l.text >= ? AND l.text < ?",
                (stem, upper),
            )
            ordered = sorted(rows, key=lambda row: (row[0], row[2].encode("utf-8")))
        else:
            ordered = self.db.execute(
                "SELECT doc, pos, NULL FROM postings WHERE lexeme = "
                "(SELECT id FROM lexemes WHERE text = ?)",
                (lexeme,),
            ).fetchall()
        found = {}
        for doc, data, _ in ordered:
            found.setdefault(doc, []).append(data)
        self._by_lexeme[lexeme] = found
        return found

    def tf(self, unit: Unit, doc: int, weights: Mapping[str, float]) -> float:
        """The unit's ``tf`` in ``doc`` (:func:`loomsync.core.textsearch.scoring.unit_tf`: the
        server's ``ts_rank`` of the unit's distinct lexemes or-ed, on every occurrence of each
        in the document, not only the matched phrase's)."""
        return unit_tf(
            [
                [weights_of(unpack(blob), weights) for blob in self.of(lexeme).get(doc, ())]
                for lexeme in rank_order(unit.lexemes)
            ]
        )

    def at(self, lexeme: str, doc: int) -> Occurrences:
        blobs = self.of(lexeme).get(doc)
        if not blobs:
            return {}
        if len(blobs) == 1:
            return unpack(blobs[0])
        merged: Occurrences = {}
        for blob in blobs:
            for position, code in unpack(blob).items():
                if merged.get(position, -1) < code:
                    merged[position] = code
        return merged

    def candidates(self, unit: Unit) -> set[int]:
        """Documents holding, for every slot, all lexemes of one of its alternatives."""
        result: set[int] | None = None
        for slot in unit.slots:
            docs: set[int] = set()
            for alternative in slot:
                found: set[int] | None = None
                for lexeme in alternative:
                    held = self.of(lexeme).keys()
                    found = set(held) if found is None else found & held
                docs |= found or set()
            result = docs if result is None else result & docs
        return result or set()


def _doc_info(index: LocalIndex, docs: set[int]) -> dict[int, DocInfo]:
    out: dict[int, DocInfo] = {}
    for chunk in _chunks(sorted(docs)):
        marks = ",".join("?" * len(chunk))
        for doc, tid, seq, length in index.db.execute(
            f"SELECT doc, tid, seq, length FROM docs WHERE doc IN ({marks})", chunk
        ):
            out[doc] = DocInfo(tid, seq, length)
    return out


def _at(postings: _Postings, doc: int, lexeme: str) -> Occurrences:
    return postings.at(lexeme, doc)


def _matches(units: Sequence[Unit], postings: _Postings) -> list[dict[int, Occurrences]]:
    out = []
    for unit in units:
        found: dict[int, Occurrences] = {}
        for doc in postings.candidates(unit):
            occurrences = match(unit, functools.partial(_at, postings, doc))
            if occurrences:
                found[doc] = occurrences
        out.append(found)
    return out


def _passes(query: Query, units: Sequence[Unit], score: ThreadScore) -> bool:
    if not query.strict:
        return True
    position = {unit: i for i, unit in enumerate(units)}
    return all(any(position[u] in score.units for u in group) for group in query.groups)


def search(index: LocalIndex, q: str, *, limit: int = 20, syntax: str = PLAIN) -> list[SearchHit]:
    """The best ``limit`` hits for query text ``q`` (module docstring).

    Raises:
        ValueError: ``limit`` < 1.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    prefix = commit_prefix(q)
    query = with_hex_prefix(parse(q, syntax), prefix)
    if not query.searchable and prefix is None:
        return []
    postings = _Postings(index)
    units = list(query.units)
    found = _matches(units, postings)
    excluded_found = _matches(list(query.excluded), postings) if query.strict else []
    docs = {doc for matches in (*found, *excluded_found) for doc in matches}
    info = _doc_info(index, docs)
    phrase = query.phrase
    scored, scored_found = [*units], [*found]
    if phrase is not None:  # scores only: matched on the documents the units found
        scored.append(phrase)
        scored_found.append(
            {
                doc: occurrences
                for doc in postings.candidates(phrase) & docs
                if (occurrences := match(phrase, functools.partial(_at, postings, doc)))
            }
        )
    units_tf = [
        {
            doc: postings.tf(
                unit, doc, THREAD_WEIGHTS if info[doc].seq == THREAD_SEQ else MESSAGE_WEIGHTS
            )
            for doc in matches
        }
        for unit, matches in zip(scored, scored_found, strict=True)
    ]
    phrase_tf = units_tf.pop() if phrase is not None else None
    commits: set[int] = set()
    if prefix is not None:
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        commits = {
            tid
            for (tid,) in index.db.execute(
                "SELECT DISTINCT tid FROM commits WHERE sha >= ? AND sha < ?", (prefix, upper)
            )
        }
    messages, average_message, _, average_thread = index.totals()
    scores = score_threads(
        units_tf,
        info,
        messages=messages,
        average_message=average_message,
        average_thread=average_thread,
        commits=commits,
        phrase=phrase_tf,
    )
    excluded = {info[doc].tid for matches in excluded_found for doc in matches}
    ranked = _ranked(index, scores, excluded)
    hits: list[SearchHit] = []
    for tid, summary in ranked:
        score = scores[tid]
        if not _passes(query, units, score) and tid not in commits:
            continue
        hits.append(
            SearchHit(
                thread=ThreadSummary.model_validate_json(summary),
                score=score.score,
                snippet=hit_snippet(index, tid, score.best_seq, query),
                message_index=score.best_seq,
            )
        )
        if len(hits) == limit:
            break
    return hits


def _ranked(
    index: LocalIndex, scores: dict[int, ThreadScore], excluded: set[int]
) -> list[tuple[int, str]]:
    """Unarchived, not excluded threads by score, ties newest first: (row id, summary)."""
    rows: list[tuple[float, float, str, int, str]] = []
    for chunk in _chunks(sorted(scores.keys() - excluded)):
        marks = ",".join("?" * len(chunk))
        for tid, activity, thread_id, summary in index.db.execute(
            f"SELECT tid, activity, id, summary FROM threads WHERE archived = 0 AND tid IN ({marks})",
            chunk,
        ):
            rows.append((scores[tid].score, activity, thread_id, tid, summary))
    rows.sort(reverse=True)
    return [(tid, summary) for _, _, _, tid, summary in rows]


__all__ = ["search"]
