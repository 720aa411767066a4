"""One novel is one SQLite file: tables, engine, migrations, lock, repositories, folder import/export."""
