"""Source preparation (spec §5-§8): make exactly the right notes live sources in a notebook.

- `titles` — deterministic source titles and content hashes;
- `split` — splitting notes over the source limits into numbered parts;
- `plan` — the pure branch decision of §5 (reuse, replace, rename, new) for one note;
- `reconcile` — reading the remote listing once and reconciling the registry (§7.3);
- `identity` — whether an unregistered source is nlmsync's own upload (its text, not only its title);
- `eviction` — the capacity loop of §6;
- `prepare` — `ensure_sources_for_paths`, the service that carries the decisions out;
- `carry_over` — `history_source_ids` (§8);
- `citations` — finding cited text in a note and the heading above it;
- `report` — the per-note outcomes a refresh reports.
"""
