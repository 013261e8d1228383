"""Packed notebooks: many notes per source (packs), laid out, decided and carried out group by group."""
