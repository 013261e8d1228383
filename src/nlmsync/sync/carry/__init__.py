"""Carrying a run out: the executor every unit of work goes through, eviction, the deletions earlier runs left,
and the sources of notes that left the vault."""
