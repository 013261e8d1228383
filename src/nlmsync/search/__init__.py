"""BM25 note search: tokenization, markdown fields, weighted scoring, selection, incremental index."""
