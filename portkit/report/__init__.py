"""Output formats. Each module renders a result to a stream; none of them computes anything."""
