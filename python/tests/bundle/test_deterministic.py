"""Building the bundle twice from the same tree gives the same content and
hash (BUNDLE-CONTRACT.md): the checkout's agent assembled twice into two
folders, each described by its own agent there (test_manifest: the same
content gives the same archive bytes)."""

from __future__ import annotations

import shutil

import pytest

from conftest import real_agent_path
from mwperf.bundle.build import assemble, prepare
from mwperf.bundle.manifest import MANIFEST, content_files

pytestmark = pytest.mark.side_by_side


def test_assembling_twice_gives_the_same_hash_and_bytes(tmp_path):
    if real_agent_path() is None or shutil.which("patchelf") is None:
        pytest.skip("the agent is not built" if real_agent_path() is None else "patchelf not installed")
    plan, runner = prepare("x86_64", log=lambda line: None)
    first = assemble(plan, runner, tmp_path / "a")
    second = assemble(plan, runner, tmp_path / "b")
    assert first.hash == second.hash and first.files == second.files
    assert (tmp_path / "a" / MANIFEST).read_bytes() == (tmp_path / "b" / MANIFEST).read_bytes()
    assert content_files(tmp_path / "a") == content_files(tmp_path / "b")
    assert str(tmp_path) not in (tmp_path / "a" / "description.jsonl").read_text()
