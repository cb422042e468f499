"""The project: what every command knows about the tree before it scans a file (pipeline.py)."""
