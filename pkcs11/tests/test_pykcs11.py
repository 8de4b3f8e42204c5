"""The module through PyKCS11 (the 2.x function list, C_GetFunctionList): key pairs, pure and
HashML-DSA signatures checked by OpenSSL 3.5's default provider (an independent FIPS 204
implementation), keys made by OpenSSL imported and used, and the return codes PKCS#11
requires for bad input."""

import hashlib
import os
import struct
import subprocess
import tempfile

import PyKCS11
import pytest
from PyKCS11 import LowLevel

from conftest import MODULE, NAMES, SIZES, USER_PIN, hash_sign_context, openssl, sign_context, spki_der

CKA_PARAMETER_SET = 0x61D
CKA_SEED = 0x637
CKK_ML_DSA = 0x4A
CKM_ML_DSA_KEY_PAIR_GEN = 0x1C
CKM_ML_DSA = 0x1D
CKM_HASH_ML_DSA = 0x1F
CKR_PARAMETER_SET_NOT_SUPPORTED = 0x209

# CKM_HASH_ML_DSA_<hash> (PKCS#11 3.2) -> (hashlib name, digest length, FIPS 204 OID arc).
HASH_MECHS = {
    0x23: ("sha224", 28, 0x04),
    0x24: ("sha256", 32, 0x01),
    0x25: ("sha384", 48, 0x02),
    0x26: ("sha512", 64, 0x03),
    0x27: ("sha3_224", 28, 0x07),
    0x28: ("sha3_256", 32, 0x08),
    0x29: ("sha3_384", 48, 0x09),
    0x2A: ("sha3_512", 64, 0x0A),
    0x2B: ("shake_128", 32, 0x0B),
    0x2C: ("shake_256", 64, 0x0C),
}


def ulong(v):
    return struct.pack("L", v)


@pytest.fixture(scope="module")
def lib(token_conf):
    lib = PyKCS11.PyKCS11Lib()
    lib.load(MODULE)
    return lib


@pytest.fixture(scope="module")
def session(lib):
    s = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_RW_SESSION | PyKCS11.CKF_SERIAL_SESSION)
    s.login(USER_PIN)
    return s


def rv(f, *a):
    """The CKR_* code of a call that must fail."""
    with pytest.raises(PyKCS11.PyKCS11Error) as e:
        f(*a)
    return e.value.value


def gen(session, ps, pub_extra=(), priv_extra=(), token=False):
    pub_t = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_TOKEN, token),
             (CKA_PARAMETER_SET, ulong(ps)), *pub_extra]
    priv_t = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), (PyKCS11.CKA_TOKEN, token), *priv_extra]
    return session.generateKeyPair(pub_t, priv_t, PyKCS11.Mechanism(CKM_ML_DSA_KEY_PAIR_GEN))


def value(session, h):
    return bytes(session.getAttributeValue(h, [PyKCS11.CKA_VALUE], allAsBinary=True)[0])


def openssl_verify(ps, pk, msg, sig, *opts):
    """Verifies with OpenSSL 3.5's default provider; True if it accepts."""
    o = openssl()
    with tempfile.TemporaryDirectory() as d:
        paths = {n: os.path.join(d, n) for n in ("pub.der", "msg", "sig")}
        for n, b in (("pub.der", spki_der(ps, pk)), ("msg", msg), ("sig", sig)):
            with open(paths[n], "wb") as f:
                f.write(b)
        args = [o, "pkeyutl", "-verify", "-pubin", "-keyform", "DER", "-inkey", paths["pub.der"],
                "-rawin", "-in", paths["msg"], "-sigfile", paths["sig"]]
        for opt in opts:
            args += ["-pkeyopt", opt]
        r = subprocess.run(args, capture_output=True, text=True)
        return r.returncode == 0 and "Verified Successfully" in r.stdout


@pytest.mark.parametrize("ps", [1, 2, 3])
def test_openssl_verifies_token_signatures(session, ps):
    pub, priv = gen(session, ps)
    pk = value(session, pub)
    assert len(pk) == SIZES[ps][0]
    msg = b"signed on the token, checked by OpenSSL"
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_ML_DSA)))
    assert openssl_verify(ps, pk, msg, sig)
    assert not openssl_verify(ps, pk, msg + b"!", sig)
    raw, keep = sign_context(b"ctx-123")
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_ML_DSA, raw)))
    assert openssl_verify(ps, pk, msg, sig, "hexcontext-string:" + b"ctx-123".hex())
    assert not openssl_verify(ps, pk, msg, sig)


def hash_m_prime(name, digest_len, arc, msg, ctx=b"", digest=None):
    """FIPS 204 Algorithm 4's M' = 1 || |ctx| || ctx || OID(PH) || PH(M)."""
    if digest is None:
        h = hashlib.new(name, msg)
        digest = h.digest(digest_len) if name.startswith("shake") else h.digest()
    oid = bytes([0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, arc])
    return b"\x01" + bytes([len(ctx)]) + ctx + oid + digest


@pytest.mark.parametrize("mech", sorted(HASH_MECHS))
def test_hash_ml_dsa_checked_by_openssl(session, mech):
    """OpenSSL verifies HashML-DSA as ML-DSA over M' (message-encoding 0: Verify_internal)."""
    ps = 2
    pub, priv = gen(session, ps)
    pk = value(session, pub)
    msg = b"pre-hashed message " * 10
    raw, keep = sign_context(b"hctx")
    sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(mech, raw)))
    assert session.verify(pub, msg, sig, PyKCS11.Mechanism(mech, raw))
    m_prime = hash_m_prime(*HASH_MECHS[mech], msg, b"hctx")
    assert openssl_verify(ps, pk, m_prime, sig, "message-encoding:0")
    assert not openssl_verify(ps, pk, hash_m_prime(*HASH_MECHS[mech], msg, b"other"), sig, "message-encoding:0")


def test_hash_ml_dsa_with_callers_digest(session):
    ps = 1
    pub, priv = gen(session, ps)
    pk = value(session, pub)
    digest = hashlib.sha256(b"the message").digest()
    raw, keep = hash_sign_context(0x250, b"")  # CKM_SHA256
    sig = bytes(session.sign(priv, digest, PyKCS11.Mechanism(CKM_HASH_ML_DSA, raw)))
    assert openssl_verify(ps, pk, hash_m_prime("sha256", 32, 0x01, b"", digest=digest), sig, "message-encoding:0")
    assert rv(session.sign, priv, digest[:31], PyKCS11.Mechanism(CKM_HASH_ML_DSA, raw)) == PyKCS11.CKR_DATA_LEN_RANGE
    bad, keep2 = hash_sign_context(0x1234, b"")
    assert rv(session.sign, priv, digest, PyKCS11.Mechanism(CKM_HASH_ML_DSA, bad)) == PyKCS11.CKR_MECHANISM_PARAM_INVALID


def openssl_key(ps, d):
    """A key pair OpenSSL makes: (seed, sk, pk, pem path), from its PKCS#8 (seed and expanded
    key) and SubjectPublicKeyInfo encodings."""
    o = openssl()
    pem = os.path.join(d, "k.pem")
    subprocess.run([o, "genpkey", "-algorithm", NAMES[ps], "-out", pem], check=True)
    der = subprocess.run([o, "pkey", "-in", pem, "-outform", "DER"], check=True, capture_output=True).stdout
    spki = subprocess.run([o, "pkey", "-in", pem, "-pubout", "-outform", "DER"], check=True, capture_output=True).stdout
    pk_len, sk_len, _ = SIZES[ps]
    i = der.index(b"\x04\x20")
    seed = der[i + 2:i + 34]
    assert der[-sk_len - 4:-sk_len] == b"\x04\x82" + sk_len.to_bytes(2, "big")
    return seed, der[-sk_len:], spki[-pk_len:], pem


@pytest.mark.parametrize("ps", [1, 3])
def test_openssl_key_imported_and_used(session, ps):
    with tempfile.TemporaryDirectory() as d:
        seed, sk, pk, pem = openssl_key(ps, d)
        common = [(PyKCS11.CKA_KEY_TYPE, CKK_ML_DSA), (CKA_PARAMETER_SET, ulong(ps)), (PyKCS11.CKA_TOKEN, True)]
        priv = session.createObject([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), *common,
                                     (PyKCS11.CKA_LABEL, "from openssl"), (CKA_SEED, seed), (PyKCS11.CKA_VALUE, sk)])
        pub = session.createObject([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), *common, (PyKCS11.CKA_VALUE, pk)])
        msg = b"signed with a key OpenSSL made"
        sig = bytes(session.sign(priv, msg, PyKCS11.Mechanism(CKM_ML_DSA)))
        assert session.verify(pub, msg, sig, PyKCS11.Mechanism(CKM_ML_DSA))
        assert openssl_verify(ps, pk, msg, sig)
        # The value alone imports too; a seed that does not give the value is refused.
        only = session.createObject([(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), *common[:2], (PyKCS11.CKA_VALUE, sk)])
        assert openssl_verify(ps, pk, msg, bytes(session.sign(only, msg, PyKCS11.Mechanism(CKM_ML_DSA))))
        wrong_seed = bytes([seed[0] ^ 1]) + seed[1:]
        assert rv(session.createObject, [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), *common[:2],
                                         (CKA_SEED, wrong_seed), (PyKCS11.CKA_VALUE, sk)]) == PyKCS11.CKR_TEMPLATE_INCONSISTENT


def test_length_query_and_buffer_too_small(lib, session):
    pub, priv = gen(session, 1)
    low = lib.lib
    data = PyKCS11.ckbytelist(b"m")
    assert low.C_SignInit(session.session, PyKCS11.Mechanism(CKM_ML_DSA).to_native(), priv) == PyKCS11.CKR_OK
    out = PyKCS11.ckbytelist()
    assert low.C_Sign(session.session, data, out) == PyKCS11.CKR_OK  # NULL buffer: the length
    assert len(out) == 2420
    small = PyKCS11.ckbytelist([0] * 100)
    assert low.C_Sign(session.session, data, small) == PyKCS11.CKR_BUFFER_TOO_SMALL
    # The operation goes on after a short buffer.
    big = PyKCS11.ckbytelist([0] * 2420)
    assert low.C_Sign(session.session, data, big) == PyKCS11.CKR_OK
    assert session.verify(pub, b"m", bytes(big), PyKCS11.Mechanism(CKM_ML_DSA))
    # That signature ended the operation.
    assert low.C_Sign(session.session, data, big) == PyKCS11.CKR_OPERATION_NOT_INITIALIZED


def test_return_codes_for_bad_input(lib, session):
    pub, priv = gen(session, 1)
    mech = PyKCS11.Mechanism(CKM_ML_DSA)
    bad_obj = PyKCS11.LowLevel.CK_OBJECT_HANDLE()
    bad_obj.assign(987654)
    assert rv(session.sign, bad_obj, b"m", mech) == PyKCS11.CKR_KEY_HANDLE_INVALID
    assert rv(session.getAttributeValue, bad_obj, [PyKCS11.CKA_LABEL]) == PyKCS11.CKR_OBJECT_HANDLE_INVALID
    assert rv(session.destroyObject, bad_obj) == PyKCS11.CKR_OBJECT_HANDLE_INVALID
    bad_session = PyKCS11.Session(lib, LowLevel.CK_SESSION_HANDLE())
    bad_session.session.assign(987654)
    assert rv(bad_session.sign, priv, b"m", mech) == PyKCS11.CKR_SESSION_HANDLE_INVALID
    # Wrong mechanism, wrong key for the mechanism.
    assert rv(session.sign, priv, b"m", PyKCS11.Mechanism(PyKCS11.CKM_RSA_PKCS)) == PyKCS11.CKR_MECHANISM_INVALID
    assert rv(session.sign, pub, b"m", mech) == PyKCS11.CKR_KEY_TYPE_INCONSISTENT
    assert rv(session.verify, priv, b"m", b"x" * 2420, mech) == PyKCS11.CKR_KEY_TYPE_INCONSISTENT
    assert rv(session.sign, priv, b"m", PyKCS11.Mechanism(CKM_ML_DSA, b"\x00" * 5)) == PyKCS11.CKR_MECHANISM_PARAM_INVALID
    # Signatures of the wrong length, or wrong.
    assert rv(session.verify, pub, b"m", b"x" * 100, mech) == PyKCS11.CKR_SIGNATURE_LEN_RANGE
    assert session.verify(pub, b"m", b"x" * 2420, mech) is False  # exactly CKR_SIGNATURE_INVALID
    # Wrong parameter set: unknown, or a key whose length is another set's.
    assert rv(gen, session, 7) == CKR_PARAMETER_SET_NOT_SUPPORTED
    pk44 = value(session, pub)
    common = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_KEY_TYPE, CKK_ML_DSA)]
    assert rv(session.createObject, [*common, (CKA_PARAMETER_SET, ulong(2)), (PyKCS11.CKA_VALUE, pk44)]) == PyKCS11.CKR_ATTRIBUTE_VALUE_INVALID
    assert rv(session.createObject, [*common, (PyKCS11.CKA_VALUE, pk44)]) == PyKCS11.CKR_TEMPLATE_INCOMPLETE
    # Contradictory and incomplete templates.
    assert rv(gen, session, 1, [(PyKCS11.CKA_SIGN, True)]) == PyKCS11.CKR_ATTRIBUTE_TYPE_INVALID
    assert rv(gen, session, 1, [(PyKCS11.CKA_ENCRYPT, True)]) == PyKCS11.CKR_TEMPLATE_INCONSISTENT
    assert rv(gen, session, 1, [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY)]) == PyKCS11.CKR_TEMPLATE_INCONSISTENT
    assert rv(gen, session, 1, [(PyKCS11.CKA_TOKEN, True)]) == PyKCS11.CKR_TEMPLATE_INCONSISTENT
    assert rv(gen, session, 1, (), [(CKA_PARAMETER_SET, ulong(3))]) == PyKCS11.CKR_TEMPLATE_INCONSISTENT
    assert rv(gen, session, 1, (), [(PyKCS11.CKA_VALUE, b"x")]) == PyKCS11.CKR_TEMPLATE_INCONSISTENT
    assert rv(gen, session, 1, (), [(PyKCS11.CKA_LOCAL, False)]) == PyKCS11.CKR_ATTRIBUTE_READ_ONLY
    assert rv(session.generateKeyPair, [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY)], [],
              PyKCS11.Mechanism(CKM_ML_DSA_KEY_PAIR_GEN)) == PyKCS11.CKR_TEMPLATE_INCOMPLETE
    # Operation state.
    low = lib.lib
    out = PyKCS11.ckbytelist()
    assert low.C_Sign(session.session, PyKCS11.ckbytelist(b"m"), out) == PyKCS11.CKR_OPERATION_NOT_INITIALIZED
    assert low.C_SignInit(session.session, mech.to_native(), priv) == PyKCS11.CKR_OK
    assert low.C_SignInit(session.session, mech.to_native(), priv) == PyKCS11.CKR_OPERATION_ACTIVE
    assert low.C_Sign(session.session, PyKCS11.ckbytelist(b"m"), out) == PyKCS11.CKR_OK
    out = PyKCS11.ckbytelist([0] * 2420)
    assert low.C_Sign(session.session, PyKCS11.ckbytelist(b"m"), out) == PyKCS11.CKR_OK


def test_read_only_session_and_no_login(lib, session):
    ro = lib.openSession(lib.getSlotList()[0], PyKCS11.CKF_SERIAL_SESSION)
    assert rv(gen, ro, 1, (), (), True) == PyKCS11.CKR_SESSION_READ_ONLY
    pub, priv = gen(session, 1, token=True)
    ro.closeSession()
    session.logout()
    try:
        assert rv(gen, session, 1) == PyKCS11.CKR_USER_NOT_LOGGED_IN
        assert rv(session.sign, priv, b"m", PyKCS11.Mechanism(CKM_ML_DSA)) == PyKCS11.CKR_USER_NOT_LOGGED_IN
        assert rv(session.login, "wrong-pin") == PyKCS11.CKR_PIN_INCORRECT
        # Public keys stay usable without login.
        assert session.verify(pub, b"m", b"x" * 2420, PyKCS11.Mechanism(CKM_ML_DSA)) is False
    finally:
        session.login(USER_PIN)
    assert session.sign(priv, b"m", PyKCS11.Mechanism(CKM_ML_DSA))
