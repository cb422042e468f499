"""The one walk per file (walk.py), the text scan of build files, suppressions."""
