"""The module driven end to end by python-pkcs11 0.10 (a client no one here wrote), through
the PKCS#11 3.2 interface it asks for with C_GetInterface."""

import json
import os
import threading

import pkcs11
import pytest
from pkcs11 import Attribute, KeyType, Mechanism, ObjectClass
from pkcs11 import exceptions as ex
from pkcs11.mechanisms import MLDSAParameterSet

from conftest import MAX_PIN_FAILURES, SIZES, SO_PIN, USER_PIN, MODULE, sign_context

SETS = [MLDSAParameterSet.ML_DSA_44, MLDSAParameterSet.ML_DSA_65, MLDSAParameterSet.ML_DSA_87]


@pytest.fixture(scope="module")
def lib(token_conf):
    return pkcs11.lib(MODULE)


@pytest.fixture(scope="module")
def token(lib):
    return lib.get_token(token_label="pqgpu test")


@pytest.fixture
def session(token):
    with token.open(rw=True, user_pin=USER_PIN) as s:
        yield s


def keypair(session, ps, label, store=False, **kw):
    return session.generate_keypair(
        KeyType.ML_DSA,
        public_template={Attribute.PARAMETER_SET: ps},
        label=label,
        id=label.encode(),
        store=store,
        **kw,
    )


def test_library_speaks_3_2(lib):
    assert lib.cryptoki_version == (3, 2)
    assert lib.manufacturer_id == "pqgpu"


def test_token_and_mechanisms(token):
    assert token.label == "pqgpu test"
    mechs = token.slot.get_mechanisms()
    assert {Mechanism.ML_DSA_KEY_PAIR_GEN, Mechanism.ML_DSA} <= mechs
    info = token.slot.get_mechanism_info(Mechanism.ML_DSA)
    assert (info.min_key_length, info.max_key_length) == (1312, 2592)
    assert pkcs11.MechanismFlag.SIGN in info.flags and pkcs11.MechanismFlag.VERIFY in info.flags


@pytest.mark.parametrize("ps", SETS)
def test_keypair_sign_verify_every_set(session, ps):
    pub, priv = keypair(session, ps, f"k{int(ps)}")
    pk_len, _, sig_len = SIZES[int(ps)]
    assert len(pub[Attribute.VALUE]) == pk_len
    assert pub[Attribute.PARAMETER_SET] == ps and priv[Attribute.PARAMETER_SET] == ps
    sig = priv.sign(b"a message", mechanism=Mechanism.ML_DSA)
    assert len(sig) == sig_len
    assert pub.verify(b"a message", sig, mechanism=Mechanism.ML_DSA)
    assert not pub.verify(b"another message", sig, mechanism=Mechanism.ML_DSA)


def test_context_and_hedging(session):
    pub, priv = keypair(session, MLDSAParameterSet.ML_DSA_44, "ctx")
    raw, keep = sign_context(b"my context")
    sig = priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=raw)
    assert pub.verify(b"m", sig, mechanism=Mechanism.ML_DSA, mechanism_param=raw)
    other, keep2 = sign_context(b"other context")
    assert not pub.verify(b"m", sig, mechanism=Mechanism.ML_DSA, mechanism_param=other)
    assert not pub.verify(b"m", sig, mechanism=Mechanism.ML_DSA)
    # CKH_DETERMINISTIC_REQUIRED: the same signature twice; hedged: different ones.
    det, keep3 = sign_context(b"my context", hedge=2)
    s1 = priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=det)
    s2 = priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=det)
    assert s1 == s2
    h1 = priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=raw)
    h2 = priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=raw)
    assert h1 != h2
    assert pub.verify(b"m", s1, mechanism=Mechanism.ML_DSA, mechanism_param=raw)
    too_long, keep4 = sign_context(b"x" * 256)
    with pytest.raises(ex.MechanismParamInvalid):
        priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=too_long)
    with pytest.raises(ex.MechanismParamInvalid):
        priv.sign(b"m", mechanism=Mechanism.ML_DSA, mechanism_param=b"short")


def test_multipart_signing(session):
    pub, priv = keypair(session, MLDSAParameterSet.ML_DSA_65, "parts")
    data = [b"part one, ", b"part two, ", b"part three"]
    sig = priv.sign(iter(data), mechanism=Mechanism.ML_DSA)
    assert pub.verify(b"".join(data), sig, mechanism=Mechanism.ML_DSA)
    assert pub.verify(iter(data), sig, mechanism=Mechanism.ML_DSA)


def test_token_objects_search_and_attributes(token, session):
    pub, priv = keypair(session, MLDSAParameterSet.ML_DSA_87, "stored", store=True)
    found = list(session.get_objects({Attribute.LABEL: "stored", Attribute.CLASS: ObjectClass.PRIVATE_KEY}))
    assert len(found) == 1
    key = session.get_key(ObjectClass.PUBLIC_KEY, KeyType.ML_DSA, label="stored")
    assert key[Attribute.ID] == b"stored"
    assert key[Attribute.VALUE] == pub[Attribute.VALUE]
    assert priv[Attribute.SENSITIVE] and not priv[Attribute.EXTRACTABLE]
    assert priv[Attribute.ALWAYS_SENSITIVE] and priv[Attribute.NEVER_EXTRACTABLE]
    assert priv[Attribute.LOCAL] and priv[Attribute.KEY_GEN_MECHANISM] == Mechanism.ML_DSA_KEY_PAIR_GEN
    with pytest.raises(ex.AttributeSensitive):
        priv[Attribute.VALUE]
    with pytest.raises(ex.AttributeSensitive):
        priv[Attribute.SEED]
    priv[Attribute.LABEL] = "renamed"
    assert priv[Attribute.LABEL] == "renamed"
    with pytest.raises(ex.AttributeReadOnly):
        priv[Attribute.SENSITIVE] = False
    # Another session of the application (sharing its login, as PKCS#11 has it) finds them.
    with token.open() as other:
        labels = {o[Attribute.LABEL] for o in other.get_objects({Attribute.KEY_TYPE: KeyType.ML_DSA})}
        assert {"stored", "renamed"} <= labels
    priv.destroy()
    assert not list(session.get_objects({Attribute.LABEL: "renamed"}))


def test_extractable_private_key_gives_its_value(session):
    pub, priv = keypair(
        session,
        MLDSAParameterSet.ML_DSA_44,
        "export",
        private_template={Attribute.SENSITIVE: False, Attribute.EXTRACTABLE: True},
    )
    assert len(priv[Attribute.VALUE]) == SIZES[1][1]
    assert len(priv[Attribute.SEED]) == 32


def test_random(session):
    a, b = session.generate_random(256), session.generate_random(256)
    assert len(a) == 32 and a != b


def test_bad_input_codes(session):
    pub, priv = keypair(session, MLDSAParameterSet.ML_DSA_44, "bad")
    with pytest.raises(ex.MechanismInvalid):
        priv.sign(b"m", mechanism=Mechanism.ECDSA)
    with pytest.raises(ex.TemplateInconsistent):
        session.generate_keypair(
            KeyType.ML_DSA,
            public_template={Attribute.PARAMETER_SET: 1},
            private_template={Attribute.PARAMETER_SET: 2},
        )
    with pytest.raises(ex.TemplateInconsistent):
        session.generate_keypair(
            KeyType.ML_DSA,
            public_template={Attribute.PARAMETER_SET: 1, Attribute.ENCRYPT: True},
        )
    assert not pub.verify(b"m", b"\x00" * 100, mechanism=Mechanism.ML_DSA)
    sig = priv.sign(b"m", mechanism=Mechanism.ML_DSA)
    assert not pub.verify(b"m", sig[:-1] + bytes([sig[-1] ^ 1]), mechanism=Mechanism.ML_DSA)


def test_session_closed_mid_operation(token):
    s = token.open(rw=True, user_pin=USER_PIN)
    pub, priv = keypair(s, MLDSAParameterSet.ML_DSA_44, "mid")

    def chunks():
        yield b"first part"
        s.close()  # the session goes while the multi-part signature is under way
        yield b"second part"

    with pytest.raises((ex.SessionHandleInvalid, ex.SessionClosed)):
        priv.sign(chunks(), mechanism=Mechanism.ML_DSA)


def test_concurrent_sessions_sign(token):
    with token.open(rw=True, user_pin=USER_PIN) as s:
        pub, priv = keypair(s, MLDSAParameterSet.ML_DSA_44, "threads", store=True)
        errors = []

        def worker(i):
            try:
                with token.open() as mine:
                    k = mine.get_key(ObjectClass.PRIVATE_KEY, KeyType.ML_DSA, label="threads")
                    for j in range(5):
                        m = f"msg {i} {j}".encode()
                        sig = k.sign(m, mechanism=Mechanism.ML_DSA)
                        assert pub.verify(m, sig, mechanism=Mechanism.ML_DSA)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors


def test_operations_need_login(token):
    with token.open(rw=True, user_pin=USER_PIN) as s:
        keypair(s, MLDSAParameterSet.ML_DSA_44, "login", store=True)
    with token.open(rw=True) as s:
        with pytest.raises(ex.UserNotLoggedIn):
            keypair(s, MLDSAParameterSet.ML_DSA_44, "nologin", store=True)
        with pytest.raises(ex.NoSuchKey):
            s.get_key(ObjectClass.PRIVATE_KEY, KeyType.ML_DSA, label="login")


def test_wrong_pin_then_locked_then_reset_by_so(token):
    # (python-pkcs11 keeps a session whose login failed open: read-write ones, so that the SO
    # may log in below; an open read-only session would refuse the SO, as PKCS#11 requires.)
    with pytest.raises(ex.PinIncorrect):
        token.open(rw=True, user_pin="wrong-pin-0")
    with token.open(user_pin=USER_PIN):
        pass  # a right PIN clears the count
    for i in range(MAX_PIN_FAILURES):
        with pytest.raises(ex.PinIncorrect):
            token.open(rw=True, user_pin=f"wrong-pin-{i}")
    with pytest.raises(ex.PinLocked):
        token.open(rw=True, user_pin=USER_PIN)
    assert pkcs11.TokenFlag.USER_PIN_LOCKED in token.slot.get_token().flags
    with token.open(rw=True, so_pin=SO_PIN) as so:
        so.init_pin(USER_PIN)
    with token.open(user_pin=USER_PIN) as s:
        assert s.get_key(ObjectClass.PRIVATE_KEY, KeyType.ML_DSA, label="login")


# ---- ML-KEM (FIPS 203): CKM_ML_KEM through C_EncapsulateKey / C_DecapsulateKey ----

KEM_SETS = [1, 2, 3]  # CKP_ML_KEM_512, _768, _1024
KEM_NAMES = {"ML-KEM-512": 1, "ML-KEM-768": 2, "ML-KEM-1024": 3}
CT_LEN = {1: 768, 2: 1088, 3: 1568}
# The shared secret as a key object whose value the test may read.
READABLE = {Attribute.SENSITIVE: False, Attribute.EXTRACTABLE: True}


def kem_keypair(session, ckp, label):
    return session.generate_keypair(
        KeyType.ML_KEM, public_template={Attribute.PARAMETER_SET: ckp}, label=label
    )


def kem_vectors():
    """The NIST ACVP ML-KEM encapDecap vectors (../shared/vectors or PQGPU_VECTORS_DIR)."""
    root = os.environ.get("PQGPU_VECTORS_DIR") or os.path.join(
        os.path.dirname(MODULE), "..", "..", "..", "shared", "vectors"
    )
    path = os.path.join(root, "acvp", "ML-KEM-encapDecap-FIPS203", "internalProjection.json")
    if not os.path.exists(path):
        pytest.skip(f"no ACVP vectors at {path}")
    with open(path) as f:
        return json.load(f)["testGroups"]


def test_kem_mechanisms(token):
    mechs = token.slot.get_mechanisms()
    assert {Mechanism.ML_KEM_KEY_PAIR_GEN, Mechanism.ML_KEM} <= mechs
    info = token.slot.get_mechanism_info(Mechanism.ML_KEM)
    assert (info.min_key_length, info.max_key_length) == (800, 1568)
    assert pkcs11.MechanismFlag.ENCAPSULATE in info.flags
    assert pkcs11.MechanismFlag.DECAPSULATE in info.flags


@pytest.mark.parametrize("ckp", KEM_SETS)
def test_kem_encapsulate_decapsulate_every_set(session, ckp):
    pub, priv = kem_keypair(session, ckp, f"kem{ckp}")
    assert pub[Attribute.ENCAPSULATE] and priv[Attribute.DECAPSULATE]
    assert not pub[Attribute.VERIFY] and not priv[Attribute.SIGN]
    assert priv[Attribute.KEY_GEN_MECHANISM] == Mechanism.ML_KEM_KEY_PAIR_GEN
    ct, sent = pub.encapsulate_key(KeyType.GENERIC_SECRET, template=READABLE)
    assert len(ct) == CT_LEN[ckp]
    got = priv.decapsulate_key(ct, KeyType.GENERIC_SECRET, template=READABLE)
    assert sent[Attribute.VALUE_LEN] == 32 and got[Attribute.CLASS] == ObjectClass.SECRET_KEY
    assert len(sent[Attribute.VALUE]) == 32
    assert sent[Attribute.VALUE] == got[Attribute.VALUE]
    # Implicit rejection: a changed ciphertext decapsulates to another secret, no error.
    bad = bytes([ct[0] ^ 1]) + ct[1:]
    other = priv.decapsulate_key(bad, KeyType.GENERIC_SECRET, template=READABLE)
    assert other[Attribute.VALUE] != sent[Attribute.VALUE]
    with pytest.raises(ex.PKCS11Error):
        priv.decapsulate_key(ct[:-1], KeyType.GENERIC_SECRET, template=READABLE)


def test_kem_secret_is_sensitive_by_default(session):
    pub, _ = kem_keypair(session, 2, "kem-sens")
    _, ss = pub.encapsulate_key(KeyType.GENERIC_SECRET)
    with pytest.raises(ex.AttributeSensitive):
        ss[Attribute.VALUE]
    assert ss[Attribute.SENSITIVE] and not ss[Attribute.EXTRACTABLE]
    assert ss[Attribute.PRIVATE]


def test_kem_acvp_decapsulation_of_imported_keys(session):
    """dk imported through C_CreateObject decapsulates NIST's ciphertexts to NIST's k (the
    invalid-ciphertext cases give the implicit-rejection k)."""
    n = 0
    for g in kem_vectors():
        if g["function"] != "decapsulation":
            continue
        ckp = KEM_NAMES[g["parameterSet"]]
        for t in g["tests"][:3]:
            priv = session.create_object({
                Attribute.CLASS: ObjectClass.PRIVATE_KEY,
                Attribute.KEY_TYPE: KeyType.ML_KEM,
                Attribute.PARAMETER_SET: ckp,
                Attribute.VALUE: bytes.fromhex(t["dk"]),
                Attribute.DECAPSULATE: True,
            })
            k = priv.decapsulate_key(bytes.fromhex(t["c"]), KeyType.GENERIC_SECRET,
                                     template=READABLE)
            assert k[Attribute.VALUE].hex().upper() == t["k"].upper(), t["tcId"]
            n += 1
    assert n >= 9


def test_kem_acvp_key_checks_on_import(session):
    """FIPS 203 §7.2/§7.3 on import: NIST's failing keys are CKR_ATTRIBUTE_VALUE_INVALID."""
    seen = {True: 0, False: 0}
    for g in kem_vectors():
        if g["function"] not in ("encapsulationKeyCheck", "decapsulationKeyCheck"):
            continue
        public = g["function"] == "encapsulationKeyCheck"
        for t in g["tests"]:
            tpl = {
                Attribute.CLASS: ObjectClass.PUBLIC_KEY if public else ObjectClass.PRIVATE_KEY,
                Attribute.KEY_TYPE: KeyType.ML_KEM,
                Attribute.PARAMETER_SET: KEM_NAMES[g["parameterSet"]],
                Attribute.VALUE: bytes.fromhex(t["ek"] if public else t["dk"]),
            }
            if t["testPassed"]:
                session.create_object(tpl)
            else:
                with pytest.raises(ex.AttributeValueInvalid):
                    session.create_object(tpl)
            seen[t["testPassed"]] += 1
    assert seen[True] > 0 and seen[False] > 0


def test_kem_key_use_is_checked(session):
    pub, _ = kem_keypair(session, 1, "kem-use")
    with pytest.raises(ex.TemplateInconsistent):
        pub.encapsulate_key(KeyType.GENERIC_SECRET, template={Attribute.VALUE_LEN: 16})
    with pytest.raises(ex.PKCS11Error):
        session.generate_keypair(
            KeyType.ML_KEM, public_template={Attribute.PARAMETER_SET: 4}, label="bad-set"
        )
