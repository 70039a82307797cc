"""safe_extract against a hostile-zip corpus built in the tests."""

import os
import stat
import zipfile
from pathlib import Path

import pytest

from dragdl.engine.data.archive import ArchiveLimits, file_digest, safe_extract
from dragdl.engine.data.base import DatasetError


def make_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def symlink_member(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # Unix, so the mode bits in external_attr are meaningful
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def all_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """dest's parent lives inside `sandbox`, so escapes to its parent or siblings are visible."""
    (tmp_path / "work").mkdir()
    return tmp_path


def extract_rejected(
    sandbox: Path,
    members: list[tuple[str | zipfile.ZipInfo, bytes]],
    match: str,
    limits: ArchiveLimits | None = None,
) -> None:
    archive = make_zip(sandbox / "in.zip", members)
    before = all_files(sandbox)
    dest = sandbox / "work" / "out"
    with pytest.raises(DatasetError, match=match):
        safe_extract(archive, dest, limits)
    assert not dest.exists()
    assert all_files(sandbox) == before, "a rejected archive must leave nothing behind"


def test_good_zip_is_extracted_with_its_folders(sandbox: Path) -> None:
    archive = make_zip(sandbox / "ok.zip", [("a/one.png", b"1"), ("b/sub/two.png", b"22"), ("b/", b"")])
    dest = safe_extract(archive, sandbox / "work" / "out")
    assert (dest / "a" / "one.png").read_bytes() == b"1"
    assert (dest / "b" / "sub" / "two.png").read_bytes() == b"22"
    assert os.listdir(sandbox / "work") == ["out"], "no temporary folder is left next to dest"


def test_zip_slip_member_is_rejected_by_name(sandbox: Path) -> None:
    extract_rejected(sandbox, [("a/ok.png", b"x"), ("../evil.png", b"x")], r"'\.\./evil\.png'.*outside")
    assert not (sandbox / "evil.png").exists()
    assert not (sandbox / "work" / "evil.png").exists()


def test_backslash_traversal_is_rejected(sandbox: Path) -> None:
    extract_rejected(sandbox, [("a\\..\\..\\evil.png", b"x")], "outside the archive")


def test_absolute_member_path_is_rejected(sandbox: Path) -> None:
    target = sandbox / "abs_evil.png"
    extract_rejected(sandbox, [(zipfile.ZipInfo(str(target)), b"x")], "absolute path")
    assert not target.exists()


def test_windows_drive_path_is_rejected(sandbox: Path) -> None:
    extract_rejected(sandbox, [("C:/evil.png", b"x")], "absolute path")


def test_symlink_member_is_rejected(sandbox: Path) -> None:
    extract_rejected(
        sandbox,
        [(symlink_member("a/link.png", "/etc/passwd"), b"/etc/passwd")],
        r"'a/link\.png' is a symbolic link",
    )


def test_zip_bomb_member_is_rejected_by_compression_ratio(sandbox: Path) -> None:
    extract_rejected(
        sandbox, [("a/bomb.png", b"\0" * (8 * 1024 * 1024))], r"'a/bomb\.png'.*compression ratio"
    )


def test_small_highly_compressible_member_is_not_a_bomb(sandbox: Path) -> None:
    archive = make_zip(sandbox / "ok.zip", [("a/.DS_Store", b"\0" * 6000)])
    assert (safe_extract(archive, sandbox / "work" / "out") / "a" / ".DS_Store").stat().st_size == 6000


def test_too_many_files_are_rejected(sandbox: Path) -> None:
    members: list[tuple[str | zipfile.ZipInfo, bytes]] = [(f"a/{i}.png", b"x") for i in range(6)]
    extract_rejected(sandbox, members, "more than 5 files", ArchiveLimits(max_files=5))


def test_total_uncompressed_size_is_limited(sandbox: Path) -> None:
    members: list[tuple[str | zipfile.ZipInfo, bytes]] = [
        ("a/1.png", os.urandom(600)),
        ("a/2.png", os.urandom(600)),
    ]
    extract_rejected(
        sandbox, members, r"more than 1000 bytes.*'a/2\.png'", ArchiveLimits(max_total_bytes=1000)
    )


def test_not_a_zip_is_a_dataset_error(sandbox: Path) -> None:
    bogus = sandbox / "bogus.zip"
    bogus.write_bytes(b"not a zip at all")
    with pytest.raises(DatasetError, match="not a readable zip"):
        safe_extract(bogus, sandbox / "work" / "out")


def test_existing_destination_is_not_overwritten(sandbox: Path) -> None:
    archive = make_zip(sandbox / "ok.zip", [("a/one.png", b"1")])
    (sandbox / "work" / "out").mkdir()
    with pytest.raises(DatasetError, match="already exists"):
        safe_extract(archive, sandbox / "work" / "out")


def test_file_digest_depends_on_content_only(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"same")
    (tmp_path / "b").write_bytes(b"same")
    (tmp_path / "c").write_bytes(b"other")
    assert file_digest(tmp_path / "a") == file_digest(tmp_path / "b") != file_digest(tmp_path / "c")
