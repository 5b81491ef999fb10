"""The bundle's archive and content hash: the same content gives the same
bytes whatever the files' times, owners and modes beyond the executable bit
(BUNDLE-CONTRACT.md), a changed byte or mode another hash; the manifest is
read back from the archive and from the unpacked folder; find() picks the
archive this controller can drive; placed() makes the bundle's own paths
absolute where it is unpacked."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from pathlib import Path

import pytest

from mwperf.bundle import BundleError, find, placed, read_manifest
from mwperf.bundle.build import agent_version
from mwperf.bundle.manifest import (DESCRIPTION, MANIFEST, Manifest, archive_name, content_hash, description_text,
                                    dumps, top_name, write_archive)
from mwperf.table import snapshot_event


def make_tree(root: Path, mtime: int, owner: int, private: bool, options: dict | None = None) -> Path:
    """A small bundle folder: an executable, a library, a description and a manifest."""
    (root / "lib").mkdir(parents=True)
    (root / "mwperf-agent").write_bytes(b"\x7fELF agent" * 100)
    (root / "lib" / "libx.so.1").write_bytes(b"library bytes" * 1000)
    lines = [json.dumps({"event": "agent", "version": agent_version(), "missing": []}),
             json.dumps(options if options is not None else snapshot_event()),
             json.dumps({"event": "adapter", "name": "udp", "service_config": "roudi.toml"})]
    (root / DESCRIPTION).write_bytes(description_text(lines))
    (root / "mwperf-agent").chmod(0o700 if private else 0o755)
    (root / "lib" / "libx.so.1").chmod(0o600 if private else 0o644)
    digest, files = content_hash(root)
    manifest = Manifest(format=1, arch="x86_64", hash=digest, agent_version=agent_version() or "0", glibc_min="2.36",
                        adapters={"udp": {"built": True, "version": "linux", "versions": {}}}, files=files)
    (root / MANIFEST).write_bytes(dumps(manifest.as_json()))
    for path in [root / "mwperf-agent", root / "lib" / "libx.so.1", root / DESCRIPTION, root / MANIFEST]:
        os.utime(path, (mtime, mtime))
        os.chown(path, owner, owner)
    return root


def archive(root: Path, out: Path) -> Path:
    digest = read_manifest(root).hash
    out.mkdir(parents=True, exist_ok=True)
    path = out / archive_name("9.9.9", "x86_64", digest)
    write_archive(root, top_name("x86_64", digest), path)
    return path


def test_the_same_content_gives_the_same_archive_bytes(tmp_path):
    a = archive(make_tree(tmp_path / "a", mtime=1_000_000, owner=0, private=False), tmp_path / "out-a")
    b = archive(make_tree(tmp_path / "b", mtime=1_700_000_000, owner=1234, private=True), tmp_path / "out-b")
    assert a.name == b.name
    assert hashlib.sha256(a.read_bytes()).hexdigest() == hashlib.sha256(b.read_bytes()).hexdigest()
    with tarfile.open(a) as tar:
        members = tar.getmembers()
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    top = top_name("x86_64", read_manifest(tmp_path / "a").hash)
    assert members[0].name == top and all(m.name.startswith(top) for m in members)
    assert [m.name.split("/", 1)[-1] for m in members if m.isfile()][:2] == [MANIFEST, DESCRIPTION]
    assert {m.name.split("/", 1)[-1]: m.mode for m in members if m.isfile()}["mwperf-agent"] == 0o755


def test_a_changed_byte_or_executable_bit_is_another_hash(tmp_path):
    root = make_tree(tmp_path / "a", mtime=1, owner=0, private=False)
    before, files = content_hash(root)
    assert MANIFEST not in files and files["lib/libx.so.1"] == hashlib.sha256(
        (root / "lib/libx.so.1").read_bytes()).hexdigest()
    (root / "lib" / "libx.so.1").chmod(0o755)
    moded, _ = content_hash(root)
    (root / "lib" / "libx.so.1").chmod(0o644)
    (root / "lib" / "libx.so.1").write_bytes(b"library bytes" * 999 + b"library byteS")
    changed, _ = content_hash(root)
    assert len({before, moded, changed}) == 3


def test_the_manifest_reads_back_from_the_archive_and_the_folder(tmp_path):
    root = make_tree(tmp_path / "a", mtime=1, owner=0, private=False)
    path = archive(root, tmp_path)
    from_archive, from_dir = read_manifest(path), read_manifest(root)
    assert from_archive == from_dir
    assert from_archive.hash12 in path.name and len(from_archive.description_lines) == 3
    assert from_archive.absent() == {}


def test_what_is_not_a_bundle_is_one_line(tmp_path):
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(BundleError, match="not a readable bundle archive"):
        read_manifest(bad)
    with tarfile.open(tmp_path / "empty.tar.gz", "w:gz"):
        pass
    with pytest.raises(BundleError, match="not an mwperf agent bundle"):
        read_manifest(tmp_path / "empty.tar.gz")
    with pytest.raises(BundleError, match="not a bundle folder"):
        read_manifest(tmp_path)


def test_find_takes_the_newest_archive_whose_option_table_is_the_controllers(tmp_path):
    other = dict(snapshot_event(), options=snapshot_event()["options"][1:])
    old = archive(make_tree(tmp_path / "old", mtime=1, owner=0, private=False), tmp_path / "bundles")
    new = archive(make_tree(tmp_path / "new", mtime=1, owner=0, private=True), tmp_path / "bundles")
    assert old == new  # the same content: one archive
    alien = archive(make_tree(tmp_path / "alien", mtime=1, owner=0, private=False, options=other),
                    tmp_path / "bundles")
    os.utime(alien, (2_000_000_000, 2_000_000_000))  # the newest, but another option table
    assert find("x86_64", tmp_path / "bundles") == old
    assert find("aarch64", tmp_path / "bundles") is None
    assert find("x86_64", tmp_path / "nowhere") is None


def test_placed_makes_the_bundles_own_files_absolute(tmp_path):
    lines = read_manifest(make_tree(tmp_path / "a", mtime=1, owner=0, private=False)).description_lines
    out = placed(lines, "/home/robot/.cache/mwperf/bundles/abc/")
    assert json.loads(out[2])["service_config"] == "/home/robot/.cache/mwperf/bundles/abc/roudi.toml"
    assert out[:2] == list(lines[:2])
