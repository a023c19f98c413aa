"""Tests of the cold-cache mode's pieces: the last-level cache size, the evictor, and untimed work before each call."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cuemem.lab.bench.cache import FALLBACK_LLC_BYTES, MIN_EVICT_BYTES, Evictor, evict_bytes, llc_bytes, parse_size
from cuemem.lab.bench.timing import time_calls

MIB = 2**20


def _cache_dir(root: Path, caches: dict[str, tuple[str, str]]) -> Path:
    """Write a sysfs-like cache directory: ``index*`` -> ``(level, size)``, an empty field left out."""
    for index, fields in caches.items():
        (root / index).mkdir(parents=True)
        for name, text in zip(("level", "size"), fields):
            if text:
                (root / index / name).write_text(text + "\n")
    return root


@pytest.mark.parametrize(
    ("text", "want"),
    [("32768K", 32 * MIB), ("32M", 32 * MIB), ("1G", 2**30), ("512", 512), ("1024k\n", MIB)],
)
def test_parse_size_reads_sysfs_sizes(text: str, want: int) -> None:
    """Sizes with a K, M or G suffix, or none, and a trailing newline, are bytes."""
    assert parse_size(text) == want


@pytest.mark.parametrize("text", ["", "K", "32X", "3.5M", "-1K"])
def test_parse_size_rejects_what_is_not_a_size(text: str) -> None:
    """A size that is not a whole number with an optional unit is an error, not a guess."""
    with pytest.raises(ValueError, match="not a cache size"):
        parse_size(text)


def test_llc_bytes_is_the_largest_size_at_the_highest_level(tmp_path: Path) -> None:
    """The L3 is taken over the larger L1 and L2 entries, the larger of two L3 entries wins, broken entries are skipped."""
    root = _cache_dir(
        tmp_path,
        {
            "index0": ("1", "48K"),
            "index1": ("2", "2048K"),
            "index2": ("3", "16M"),
            "index3": ("3", "36864K"),
            "index4": ("4", ""),
            "index5": ("5", "big"),
        },
    )
    assert llc_bytes(root) == 36 * MIB


def test_llc_bytes_falls_back_when_sysfs_says_nothing(tmp_path: Path) -> None:
    """No readable cache entry, or no directory at all, gives the fallback size."""
    assert llc_bytes(_cache_dir(tmp_path / "broken", {"index0": ("", "32K")})) == FALLBACK_LLC_BYTES
    assert llc_bytes(tmp_path / "missing") == FALLBACK_LLC_BYTES


@pytest.mark.parametrize("llc", [MIB, 32 * MIB, 48 * MIB])
def test_evictor_sweeps_twice_the_llc_and_at_least_64_mib(llc: int) -> None:
    """The evictor's buffer is at least twice the last-level cache and at least 64 MiB, and sweeping it returns nothing."""
    evict = Evictor(llc)
    assert evict.llc_bytes == llc
    assert evict.nbytes >= 2 * llc and evict.nbytes >= MIN_EVICT_BYTES == 64 * MIB
    assert evict.nbytes == evict_bytes(llc)
    assert evict() is None


def test_evictor_defaults_to_this_machines_llc() -> None:
    """Without a size the evictor sizes its buffer for :func:`llc_bytes`."""
    evict = Evictor()
    assert evict.llc_bytes == llc_bytes() and evict.nbytes >= 2 * evict.llc_bytes


def test_time_calls_runs_before_once_per_call_and_untimed() -> None:
    """``before`` runs before every timed call, and its 20 ms sleep is in no sample."""
    calls: list[str] = []

    def before() -> None:
        """Record the call and sleep."""
        calls.append("before")
        time.sleep(0.02)

    latency = time_calls(calls.append, ["call"] * 4, rounds=2, before=before)
    assert calls == ["before", "call"] * 8
    assert latency.rounds == 2 and len(latency.ns) == 8
    assert latency.ns.max() < 20_000_000


def test_time_paths_times_each_path_in_a_pass_of_its_own_turning_the_order_by_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each pass ends with the loop's collection, so each starts after one; the path that starts a round turns."""
    from cuemem.lab.bench import timing

    calls: list[str] = []
    monkeypatch.setattr(timing.gc, "collect", lambda: calls.append("collect"))
    paths = {name: (lambda item, name=name: calls.append(f"{name}{item}")) for name in ("a", "b", "c")}
    latency = timing.time_paths(paths, [1, 2], rounds=4)
    passes = " ".join(calls).split(" collect")
    assert [p.strip() for p in passes if p.strip()] == [
        "a1 a2", "b1 b2", "c1 c2", "b1 b2", "c1 c2", "a1 a2", "c1 c2", "a1 a2", "b1 b2", "a1 a2", "b1 b2", "c1 c2",
    ]
    assert {name: (lat.rounds, len(lat.ns)) for name, lat in latency.items()} == {"a": (4, 8), "b": (4, 8), "c": (4, 8)}
