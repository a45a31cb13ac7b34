"""``runtime.digests``: the run time's hash functions give ``hashlib``'s digests (that a
deployed process never imports ``hashlib``: ``test_deployed_imports``)."""

from __future__ import annotations

import hashlib

from xrelay.runtime.digests import blake2b, sha256


def test_digests_are_hashlibs():
    for data in (b"", b"xrelay", bytes(range(256)) * 40):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert blake2b(data, digest_size=16).hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()

