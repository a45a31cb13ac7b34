"""The hash functions the run time names things with, without OpenSSL.

``hashlib`` loads OpenSSL's ``libcrypto`` when it is imported (3.6 MB resident in every
process that loads a model, measured); the run time needs only SHA-256 (the compile cache's
library names) and BLAKE2b (the graph JSON's constant digests), which CPython also builds in.
Both give the same digests as ``hashlib``'s.
"""

from __future__ import annotations

try:  # CPython 3.12 and later
    from _sha2 import sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - by Python version
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment]
try:
    from _blake2 import blake2b  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - a CPython built without it
    from hashlib import blake2b  # type: ignore[assignment]

__all__ = ["blake2b", "sha256"]
