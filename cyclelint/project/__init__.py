"""What one file tells the rest of the project (records.py), and the judgements that need every file
of the project (resolve.py): constructors handed an object in another file, state grown from what
callers elsewhere pass, caches built by the project's own helpers. Never imports libcst: a warm run
resolves the project from cached records alone."""
