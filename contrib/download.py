"""``tvm.contrib.download``: ``download_testdata`` without a network.

xrelay never downloads. ``download_testdata(url, relpath, module)`` returns the path of the
file in the local test-data cache, ``$XRELAY_TESTDATA_DIR/<module>/<relpath>`` (default
``~/.cache/xrelay/testdata``, or ``$XRELAY_CACHE_DIR/testdata``), and when the file is not
there it raises ``TestDataMissingError`` naming the URL to fetch it from and the exact path
to put it at. ``download(url, path)`` does the same for an explicit path.
"""

from __future__ import annotations

import os
from pathlib import Path

from xrelay.error import TVMError

__all__ = ["TestDataMissingError", "download", "download_testdata", "testdata_dir"]


class TestDataMissingError(TVMError, FileNotFoundError):
    """A test-data file is not in the local cache (xrelay does not download)."""

    __test__ = False  # not a pytest test class


def testdata_dir() -> Path:
    """The local test-data cache directory."""
    explicit = os.environ.get("XRELAY_TESTDATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XRELAY_CACHE_DIR")
    base = Path(cache).expanduser() if cache else Path.home() / ".cache" / "xrelay"
    return base / "testdata"


def _missing(url: str, path: Path) -> TestDataMissingError:
    return TestDataMissingError(
        f"{path.name} is not in the local test-data cache and xrelay does not download: "
        f"fetch {url} and save it as {path} (the cache is $XRELAY_TESTDATA_DIR, "
        f"default ~/.cache/xrelay/testdata)"
    )


def download_testdata(
    url: str, relpath: str, module: str | list[str] | tuple[str, ...] | None = None,
    overwrite: bool = False,
) -> str:  # fmt: skip
    """The local path of test data ``relpath`` (under ``module``), which must already be in the
    cache; otherwise a ``TestDataMissingError`` says where to put it (see the module doc)."""
    rel = Path(relpath)
    if rel.is_absolute() or ".." in rel.parts:
        raise TVMError(f"download_testdata: relpath must be relative and stay inside the cache, got {relpath!r}")
    parts = [] if module is None else [module] if isinstance(module, str) else list(module)
    path = testdata_dir().joinpath(*parts, rel)
    if not path.is_file():
        raise _missing(url, path)
    return str(path)


def download(url: str, path: str, overwrite: bool = False, size_compare: bool = False, retries: int = 3) -> None:
    """``tvm.contrib.download.download``: succeeds only if ``path`` already exists."""
    if not Path(path).is_file():
        raise _missing(url, Path(path))
