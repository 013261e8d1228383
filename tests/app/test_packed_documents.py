"""Documents in a packed notebook, against the in-process fake server and a real state file: the rule that puts a
document's text into packs or keeps the file a source (by the notebook's room), a scanned PDF that stays a file,
the switch between the two both ways with no duplicate, an unchanged notebook left alone, a changed PDF replacing
its pack add-first, a new PDF refreshed by name following the rule, and citations of a packed PDF naming the file
and page."""

from __future__ import annotations

import pytest
from tests.app.world import World
from tests.documents.pdfs import pdf, text_page

from nlmsync.documents import hash_file
from nlmsync.sync.branches import Branch
from nlmsync.sync.titles import source_title

pytestmark = pytest.mark.anyio


def vault_of(world: World, *, scanned: bool = False) -> None:
    """Three notes and two one-page PDFs (and, with `scanned`, a PDF with no text layer)."""
    for i in range(3):
        world.write(f"n{i}.md", f"# Note {i}\n\nwords of note {i}\n")
    (world.vault / "a.pdf").write_bytes(pdf(text_page("Lowland tapirs forage at dusk")))
    (world.vault / "b.pdf").write_bytes(pdf(text_page("Okapis are shy"), text_page("Okapis eat leaves")))
    if scanned:
        (world.vault / "scan.pdf").write_bytes(pdf(b"q 1 0 0 1 0 0 cm /Im1 Do Q", image=True))


def short(world: World) -> str:
    """The upload name's hash part of scan.pdf."""
    return source_title("scan.pdf", hash_file(world.vault / "scan.pdf")[0]).split(" · ")[1] + ".pdf"


def packed_paths(world: World) -> list[str]:
    store = world.store()
    return [p for pack in store.packs(world.notebook_id) for p, _ in store.notes_of_pack(world.notebook_id,
                                                                                         pack.source_id)]


async def test_pdfs_stay_file_sources_while_the_notebook_has_room_for_them(make_world):
    world = make_world(capacity=6, pack="always")  # 3 sources for packs and files: one pack, two files
    vault_of(world)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    said = {n.path: n.branch for n in report.notes}
    assert said == {"a.pdf": Branch.ADDED, "b.pdf": Branch.ADDED}
    assert packed_paths(world) == ["n0.md", "n1.md", "n2.md"]
    assert len(world.remote()) == 3


async def test_without_room_a_pdfs_text_goes_into_a_pack_under_its_name_with_its_pages(make_world):
    world = make_world(capacity=5, pack="always")  # 2 sources for packs and files: the files do not fit
    vault_of(world)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert [n for n in report.notes if n.path.endswith(".pdf")] == []
    assert [p.paths for p in report.packs] == [["a.pdf", "b.pdf", "n0.md", "n1.md", "n2.md"]]
    (text,) = world.remote_texts().values()
    assert "# b.pdf\n\n[page 1]\nOkapis are shy\n\n[page 2]\nOkapis eat leaves" in text
    mark = len(world.fake.calls)
    async with world.run() as orch:
        again = await orch.refresh(all_notes=True)
    assert world.mutating_calls(mark) == []
    assert [p.branch for p in again.packs] == [Branch.REUSED]
    async with world.run() as orch:
        assert (await orch.status()).local_changes == []


async def test_a_scanned_pdf_stays_a_file_source_while_the_text_pdfs_are_packed(make_world):
    world = make_world(capacity=5, pack="always")
    vault_of(world, scanned=True)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert {n.path: n.branch for n in report.notes} == {"scan.pdf": Branch.ADDED}
    assert source_title("scan.pdf", hash_file(world.vault / "scan.pdf")[0]) in world.remote().values()
    assert "scan.pdf" not in packed_paths(world)
    assert {"a.pdf", "b.pdf"} <= set(packed_paths(world))
    assert [c.arguments.get("file_path", "").rsplit("/", 1)[-1] for c in world.fake.calls
            if c.tool == "source_add" and c.arguments.get("source_type") == "file"] == ["scan.pdf · " + short(world)]


async def test_a_changed_pdf_replaces_its_pack_add_first(make_world):
    world = make_world(capacity=5, pack="always")
    vault_of(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (world.vault / "a.pdf").write_bytes(pdf(text_page("Mountain tapirs climb")))
    async with world.run() as orch:
        assert [(c.path, c.change) for c in (await orch.status()).local_changes] == [("a.pdf", "modified")]
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    assert world.mutating_calls(mark) == ["source_add", "source_delete"]
    assert [p.branch for p in report.packs] == [Branch.REPLACED]
    assert "1 changed: a.pdf" in (report.packs[0].reason or "")
    (text,) = world.remote_texts().values()
    assert "Mountain tapirs climb" in text and "Lowland" not in text


async def test_a_change_of_capacity_moves_pdfs_between_files_and_packs_with_no_duplicate(make_world):
    world = make_world(capacity=6, pack="always")
    vault_of(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    files = {sid for sid, title in world.remote().items() if ".pdf" in title}
    assert len(files) == 2
    async with world.run(capacity=5) as orch:
        await orch.refresh(all_notes=True)
    assert not files & set(world.remote())  # the file sources went once the pack held their text
    assert len(world.remote()) == 1 and {"a.pdf", "b.pdf"} <= set(packed_paths(world))
    async with world.run(capacity=6) as orch:
        report = await orch.refresh(all_notes=True)
    assert {n.path: n.branch for n in report.notes} == {"a.pdf": Branch.ADDED, "b.pdf": Branch.ADDED}
    assert packed_paths(world) == ["n0.md", "n1.md", "n2.md"]
    assert len(world.remote()) == 3
    assert sorted(t for t in world.remote().values() if ".pdf" in t and "notes)" not in t) == sorted(
        t for t in world.remote().values() if t.startswith(("a.pdf", "b.pdf")))


async def test_a_pdf_too_long_for_one_source_is_split_by_pages(make_world):
    # sources of at most 60 words (packs of at most 120 bytes): four files do not fit beside the notes' pack, but
    # the small PDFs' texts fit that pack and the long one goes in two parts of whole pages
    world = make_world(capacity=5, pack="always", pack_free=1, source_max_words=60)
    world.write("n.md", "# N\n\nshort\n")
    for name in ("x", "y", "z"):
        (world.vault / f"{name}.pdf").write_bytes(pdf(text_page(name * 3)))
    words = " ".join(["tapirs"] * 20)
    (world.vault / "long.pdf").write_bytes(pdf(*(text_page(f"page {i} {words}") for i in range(1, 4))))
    async with world.run() as orch:
        report = await orch.refresh(all_notes=True)
    parts = {t: x for t, x in world.remote_texts().items() if t.startswith("long.pdf")}
    assert [t.split(" · ")[0] for t in sorted(parts)] == ["long.pdf (part 1/2)", "long.pdf (part 2/2)"], list(world.remote())
    assert [x.split("\n")[0] for _, x in sorted(parts.items())] == ["[page 1]", "[page 3]"]
    assert "[page 2]\npage 2" in sorted(parts.items())[0][1]
    assert {"x.pdf", "y.pdf", "z.pdf"} <= set(packed_paths(world))
    assert {n.path: n.branch for n in report.notes}.get("long.pdf") == Branch.ADDED


async def test_a_fresh_machine_adopts_packs_holding_pdfs_with_no_upload(make_world):
    world = make_world(capacity=5, pack="always")
    one, two = world.device("one"), world.device("two")
    for i in range(3):
        one.write(f"n{i}.md", f"# Note {i}\n\nwords of note {i}\n")
    (one.vault / "a.pdf").write_bytes(pdf(text_page("Lowland tapirs forage at dusk")))
    # a file larger than a pack may hold, its text small: a pack holds a document's text, measured as such
    (one.vault / "b.pdf").write_bytes(pdf(text_page("Okapis are shy") + b" 0 0 m" * 20_000,
                                          text_page("Okapis eat leaves")))
    packed = {"notebook": world.notebook_id, "capacity": 5, "pack": "always", "source_max_bytes": 100_000}
    async with one.run(**packed) as orch:
        first = await orch.refresh(all_notes=True)
    assert first.packs[0].paths[:2] == ["a.pdf", "b.pdf"]
    two.sync_from(one, state=False)
    mark = len(world.fake.calls)
    async with two.run(**packed) as orch:
        second = await orch.refresh(all_notes=True)
    assert world.mutating_calls(mark) == []
    assert world.calls("source_get_content", mark) == 0  # taken by its title alone: it holds the vault's texts
    assert [(p.branch, p.source_id, p.adopted) for p in second.packs] == [
        (Branch.REUSED, first.packs[0].source_id, True)]


async def test_a_new_pdf_refreshed_by_name_follows_the_rule_the_last_whole_vault_run_decided(make_world):
    world = make_world(capacity=5, pack="always")  # no room for the files: the documents are packed
    vault_of(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (world.vault / "c.pdf").write_bytes(pdf(text_page("Tapirs swim well")))
    mark = len(world.fake.calls)
    async with world.run() as orch:
        report = await orch.refresh(["c.pdf"])
    assert [c.arguments.get("source_type") for c in world.fake.calls[mark:] if c.tool == "source_add"] == ["text"]
    assert "c.pdf" in packed_paths(world) and len(world.remote()) == 1
    assert [n.pack for n in report.notes if n.path == "c.pdf"] == [next(iter(world.remote().values()))]


async def test_a_new_pdf_refreshed_by_name_stays_a_file_while_the_documents_are_files(make_world):
    world = make_world(capacity=7, pack="always")
    vault_of(world)
    async with world.run() as orch:
        await orch.refresh(all_notes=True)
    (world.vault / "c.pdf").write_bytes(pdf(text_page("Tapirs swim well")))
    async with world.run() as orch:
        report = await orch.refresh(["c.pdf"])
    assert {n.path: n.branch for n in report.notes} == {"c.pdf": Branch.ADDED}
    assert "c.pdf" not in packed_paths(world)
