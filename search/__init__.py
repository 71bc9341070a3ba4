"""Search: full-text search over the tickets a person may see, in Chinese and English.

Owns the query's split and the snippets' geometry (text.py: pure), the statement that finds
and ranks (selectors.py), the highlights of a page (highlights.py), `GET /api/search/`
(apis.py, serializers.py, urls.py) and the database side (migrations/0001): the functions
`td_cjk_bigrams`, `td_search_vector` and `td_filename_vector`, stored generated
`search_vector` columns on the ticket (title weighted A, then content) and the reply, and
GIN indexes on them and on the attachments' file names.

The approach, and the figures that chose it (docs/search.md has the whole runs):

- **Bigrams in a tsvector, not trigrams and not a segmenter.** PostgreSQL's parser keeps a
  run of Han characters as one word, so 打印 would not find 打印机卡纸了. Each run is indexed
  as its overlapping two-character pieces (Lucene's CJKAnalyzer), and a query's run becomes
  a phrase of them (打印机 → 打印 <-> 印机); English words go through the `english`
  configuration (printers finds printer). On 500,000 replies: 打印 through the bigram
  vector 16 ms, through a pg_trgm index 198 ms — a sequential scan, since a two-character
  pattern has no trigram to look up — and a trigram `ILIKE '%printers%'` misses every
  "printer" (5,463 rows against 9,387). A segmenter (jieba) cuts 打印机 as one word, so 打印
  would need its search mode, and it runs in Python: every writer (the admin, COPY, a
  migration) would have to call it, which is what "findable when committed" rules out.
- **Stored generated columns, not expression indexes,** on the ticket and the reply: a
  phrase is rechecked on the row and a rank reads the vector, and an expression index
  recomputes it for every row it touches. On 500,000 replies: the newest 1,000 matches of a
  common word ranked in 23 ms stored against 111 ms recomputed, a three-character Chinese
  word 15 ms against 105 ms; inserts cost the same (50,000 rows in 3.7 s against 4.0 s;
  0.18 s with no search index at all). The price is space: the reply heap grows from 72 to
  192 MB. A file name is short, so its index is an expression index.
- **Fresh at commit with no code on the write path:** the database computes the vectors in
  the writing statement itself, whoever writes.
- **Ranked among the newest:** each kind of document gives its newest CANDIDATES matches in
  a window of the newest tickets (5 % first, then as wide as the rate found needs, up to all
  of them) until it holds ENOUGH results; the window is read through its GIN index ANDed
  with the ticket-id index, so a common word costs its recent matches, not its history. A
  ticket's rank is its best document's (its text, a reply, a note, a file name), rounded,
  then the newest first. Every word must match in one document (the ticket's title and
  content count as one). At 1,000,000 tickets and 5,000,000 replies through HTTP
  (bench/search.py): two words p95 127 ms as an agent, 128 ms as staff (1,273 and 535 ms
  when every match of the history was ranked); a bill code 51–93 ms; one word in 5–15 % of
  the documents 209–467 ms, the cost of reading its whole posting list.
- **Never a leak:** the statement's conditions are compiled from ticketing.access
  (`visible_scope`, `internals_scope`), so a note — and a note's file — matches, and is
  shown, only for a reader who sees the ticket's internals.

The pool's filters narrow the statement's scope, compiled from the ORM like the access
rules: `tag` (ticketing.tags.filter_tag, only among the tickets whose internals the caller
sees: a tag is the team's) and `field.<key>=<value>` (ticketing.fields.filter_fields).

May import: workflow (TicketOutput, the page's prefetches), attachments (models), sla (the
date fields), ticketing (models, access, tags, fields), config. Imported by: console."""
