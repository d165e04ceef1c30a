"""Example programs to run under seedbed."""
