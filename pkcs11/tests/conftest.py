"""Shared set-up of the module's client tests: a fresh token directory and configuration per
test process (PQGPU_PKCS11_CONF is read at C_Initialize), the module's path, OpenSSL 3.5."""

import os
import struct
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.environ.get("PQGPU_PKCS11_MODULE") or os.path.join(
    HERE, "..", "..", "target", "release", "libpqgpu_pkcs11.so"
)
SO_PIN = "so-secret-1"
USER_PIN = "user-secret-1"
MAX_PIN_FAILURES = 3

# FIPS 204 sizes (pk, sk, signature), from the standard's Table 2.
SIZES = {1: (1312, 2560, 2420), 2: (1952, 4032, 3309), 3: (2592, 4896, 4627)}
NAMES = {1: "ML-DSA-44", 2: "ML-DSA-65", 3: "ML-DSA-87"}


def write_config(dirname, **extra):
    """A configuration naming a token directory under `dirname`; cheap Argon2id for tests."""
    conf = os.path.join(dirname, "pkcs11.conf")
    lines = {
        "token_dir": os.path.join(dirname, "token"),
        "backend": os.environ.get("PQGPU_PKCS11_BACKEND", "cpu"),
        "max_pin_failures": str(MAX_PIN_FAILURES),
        "kdf_memory_kib": "1024",
        "kdf_iterations": "1",
    }
    lines.update({k: str(v) for k, v in extra.items()})
    with open(conf, "w") as f:
        f.write("# test token\n")
        for k, v in lines.items():
            f.write(f"{k} = {v}\n")
    return conf


def init_token(conf, label="pqgpu test"):
    """C_InitToken + C_InitPIN in a child process (through PyKCS11: python-pkcs11 has no
    C_InitToken), so that the test process initialises the module itself afterwards."""
    code = f"""
import PyKCS11
lib = PyKCS11.PyKCS11Lib(); lib.load({MODULE!r})
slot = lib.getSlotList()[0]
lib.initToken(slot, {SO_PIN!r}, {label.ljust(32)!r})
s = lib.openSession(slot, PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
s.login({SO_PIN!r}, PyKCS11.CKU_SO); s.initPin({USER_PIN!r}); s.logout(); s.closeSession()
"""
    env = dict(os.environ, PQGPU_PKCS11_CONF=conf)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


@pytest.fixture(scope="session")
def token_conf():
    """A fresh, initialised token for this test process; PQGPU_PKCS11_CONF points to it."""
    d = tempfile.mkdtemp(prefix="pqgpu-p11-")
    conf = write_config(d)
    init_token(conf)
    os.environ["PQGPU_PKCS11_CONF"] = conf
    return conf


def openssl():
    """OpenSSL 3.5's program (PQGPU_OPENSSL, as scripts/test.sh exports it), or a skip."""
    path = os.environ.get("PQGPU_OPENSSL")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("SKIPPED: PQGPU_OPENSSL (OpenSSL 3.5's program) is not set")
    return path


def spki_der(param_set, pk):
    """SubjectPublicKeyInfo of an ML-DSA public key (RFC 9881: the OID, no parameters, the
    FIPS 204 encoding as the BIT STRING)."""
    oid_last = {1: 0x11, 2: 0x12, 3: 0x13}[param_set]
    alg = bytes([0x30, 0x0B, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, oid_last])
    bits = b"\x00" + pk
    bitstr = b"\x03" + der_len(len(bits)) + bits
    body = alg + bitstr
    return b"\x30" + der_len(len(body)) + body


def der_len(n):
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def sign_context(ctx=b"", hedge=0):
    """CK_SIGN_ADDITIONAL_CONTEXT as raw mechanism-parameter bytes (hedgeVariant, pContext,
    ulContextLen); the returned buffer must stay alive while the parameter is used."""
    import ctypes

    buf = ctypes.create_string_buffer(ctx, len(ctx)) if ctx else None
    addr = ctypes.addressof(buf) if buf is not None else 0
    return struct.pack("LPL", hedge, addr, len(ctx)), buf


def hash_sign_context(hash_mech, ctx=b"", hedge=0):
    """CK_HASH_SIGN_ADDITIONAL_CONTEXT (… , hash)."""
    raw, buf = sign_context(ctx, hedge)
    return raw + struct.pack("L", hash_mech), buf
