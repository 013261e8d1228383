"""Attachments kept one per source: the vault's PDFs, documents (and, when asked for, images, audio and video)
uploaded as file sources, with the branches of notes — reuse, replace add-first, rename by the hash of the bytes,
new upload — their own titles (the path and the hash of the bytes) and their own proof before a delete (the text
read back against the text read from the file)."""
