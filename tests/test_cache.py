"""The persistent cache of `cleave compile`: hits, misses, corrupt entries, keys, atomic writes."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from cleave_ir import cache as cache_mod
from cleave_ir.cache import Cache, cache_key, hash_sources, key_material
from cleave_ir.compile import main as cleave_main

ROWSUM = """tgraph.graph @rowsum(%a: !tgraph.tensor<[64, 32], f16>, %b: !tgraph.tensor<[32, 48], f16>) -> !tgraph.tensor<[64, 1], f16> {
  %y = tgraph.matmul %a, %b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %r = tgraph.reduce sum %y dim 1 : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[64, 1], f16>
  tgraph.output %r : !tgraph.tensor<[64, 1], f16>
}
"""
OPTIONS = ["--keep", "1", "--split-counts", "2,4", "-j", "2"]


def compile_(tmp: Path, out: str, *extra: str) -> tuple[int, float]:
    """`cleave compile` of the rowsum graph into tmp/out with the cache in tmp/cache; (exit code, seconds)."""
    t0 = time.perf_counter()
    rc = cleave_main(["compile", str(tmp / "rowsum.mlir"), "-o", str(tmp / out), "--cache-dir", str(tmp / "cache"), *OPTIONS, *extra])
    return rc, time.perf_counter() - t0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with rowsum.mlir, k1.py and a cache holding its entry (made once for this file)."""
    tmp = tmp_path_factory.mktemp("built")
    (tmp / "rowsum.mlir").write_text(ROWSUM)
    cwd = os.getcwd()
    os.chdir(tmp)  # TileLang lowering runs outside the repository
    try:
        rc, seconds = compile_(tmp, "k1.py")
    finally:
        os.chdir(cwd)
    assert rc == 0
    (tmp / "seconds").write_text(str(seconds))
    return tmp


@pytest.fixture
def work(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of `built` as the current directory."""
    for name in ("rowsum.mlir", "k1.py", "seconds"):
        shutil.copy(built / name, tmp_path / name)
    shutil.copytree(built / "cache", tmp_path / "cache")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def entry_dir(work: Path) -> Path:
    (d,) = (work / "cache" / "entries").iterdir()
    return d


def test_second_compile_is_a_hit_with_the_same_module(work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A hit neither searches nor lowers (asserted by making both fail, not by timing: a wall-clock ratio
    of a 1 s compile flaked on a loaded 2-core CI machine)."""

    def must_not_run(*_: object, **__: object) -> None:
        raise AssertionError("a cache hit ran the search or the lowering")

    monkeypatch.setattr("cleave_ir.compile._search_and_emit", must_not_run)
    monkeypatch.setattr("cleave_ir.compile.lower_each", must_not_run)
    capsys.readouterr()
    rc, _ = compile_(work, "k2.py")
    out = capsys.readouterr().out
    assert rc == 0
    assert f"search+schedule: cache hit (entry {entry_dir(work).name[:12]})" in out
    assert "emit: cache hit" in out and "lower (sm_90a): cache hit" in out
    assert "#0 @rowsum" in out and "kernel module written to" in out
    assert (work / "k2.py").read_bytes() == (work / "k1.py").read_bytes()


def test_changed_option_is_a_miss(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    rc, _ = compile_(work, "k2.py", "--max-ops", "11")
    out = capsys.readouterr().out
    assert rc == 0 and "cache: miss" in out and "search+schedule: cache hit" not in out
    assert len(list((work / "cache" / "entries").iterdir())) == 2
    assert compile_(work, "k3.py")[0] == 0
    assert "search+schedule: cache hit" in capsys.readouterr().out  # the first entry is still there


def test_no_cache_neither_reads_nor_writes(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(work / "cache")
    capsys.readouterr()
    rc, _ = compile_(work, "k2.py", "--no-cache")
    assert rc == 0 and "cache: off" in capsys.readouterr().out
    assert not (work / "cache").exists()
    assert (work / "k2.py").read_bytes() == (work / "k1.py").read_bytes()


def test_unwritable_cache_is_a_warning(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "blocked").write_text("a file where the cache directory should be")
    capsys.readouterr()
    rc = cleave_main(["compile", str(work / "rowsum.mlir"), "-o", str(work / "k2.py"), "--cache-dir", str(work / "blocked"), *OPTIONS])
    captured = capsys.readouterr()
    assert rc == 0 and (work / "k2.py").read_bytes() == (work / "k1.py").read_bytes()
    assert "warning: cache: could not store entry" in captured.err


def _flip_byte(d: Path) -> str:
    f = d / "kernel.py"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x20
    f.write_bytes(bytes(data))
    return "kernel.py hash mismatch"


def _drop_manifest(d: Path) -> str:
    (d / "manifest.json").unlink()
    return "manifest missing"


def _delete_file(d: Path) -> str:
    (d / "report.json").unlink()
    return "report.json missing"


def _truncate_manifest(d: Path) -> str:
    m = d / "manifest.json"
    m.write_bytes(m.read_bytes()[:40])
    return "manifest unreadable"


def _extra_file(d: Path) -> str:
    (d / "cuda" / "stray.cu").write_text("// not ours")
    return "unlisted file cuda/stray.cu"


def _stale_material(d: Path) -> str:
    m = json.loads((d / "manifest.json").read_text())
    m["key_material"]["options"]["keep"] = 7
    (d / "manifest.json").write_text(json.dumps(m))
    return "key does not match"


@pytest.mark.parametrize("damage", [_flip_byte, _drop_manifest, _delete_file])
def test_corrupt_entry_is_reported_and_rebuilt(damage, work: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    d = entry_dir(work)
    reason = damage(d)
    capsys.readouterr()
    rc, _ = compile_(work, "k2.py")
    captured = capsys.readouterr()
    assert rc == 0
    lines = [line for line in captured.err.splitlines() if line.startswith("cache: entry")]
    assert len(lines) == 1 and lines[0].startswith(f"cache: entry {d.name[:12]} corrupt (") and lines[0].endswith("); rebuilding")
    assert reason in lines[0]
    assert "cache: miss" in captured.out and "search+schedule: cache hit" not in captured.out
    assert (work / "k2.py").read_bytes() == (work / "k1.py").read_bytes()
    # rebuilt: the next run is a clean hit
    rc, _ = compile_(work, "k3.py")
    captured = capsys.readouterr()
    assert rc == 0 and "search+schedule: cache hit" in captured.out and "corrupt" not in captured.err


def test_key_changes_with_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    material = key_material("graph text", [[64, 32]], {"keep": 3, "split_counts": (2, 4)})
    key = cache_key(material)
    assert key == cache_key(key_material("graph text", [[64, 32]], {"split_counts": (2, 4), "keep": 3}))
    assert key != cache_key(key_material("graph text", [[64, 32]], {"keep": 2, "split_counts": (2, 4)}))
    assert key != cache_key(key_material("graph text", [[64, 16]], {"keep": 3, "split_counts": (2, 4)}))
    real = cache_mod.package_version
    for pkg in ("cleave-ir", "xdsl", "tilelang", "numpy", "sympy", "torch"):
        with monkeypatch.context() as m:
            m.setattr(cache_mod, "package_version", lambda name, pkg=pkg: "0.0.0-test" if name == pkg else real(name))
            assert cache_key(key_material("graph text", [[64, 32]], {"keep": 3, "split_counts": (2, 4)})) != key, pkg
    with monkeypatch.context() as m:
        m.setattr(cache_mod, "source_hash", lambda: "0" * 64)
        assert cache_key(key_material("graph text", [[64, 32]], {"keep": 3, "split_counts": (2, 4)})) != key
    with monkeypatch.context() as m:
        m.setattr(cache_mod.sys, "version", "3.99.0 (test)")
        assert cache_key(key_material("graph text", [[64, 32]], {"keep": 3, "split_counts": (2, 4)})) != key
    assert cache_key(key_material("graph text", [[64, 32]], {"keep": 3, "split_counts": (2, 4)})) == key


def test_editing_a_source_file_changes_the_source_hash(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("ignored")
    h = hash_sources([("pkg", tmp_path)])
    (tmp_path / "notes.txt").write_text("still ignored")
    assert hash_sources([("pkg", tmp_path)]) == h
    (tmp_path / "a.py").write_text("x = 2\n")
    assert hash_sources([("pkg", tmp_path)]) != h
    assert len(cache_mod.source_hash()) == 64


@pytest.mark.parametrize("damage", [_flip_byte, _drop_manifest, _delete_file, _truncate_manifest, _extra_file, _stale_material])
def test_cache_load_rejects_damaged_entries(damage, work: Path) -> None:  # type: ignore[no-untyped-def]
    """Every kind of damage, at the Cache level (no rebuild): reported in one line, removed, not returned."""
    d = entry_dir(work)
    material = json.loads((d / "manifest.json").read_text())["key_material"]
    warnings: list[str] = []
    c = Cache(work / "cache", warn=warnings.append)
    assert c.load(d.name, material, required=("kernel.py", "report.json")) is not None and not warnings
    reason = damage(d)
    assert c.load(d.name, material, required=("kernel.py", "report.json")) is None
    assert len(warnings) == 1 and reason in warnings[0] and warnings[0].startswith(f"cache: entry {d.name[:12]} corrupt (")
    assert not d.exists() and list((work / "cache" / "entries").iterdir()) == []


def test_store_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = Cache(tmp_path / "c", warn=lambda line: pytest.fail(line))
    material = key_material("g", [[1]], {})
    key = cache_key(material)
    real_rename = os.rename

    def crash(src, dst):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt  # the process dies between writing the files and committing them

    monkeypatch.setattr(cache_mod.os, "rename", crash)
    with pytest.raises(KeyboardInterrupt):
        c.store(key, material, {"kernel.py": "print(1)\n"})
    monkeypatch.setattr(cache_mod.os, "rename", real_rename)
    assert not c.path(key).exists() and c.load(key, material) is None  # no half entry, no warning
    e = c.store(key, material, {"kernel.py": "print(1)\n", "sub/x.cu": b"\x00\x01"})
    assert c.load(key, material, required=("kernel.py",)).files == e.files == {"kernel.py": b"print(1)\n", "sub/x.cu": b"\x00\x01"}
    e2 = c.update(e, material, {"gpu.json": "{}"})
    assert set(c.load(key, material).files) == {"kernel.py", "sub/x.cu", "gpu.json"} == set(e2.files)
    assert [p.name for p in (tmp_path / "c" / "entries").iterdir() if p.name.startswith(".")] == []


def test_required_file_missing_from_manifest_is_corrupt(tmp_path: Path) -> None:
    warnings: list[str] = []
    c = Cache(tmp_path / "c", warn=warnings.append)
    material = key_material("g", [[1]], {})
    key = cache_key(material)
    c.store(key, material, {"kernel.py": "x"})
    assert c.load(key, material, required=("kernel.py", "report.json")) is None
    assert warnings == [f"cache: entry {key[:12]} corrupt (report.json not in the manifest); rebuilding"]
    assert not c.path(key).exists()


def test_cache_dir_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLEAVE_CACHE_DIR", str(tmp_path / "env"))
    assert cache_mod.default_root(str(tmp_path / "flag")) == tmp_path / "flag"
    assert cache_mod.default_root(None) == tmp_path / "env"
    monkeypatch.delenv("CLEAVE_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_mod.default_root(None) == tmp_path / "home" / ".cache" / "cleave-ir"
    monkeypatch.setenv("TILELANG_CACHE_DIR", "unchanged-by-the-test")
    assert Cache(tmp_path / "c").use_tilelang_cache() == tmp_path / "c" / "tilelang"
    assert os.environ["TILELANG_CACHE_DIR"] == str(tmp_path / "c" / "tilelang")
