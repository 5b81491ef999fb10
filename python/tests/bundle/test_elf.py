"""mwperf.bundle.elf against binutils' readelf, an independent reader of the
same files: needed libraries, soname, RUNPATH, and the GLIBC_x.y versions a
file needs (the bundle's oldest glibc is computed from them)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mwperf.bundle.elf import NotElf, glibc_version, read_elf

pytestmark = pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils' readelf not installed")

SAMPLES = [Path("/usr/lib/x86_64-linux-gnu/libddsc.so.0debian"), Path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
           Path("/usr/bin/iox-roudi")]
SYSROOTS = sorted(Path.home().glob(".cache/mwperf/sysroot-aarch64-*/usr/lib/aarch64-linux-gnu"))


def readelf(path: Path) -> dict:
    dynamic = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    versions = subprocess.run(["readelf", "-VW", str(path)], capture_output=True, text=True, check=True).stdout
    header = subprocess.run(["readelf", "-hW", str(path)], capture_output=True, text=True, check=True).stdout
    glibc = [glibc_version(v) for v in re.findall(r"Name: (GLIBC_[0-9.]+)", versions)]
    return {"needed": re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic),
            "soname": (re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", dynamic) or [None])[0],
            "runpath": (re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", dynamic) or [""])[0],
            "glibc": max(glibc, default=(0,)),
            "machine": re.search(r"Machine:\s+(.*)", header).group(1).strip()}


def _check(path: Path, machine_word: str, arch: str) -> None:
    truth = readelf(path)
    got = read_elf(path)
    assert list(got.needed) == truth["needed"]
    assert got.soname == truth["soname"]
    assert ":".join(got.runpath) == truth["runpath"]
    assert got.glibc == truth["glibc"]
    assert machine_word in truth["machine"] and got.machine == arch


@pytest.mark.parametrize("path", [p for p in SAMPLES if p.exists()], ids=lambda p: p.name)
def test_x86_64_files_read_as_readelf_reads_them(path):
    _check(path, "X86-64", "x86_64")


def test_aarch64_files_read_as_readelf_reads_them():
    libs = sorted(SYSROOTS[0].glob("libddsc.so.*")) if SYSROOTS else []
    if not libs:
        pytest.skip("no aarch64 sysroot here (mwperf bundle --arch aarch64 makes it)")
    _check(libs[-1].resolve(), "AArch64", "aarch64")


def test_what_is_not_an_elf_file_is_said_in_one_line(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a library\n")
    with pytest.raises(NotElf, match="not an ELF file"):
        read_elf(text)
    cut = tmp_path / "cut.so"
    cut.write_bytes(Path("/usr/lib/x86_64-linux-gnu/libc.so.6").read_bytes()[:200])
    with pytest.raises(NotElf, match="truncated or malformed"):
        read_elf(cut)


def test_glibc_version_names():
    assert glibc_version("GLIBC_2.34") == (2, 34)
    assert glibc_version("GLIBC_2.3.4") == (2, 3, 4)
    assert glibc_version("GLIBCXX_3.4.30") is None and glibc_version("GLIBC_PRIVATE") is None
