"""`python -m portkit` runs the command line."""

from .cli import run

run()
