"""API tokens used to be DRF's, stored in plain text (authtoken_token). They are now knox's,
stored as digests; the old ones must not keep working nor keep lying in the database."""

from django.db import migrations

PURGE = """
DO $$
BEGIN
    IF to_regclass('authtoken_token') IS NOT NULL THEN
        DELETE FROM authtoken_token;
    END IF;
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [("knox", "0009_extend_authtoken_field")]

    operations = [migrations.RunSQL(sql=PURGE, reverse_sql=migrations.RunSQL.noop)]
