"""A persistent cache for `cleave compile`: search, schedules, emitted module, lowering, GPU results.

An entry is a directory `<root>/entries/<key>` (the key is a sha256, shown by its first 12 hex
digits) holding files and a `manifest.json`: the key material (the input graph's canonical text,
its shapes, the options, the versions), the sha256 of every file, and the creation time. Loading
verifies the manifest and every file's hash; a corrupt, partial or stale entry is reported in one
line and removed, never trusted. Entries are written into a temporary directory and renamed into
place, so a crash never leaves a half entry under the entry's name.

The key covers everything the result depends on: the graph text, its shapes, every option that
changes the result, and the versions of cleave_ir (package version and a hash of its source files,
so that editing the code invalidates entries), xdsl, tilelang, numpy, sympy, torch and Python.
TileLang's own kernel cache is pointed at `<root>/tilelang` (see `use_tilelang_cache`) so compiled
kernels are reused across runs too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import metadata, util
from pathlib import Path
from typing import Any

FORMAT = 1
"""Version of the entry layout; an entry of another format is stale."""

MANIFEST = "manifest.json"

_PACKAGES = ("xdsl", "tilelang", "numpy", "sympy", "torch")
_SOURCE_PACKAGES = ("cleave_ir", "cleave_ir.dialects", "cleave_ir.passes")


def default_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The cache directory: `explicit`, else `$CLEAVE_CACHE_DIR`, else `~/.cache/cleave-ir`."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("CLEAVE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/cleave-ir").expanduser()


def package_version(name: str) -> str | None:
    """Installed version of a distribution, or None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def hash_sources(packages: Sequence[tuple[str, Path]]) -> str:
    """sha256 over the `*.py` files of (name, directory) packages, by package, file name and bytes."""
    h = hashlib.sha256()
    for pkg, root in packages:
        for f in sorted(p for p in root.glob("*.py") if p.is_file()):
            h.update(f"{pkg}/{f.name}\0".encode())
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


@cache
def source_hash() -> str:
    """`hash_sources` of the installed cleave_ir packages (computed once per process)."""
    dirs = []
    for pkg in _SOURCE_PACKAGES:
        spec = util.find_spec(pkg)
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            dirs.append((pkg, Path(loc)))
    return hash_sources(dirs)


def versions() -> dict[str, str]:
    """Versions that enter the key: cleave_ir (version and source hash), dependencies, Python."""
    out = {"cleave_ir": package_version("cleave-ir") or "unknown", "cleave_ir_source": source_hash()}
    for name in _PACKAGES:
        v = package_version(name)
        if v is not None:  # torch only where installed
            out[name] = v
    out["python"] = sys.version.split()[0]
    return out


def key_material(graph_text: str, shapes: list[list[int]], options: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the key hashes, as a JSON-able dict (`versions()` is read now)."""
    return {
        "format": FORMAT,
        "graph": graph_text,
        "shapes": [list(s) for s in shapes],
        "options": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(options.items())},
        "versions": versions(),
    }


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def cache_key(material: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of the key material."""
    return hashlib.sha256(_canonical(material)).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CorruptEntry(Exception):
    """An entry that failed verification; the message is the reason."""


@dataclass
class Entry:
    """A verified cache entry: its key, directory, manifest and file contents."""

    key: str
    path: Path
    manifest: dict[str, Any]
    files: dict[str, bytes]

    @property
    def short(self) -> str:
        """The first 12 hex digits of the key, as reports show it."""
        return self.key[:12]

    def text(self, name: str) -> str:
        """A file of the entry as text."""
        return self.files[name].decode()

    def json(self, name: str) -> Any:
        """A JSON file of the entry."""
        return json.loads(self.files[name])


class Cache:
    """The cache at `root`; `warn` receives the one-line reports of corrupt entries."""

    def __init__(self, root: str | os.PathLike[str], warn: Callable[[str], None] | None = None) -> None:
        self.root = Path(root).absolute()
        self.entries = self.root / "entries"
        self.warn = warn or (lambda line: print(line, file=sys.stderr))

    def path(self, key: str) -> Path:
        """The directory of the entry `key`."""
        return self.entries / key

    def use_tilelang_cache(self) -> Path:
        """Point TileLang's kernel cache (TILELANG_CACHE_DIR) into this cache; returns the directory."""
        d = self.root / "tilelang"
        d.mkdir(parents=True, exist_ok=True)
        os.environ["TILELANG_CACHE_DIR"] = str(d)
        return d

    # ------------------------------------------------------------------ load

    def verify(self, key: str, material: Mapping[str, Any], required: tuple[str, ...] = ()) -> Entry:
        """Read and verify the entry `key`; raise `CorruptEntry` with the reason, `FileNotFoundError` if absent."""
        d = self.path(key)
        if not d.is_dir():
            raise FileNotFoundError(d)
        try:
            manifest = json.loads((d / MANIFEST).read_bytes())
        except FileNotFoundError:
            raise CorruptEntry("manifest missing") from None
        except (OSError, ValueError) as e:
            raise CorruptEntry(f"manifest unreadable: {e}") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
            raise CorruptEntry("manifest malformed")
        if manifest.get("format") != FORMAT:
            raise CorruptEntry(f"format {manifest.get('format')!r}, expected {FORMAT}")
        if manifest.get("key") != key or cache_key(manifest.get("key_material", {})) != key:
            raise CorruptEntry("key does not match the manifest's key material")
        if manifest["key_material"] != json.loads(_canonical(material)):
            raise CorruptEntry("stale: key material differs")
        files: dict[str, bytes] = {}
        for name, digest in sorted(manifest["files"].items()):
            f = d / name
            if Path(name).is_absolute() or ".." in Path(name).parts:
                raise CorruptEntry(f"bad file name {name!r}")
            try:
                data = f.read_bytes()
            except FileNotFoundError:
                raise CorruptEntry(f"{name} missing") from None
            except OSError as e:
                raise CorruptEntry(f"{name} unreadable: {e}") from None
            if _sha256(data) != digest:
                raise CorruptEntry(f"{name} hash mismatch")
            files[name] = data
        present = {p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file()} - {MANIFEST}
        extra = sorted(present - set(files))
        if extra:
            raise CorruptEntry(f"unlisted file {extra[0]}")
        for name in required:
            if name not in files:
                raise CorruptEntry(f"{name} not in the manifest")
        return Entry(key, d, manifest, files)

    def load(self, key: str, material: Mapping[str, Any], required: tuple[str, ...] = ()) -> Entry | None:
        """The verified entry `key`, or None (absent, or corrupt: then reported and removed)."""
        try:
            return self.verify(key, material, required)
        except FileNotFoundError:
            return None
        except CorruptEntry as e:
            self.warn(f"cache: entry {key[:12]} corrupt ({e}); rebuilding")
            self.discard(key)
            return None

    # ------------------------------------------------------------------ store

    def store(self, key: str, material: Mapping[str, Any], files: Mapping[str, bytes | str]) -> Entry:
        """Write the entry `key` with `files` atomically (replacing an existing one); return it."""
        self.entries.mkdir(parents=True, exist_ok=True)
        self._clean_temporaries()
        tag = f"{key[:12]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp = self.entries / f".tmp-{tag}"
        tmp.mkdir()
        try:
            data = {name: v.encode() if isinstance(v, str) else bytes(v) for name, v in files.items()}
            for name, b in data.items():
                if name == MANIFEST or Path(name).is_absolute() or ".." in Path(name).parts:
                    raise ValueError(f"cache: bad file name {name!r}")
                f = tmp / name
                f.parent.mkdir(parents=True, exist_ok=True)
                _write_synced(f, b)
            manifest = {
                "format": FORMAT,
                "key": key,
                "key_material": json.loads(_canonical(material)),
                "versions": dict(material.get("versions", {})),
                "files": {name: _sha256(b) for name, b in sorted(data.items())},
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            _write_synced(tmp / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
            target = self.path(key)
            old = None
            if target.exists():
                old = self.entries / f".trash-{tag}"
                os.rename(target, old)
            try:
                os.rename(tmp, target)
            except OSError:  # another process committed the same key in between: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            _fsync_dir(self.entries)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return Entry(key, self.path(key), manifest, data)

    def update(self, entry: Entry, material: Mapping[str, Any], files: Mapping[str, bytes | str]) -> Entry:
        """Rewrite `entry` with `files` added or replaced (atomically, like `store`)."""
        merged: dict[str, bytes | str] = dict(entry.files)
        merged.update(files)
        return self.store(entry.key, material, merged)

    def discard(self, key: str) -> None:
        """Remove the entry `key` (renamed away first, so it disappears at once)."""
        d = self.path(key)
        if not d.exists():
            return
        trash = self.entries / f".trash-{key[:12]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(d, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def _clean_temporaries(self, older_than_s: float = 3600.0) -> None:
        """Remove temporary and trash directories left by crashed writers."""
        now = time.time()
        for p in self.entries.glob(".t*-*"):
            try:
                if now - p.stat().st_mtime > older_than_s:
                    shutil.rmtree(p, ignore_errors=True)
            except OSError:
                pass


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
