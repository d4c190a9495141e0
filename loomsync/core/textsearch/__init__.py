"""Search text analysis shared by the server and the local search (issue 14).

- :mod:`.normalize`: one normal form (NFKC, invisible characters removed) on both sides;
- :mod:`.analyzer`: words, camelCase and snake_case parts, joined identifiers, Porter2 stems,
  stop words, Han/kana/Hangul bigrams, with positions and spans;
- :mod:`.fields`: which text of a thread and a message is indexed, at which weight;
- :mod:`.vectors`: PostgreSQL ``tsvector`` input text made from the analyzer's lexemes;
- :mod:`.query`: a query as units (words, phrases), ``plain`` (ranked) or ``web`` (strict);
- :mod:`.scoring`: the BM25-like scoring both sides apply.
"""
