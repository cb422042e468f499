"""The jobs: convert, audit, check (the gate), the compat header, verify; what they return."""
