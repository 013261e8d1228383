"""The settings model: every tunable of nlmsync, its default, its bounds and what it means (pydantic).

`nlmsync.config` loads it (file, environment, flags); a search that changes none of the defaults does not
(`nlmsync.config.search_settings`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from nlmsync.config.defaults import IndexSettings
from nlmsync.vault import DEFAULT_ATTACHMENT_KINDS, STATE_DIR_NAME, STATE_FILE_NAME, check_exclude, parse_kinds

SERVE_TOKEN_MIN_CHARS = 16
"""A bearer token shorter than this is guessed too easily to guard a server reachable from the network."""


class Settings(BaseModel):
    """Every tunable of nlmsync with the reference plugin's defaults."""

    # allow_inf_nan: no setting is meaningful at infinity (`query_timeout = 1e400` would never time out)
    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False, allow_inf_nan=False)

    # --- where things are (usually given as global flags) ---
    vault: Path = Field(default=Path("."), description="The markdown vault folder.")
    state: Path | None = Field(default=None, description="State file; default <vault>/.nlmsync/state.db.")
    server: str = Field(default="notebooklm-mcp --transport stdio",
                        description="NotebookLM MCP server: 'fake', a command line, or an http://…/mcp URL.")
    notebook: str | None = Field(default=None, description="Notebook id (or new:TITLE to create one).")

    # --- BM25 ranking and the selection rule ---
    top_n: int = Field(default=IndexSettings.top_n, ge=1,
                       description="Candidates considered by the selection rule.")
    cutoff_ratio: float = Field(default=IndexSettings.cutoff_ratio, ge=0.0, le=1.0,
                                description="Keep results scoring >= top * ratio.")
    min_k: int = Field(default=IndexSettings.min_k, ge=0,
                       description="Fallback: at least this many of the top results.")
    k1: float = Field(default=IndexSettings.k1, ge=0.0, description="BM25 term-frequency saturation.")
    b: float = Field(default=IndexSettings.b, ge=0.0, le=1.0, description="BM25 length normalisation.")
    weight_body: float = Field(default=IndexSettings.weight_body, ge=0.0, description="Weight of body tokens.")
    weight_heading: float = Field(default=IndexSettings.weight_heading, ge=0.0,
                                  description="Weight of heading/title/alias/tag tokens.")
    weight_path: float = Field(default=IndexSettings.weight_path, ge=0.0,
                               description="Weight of the note's file name, shared by its words.")
    weight_folder: float = Field(default=IndexSettings.weight_folder, ge=0.0,
                                 description="Weight of the tokens of the folders a note is in.")
    query_stop_words: bool = Field(default=IndexSettings.query_stop_words,
                                   description="Leave common English words (the, of, what…) out of queries.")
    full_rescan_every: int = Field(default=IndexSettings.full_rescan_every, ge=1,
                                   description="Full rescan after this many incremental syncs.")
    exclude: list[str] = Field(default_factory=list,
                               description="gitignore-style patterns (vault-relative, any case) of notes never uploaded or served.")
    attachments: list[str] = Field(default_factory=lambda: list(DEFAULT_ATTACHMENT_KINDS),
                                   description="Kinds of file besides notes taken from the vault: documents (PDF, "
                                               "Word, PowerPoint, EPUB, text, CSV), images, audio, video; "
                                               "\"none\" or \"all\".")

    # --- notebook and sync: source preparation, capacity and eviction, conversation carry-over ---
    capacity: int = Field(default=50, ge=1, description="Sources per notebook (50 free, 100 Plus, 300 Pro, 600 Ultra); "
                                                         "not set: the plan's, from the tier usage_get reports.")
    protected_share: float = Field(default=0.7, ge=0.0, le=1.0,
                                   description="Share of capacity for the protected (used again) LRU segment.")
    concurrency: int = Field(default=4, ge=1, le=32, description="Concurrent independent uploads.")
    add_rate_per_minute: float | None = Field(default=None, gt=0,
                                              description="Client-side limit on source_add calls per minute.")
    wait_for_processing: bool = Field(default=False, description="Pass wait=true to source_add.")
    carry_over_cap: int = Field(default=40, ge=0, description="Most source ids carried over from a conversation.")
    query_timeout: float = Field(default=300.0, gt=0, description="Seconds a notebook_query may take.")
    call_timeout: float = Field(default=120.0, gt=0, description="Seconds any other MCP call may take.")
    media_timeout: float = Field(default=600.0, gt=0,
                                 description="Seconds NotebookLM may take to process an audio or video upload (it "
                                             "transcribes it); the other uploads go on meanwhile.")
    retry_attempts: int = Field(default=3, ge=1, le=10, description="Attempts for idempotent calls on connection trouble.")
    retry_on_connection_issue: bool = Field(default=True, description="Retry idempotent calls on connection trouble.")
    source_max_words: int = Field(default=500_000, ge=1, le=500_000,
                                  description="Words one uploaded source may hold; longer notes are split into parts.")
    source_max_bytes: int = Field(default=1_000_000, ge=1_000, le=1_000_000,
                                  description="Bytes of text one uploaded source may hold (one request's limit).")

    # --- packing many notes into one source (refresh --all) ---
    pack: Literal["auto", "always", "never"] = Field(
        default="auto", description="refresh --all packs notes into shared sources: when they do not fit one per "
                                    "source (auto), always, or never.")
    pack_free: int = Field(default=3, ge=1,
                           description="Sources a packed notebook leaves free for notes a question needs.")
    sync_saved_answers: bool = Field(default=False,
                                     description="Upload the answers `ask --save` writes like other notes (by "
                                                 "default they say `nlmsync: false`).")

    # --- compaction of the state file ---
    max_conversations: int = Field(default=200, ge=1, description="Conversations kept (newest first).")
    max_messages_per_conversation: int = Field(default=400, ge=1, description="Messages kept per conversation.")
    max_query_records_per_conversation: int = Field(default=200, ge=1,
                                                     description="Query records (carry-over metadata) kept per conversation.")
    max_aliases: int = Field(default=5000, ge=1, description="Hard cap on stored source-id aliases.")

    # --- nlmsync's own MCP server and note reading: chunks, previews, snippets ---
    chunk_max_tokens: int = Field(default=400, ge=1, description="Words per chunk of a note (sliding window).")
    chunk_overlap_tokens: int = Field(default=50, ge=0, description="Words shared by neighbouring chunks.")
    autoload_chars: int = Field(default=50_000, ge=0, description="read_note returns whole notes up to this size.")
    preview_chars: int = Field(default=500, ge=0, description="Preview length for larger notes.")
    time_chunk_seconds: int = Field(default=300, ge=1, description="Transcript chunk length for paging.")
    time_search_seconds: int = Field(default=30, ge=1, description="Transcript window length for search.")
    snippet_length: int = Field(default=300, ge=20, description="Characters per search snippet.")
    serve_token: str | None = Field(default=None, description="Bearer token required by `serve` off loopback.")

    # --- watch ---
    watch_debounce_ms: int = Field(default=500, ge=0, description="watch: wait this long for changes to settle.")

    @field_validator("exclude", mode="before")
    @classmethod
    def _split_exclude(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("attachments", mode="before")
    @classmethod
    def _attachment_kinds(cls, value: Any) -> Any:
        return parse_kinds(value)

    @field_validator("exclude")
    @classmethod
    def _readable_patterns(cls, value: list[str]) -> list[str]:
        check_exclude(value)
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic takes true for 1: `capacity = true` would silently mean one source
        if isinstance(value, bool) and info.field_name is not None:
            annotation = str(cls.model_fields[info.field_name].annotation)
            if ("int" in annotation or "float" in annotation) and "bool" not in annotation:
                raise ValueError("a number is wanted, not a boolean")
        return value

    @field_validator("chunk_overlap_tokens")
    @classmethod
    def _overlap_below_window(cls, value: int, info: ValidationInfo) -> int:
        window = info.data.get("chunk_max_tokens")
        if window is not None and value >= window:
            raise ValueError(f"must be smaller than chunk_max_tokens ({window})")
        return value

    @field_validator("serve_token")
    @classmethod
    def _guessable_token(cls, value: str | None) -> str | None:
        if value is not None and (len(value) < SERVE_TOKEN_MIN_CHARS or any(c.isspace() for c in value)):
            raise ValueError(f"a bearer token needs at least {SERVE_TOKEN_MIN_CHARS} characters and no white "
                             "space (for one: python3 -c 'import secrets; print(secrets.token_urlsafe(32))')")
        return value

    @property
    def state_path(self) -> Path:
        return self.state if self.state is not None else self.vault / STATE_DIR_NAME / STATE_FILE_NAME
