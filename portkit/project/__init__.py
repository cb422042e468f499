"""The project as every command sees it: configuration, the file set, what is learned of the tree before
the scan (pipeline.py), the settings built from the user's flags (settings.py), and the project's own
records (git, the baseline, the history, compile databases, build configuration, translation units)."""
