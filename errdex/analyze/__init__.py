"""Analysis: sites → records (templates, classification, ids, windows, permalinks)."""
