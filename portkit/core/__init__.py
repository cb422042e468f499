"""The base every stage uses: errors, the version, findings and the finding store, edits, source files,
file discovery, the parser, comments, atomic writes, the data cache."""
