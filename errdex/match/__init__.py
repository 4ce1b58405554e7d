"""Matching: pasted text → ranked records (built in the explain issue)."""
