"""RFB's VNC authentication (RFC 6143 7.2.2), for the held frame connection and the viewer's bridge.

The answer to the server's 16-byte challenge is its DES encryption keyed with the password's
first 8 bytes, each bit-reversed. vncdotool's own takes the cipher from where cryptography
deprecated it (a warning at every connection); this is the same cipher from its current home
(triple DES with one key repeated is single DES).
"""

from __future__ import annotations

from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
from cryptography.hazmat.primitives.ciphers import Cipher, modes


def vnc_auth_response(password: str, challenge: bytes) -> bytes:
    """The answer to ``challenge`` for ``password``."""
    key = bytes(int(f"{byte:08b}"[::-1], 2) for byte in password.encode("latin-1")[:8].ljust(8, b"\0"))
    encryptor = Cipher(TripleDES(key * 3), modes.ECB()).encryptor()
    return encryptor.update(challenge) + encryptor.finalize()
