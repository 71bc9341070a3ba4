"""Full-text search in the database (search/__init__.py says why this design).

`td_cjk_bigrams(text)`: every run of Han characters as overlapping two-character tokens
(a run of one character as itself), space-separated, in order — Lucene's CJKAnalyzer idea,
since PostgreSQL's default parser keeps a run of Han characters as one word.
`td_search_vector(text)`: the English words (the `english` configuration: stemmed, stop
words dropped; the Han runs blanked out first) followed by those bigrams (`simple`: as they
are), so that a phrase of bigrams keeps its positions. Both IMMUTABLE: they index.

Stored generated columns on the ticket (its title, weighted A, then its content) and on the
reply, each with a GIN index; on the attachment a GIN expression index over its file name
(`td_filename_vector`: dots, dashes, underscores and slashes as spaces, since the parser
keeps `printer.png` whole; a name is short, so recomputing it to recheck or rank costs
nothing). The database computes them in the
writing statement itself, so whatever writes a row — a service, the admin, a COPY — makes it
findable when its transaction commits, with no application code on the write path.

On existing tables ADD COLUMN ... STORED rewrites the table under an ACCESS EXCLUSIVE lock:
measured on the bench's data (docs/search.md), about a minute per million replies on the
2-core machine; run it in a quiet hour."""

from django.db import migrations

HAN = r"[\u3400-\u4dbf\u4e00-\u9fff]"

FUNCTIONS = rf"""
CREATE OR REPLACE FUNCTION td_cjk_bigrams(doc text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(
      CASE WHEN length(run) = 1 THEN run
      ELSE (SELECT string_agg(substr(run, i, 2), ' ' ORDER BY i)
            FROM generate_series(1, length(run) - 1) AS i)
      END, ' '), '')
  FROM regexp_split_to_table(doc, '[^\u3400-\u4dbf\u4e00-\u9fff]+') AS run
  WHERE run <> ''
$$;

CREATE OR REPLACE FUNCTION td_search_vector(doc text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT to_tsvector('english'::regconfig, regexp_replace(doc, '{HAN}+', ' ', 'g'))
      || to_tsvector('simple'::regconfig, td_cjk_bigrams(doc))
$$;

CREATE OR REPLACE FUNCTION td_filename_vector(name text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT td_search_vector(regexp_replace(name, '[._/\\-]+', ' ', 'g'))
$$;
"""
DROP_FUNCTIONS = """
DROP FUNCTION IF EXISTS td_filename_vector(text);
DROP FUNCTION IF EXISTS td_search_vector(text);
DROP FUNCTION IF EXISTS td_cjk_bigrams(text);
"""

COLUMNS = """
ALTER TABLE oa_ticket_bill ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (setweight(td_search_vector(title), 'A') || td_search_vector(content))
    STORED;
ALTER TABLE oa_ticket_reply ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (td_search_vector(content)) STORED;
"""
DROP_COLUMNS = """
ALTER TABLE oa_ticket_bill DROP COLUMN IF EXISTS search_vector;
ALTER TABLE oa_ticket_reply DROP COLUMN IF EXISTS search_vector;
"""

INDEXES = """
CREATE INDEX ticket_search_vector_idx ON oa_ticket_bill USING gin (search_vector);
CREATE INDEX reply_search_vector_idx ON oa_ticket_reply USING gin (search_vector);
CREATE INDEX attachment_search_vector_idx ON attachments_attachment
    USING gin (td_filename_vector(filename));
ANALYZE oa_ticket_bill, oa_ticket_reply, attachments_attachment;
"""
DROP_INDEXES = """
DROP INDEX IF EXISTS attachment_search_vector_idx;
DROP INDEX IF EXISTS reply_search_vector_idx;
DROP INDEX IF EXISTS ticket_search_vector_idx;
"""


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("ticketing", "0014_product_wording"),
        ("attachments", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(FUNCTIONS, DROP_FUNCTIONS),
        migrations.RunSQL(COLUMNS, DROP_COLUMNS),
        migrations.RunSQL(INDEXES, DROP_INDEXES),
    ]
