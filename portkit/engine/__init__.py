"""What rules and rewriters share: the per-file scan context, options and views."""
