"""Notes kept one per source (a split note: one source per part): each note's branch decided, then carried out."""
