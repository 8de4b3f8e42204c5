//! CTRU-Prime as an OpenSSL KEM under the real `openssl` program (OpenSSL 3.5): key generation,
//! key files (PKCS#8 / SubjectPublicKeyInfo, PEM and DER) written and read back, `pkeyutl
//! -encap/-decap`, cross-checked against pqgpu's own Rust API in both directions, and the shared
//! CTRU-Prime known-answer vectors (../shared/vectors/ctru-prime) replayed through the provider.
//! OpenSSL's `asn1parse` (which knows nothing of the provider) checks the file structure.

mod common;
use common::{Cfg, Env};
use pqgpu::ctru::{self, ParamSet};
use std::collections::HashMap;
use std::path::PathBuf;

const SETS: [(ParamSet, &str); 3] = [
    (ParamSet::Ctru653, "CTRU-Prime-653"),
    (ParamSet::Ctru761, "CTRU-Prime-761"),
    (ParamSet::Ctru1277, "CTRU-Prime-1277"),
];

/// The private arc documented in provider/README.md.
const ARC: &str = "2.25.304297920836822196705880890118715316116";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A DER element (written here, independently of the provider's encoder).
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    match content.len() {
        n if n < 0x80 => v.push(n as u8),
        n if n < 0x100 => v.extend([0x81, n as u8]),
        n => v.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    v.extend_from_slice(content);
    v
}

/// The DER of OID `ARC.i` from its dotted text (base-128 arcs).
fn oid(i: usize) -> Vec<u8> {
    let arcs: Vec<u128> = format!("{ARC}.{i}")
        .split('.')
        .map(|a| a.parse().unwrap())
        .collect();
    let mut out = vec![(arcs[0] * 40 + arcs[1]) as u8];
    for &a in &arcs[2..] {
        let mut groups = vec![(a & 0x7f) as u8];
        let mut rest = a >> 7;
        while rest > 0 {
            groups.push(0x80 | (rest & 0x7f) as u8);
            rest >>= 7;
        }
        out.extend(groups.iter().rev());
    }
    tlv(0x06, &out)
}

fn set_index(p: ParamSet) -> usize {
    SETS.iter().position(|(q, _)| *q == p).unwrap()
}

/// PKCS#8 of a raw secret key in the documented layout (expandedKey choice).
fn pkcs8(p: ParamSet, sk: &[u8]) -> Vec<u8> {
    let mut body = tlv(0x02, &[0]);
    body.extend(tlv(0x30, &oid(set_index(p) + 1)));
    body.extend(tlv(0x04, &tlv(0x04, sk)));
    tlv(0x30, &body)
}

/// The raw public key at the end of a provider-written SubjectPublicKeyInfo (DER).
fn raw_pk(e: &Env, p: ParamSet, file: &str) -> Vec<u8> {
    e.ok(
        Cfg::Pq,
        &[
            "pkey", "-pubin", "-in", file, "-outform", "DER", "-out", "raw.der",
        ],
    );
    let d = e.read("raw.der");
    let mut spki = vec![0u8];
    spki.extend_from_slice(&d[d.len() - p.public_key_len()..]);
    let mut body = tlv(0x30, &oid(set_index(p) + 1));
    body.extend(tlv(0x03, &spki));
    assert_eq!(d, tlv(0x30, &body), "{}: SPKI layout", p.name());
    d[d.len() - p.public_key_len()..].to_vec()
}

/// The raw secret key inside a provider-written PKCS#8 file.
fn raw_sk(e: &Env, p: ParamSet, file: &str) -> Vec<u8> {
    e.ok(
        Cfg::Pq,
        &["pkey", "-in", file, "-outform", "DER", "-out", "raw8.der"],
    );
    let d = e.read("raw8.der");
    let sk = d[d.len() - p.secret_key_len()..].to_vec();
    assert_eq!(d, pkcs8(p, &sk), "{}: PKCS#8 layout", p.name());
    sk
}

#[test]
fn listed_as_kem_from_pqgpu() {
    let Some(e) = Env::new("ctru-list") else {
        return;
    };
    let kems = e.ok(Cfg::Pq, &["list", "-kem-algorithms"]);
    let keys = e.ok(Cfg::Pq, &["list", "-key-managers"]);
    let encoders = e.ok(Cfg::Pq, &["list", "-encoders"]);
    let decoders = e.ok(Cfg::Pq, &["list", "-decoders"]);
    for (i, (_, name)) in SETS.iter().enumerate() {
        let oid = format!("{ARC}.{}", i + 1);
        for (what, text) in [("kem", &kems), ("keymgmt", &keys)] {
            assert!(
                text.lines()
                    .any(|l| l.contains(name) && l.contains(&oid) && l.contains("@ pqgpu")),
                "{what} {name} not listed:\n{text}"
            );
        }
        for (what, text, n) in [("encoder", &encoders, 4), ("decoder", &decoders, 2)] {
            let c = text
                .lines()
                .filter(|l| l.contains(name) && l.contains("@ pqgpu"))
                .count();
            assert_eq!(c, n, "{what}s of {name}:\n{text}");
        }
    }
}

#[test]
fn genpkey_pubout_encap_decap_round_trip() {
    let Some(e) = Env::new("ctru-trip") else {
        return;
    };
    for (p, name) in SETS {
        e.clear_trace();
        e.ok(Cfg::Pq, &["genpkey", "-algorithm", name, "-out", "k.pem"]);
        e.ok(
            Cfg::Pq,
            &["pkey", "-in", "k.pem", "-pubout", "-out", "pub.pem"],
        );
        assert!(String::from_utf8(e.read("k.pem"))
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(String::from_utf8(e.read("pub.pem"))
            .unwrap()
            .starts_with("-----BEGIN PUBLIC KEY-----\n"));
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct", "-secret", "ss1",
            ],
        );
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-decap", "-inkey", "k.pem", "-in", "ct", "-secret", "ss2",
            ],
        );
        assert_eq!(e.read("ct").len(), p.ciphertext_len(), "{name}: ct length");
        assert_eq!(e.read("ss1").len(), 32);
        assert_eq!(e.read("ss1"), e.read("ss2"), "{name}: secrets differ");
        for op in ["keygen", "encaps", "decaps"] {
            assert_eq!(
                e.traced(&format!("{op} {name} ")),
                1,
                "{name}: pqgpu did not {op}"
            );
        }
        // Another encapsulation gives another ciphertext and secret.
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct2", "-secret", "ss3",
            ],
        );
        assert_ne!(e.read("ct"), e.read("ct2"));
        assert_ne!(e.read("ss1"), e.read("ss3"));
        // A flipped ciphertext bit: implicit rejection, a different secret (still success).
        let mut bad = e.read("ct");
        bad[10] ^= 4;
        e.write("bad.ct", &bad);
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-decap", "-inkey", "k.pem", "-in", "bad.ct", "-secret", "ssbad",
            ],
        );
        assert_ne!(
            e.read("ssbad"),
            e.read("ss1"),
            "{name}: tampered ct accepted"
        );
        // A ciphertext of the wrong length is refused.
        e.write("short.ct", &bad[1..]);
        e.fails(
            Cfg::Pq,
            &[
                "pkeyutl", "-decap", "-inkey", "k.pem", "-in", "short.ct", "-secret", "x",
            ],
        );
        // The key checks out (pairwise), in PEM and DER, and DER round-trips to the same PEM.
        e.ok(Cfg::Pq, &["pkey", "-in", "k.pem", "-check", "-noout"]);
        e.ok(
            Cfg::Pq,
            &["pkey", "-in", "k.pem", "-outform", "DER", "-out", "k.der"],
        );
        e.ok(
            Cfg::Pq,
            &["pkey", "-inform", "DER", "-in", "k.der", "-out", "k2.pem"],
        );
        assert_eq!(e.read("k.pem"), e.read("k2.pem"), "{name}: DER round trip");
        e.ok(
            Cfg::Pq,
            &[
                "pkey", "-pubin", "-in", "pub.pem", "-outform", "DER", "-out", "pub.der",
            ],
        );
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-encap", "-pubin", "-keyform", "DER", "-inkey", "pub.der", "-out",
                "ct3", "-secret", "ss4",
            ],
        );
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-decap", "-keyform", "DER", "-inkey", "k.der", "-in", "ct3", "-secret",
                "ss5",
            ],
        );
        assert_eq!(e.read("ss4"), e.read("ss5"));
        // OpenSSL alone (no provider) parses the files and shows the private OID.
        let i = set_index(p) + 1;
        for f in ["k.pem", "pub.pem"] {
            let text = e.ok(Cfg::Def, &["asn1parse", "-in", f]);
            assert!(text.contains(&format!(":{ARC}.{i}")), "{f}:\n{text}");
        }
        // An encrypted PKCS#8 is not offered: refused rather than written in the clear.
        e.fails(
            Cfg::Pq,
            &[
                "pkey", "-in", "k.pem", "-aes256", "-passout", "pass:x", "-out", "enc.pem",
            ],
        );
        // Another set's key does not load as this one, and the default provider cannot use it.
        e.fails(Cfg::Def, &["pkey", "-in", "k.pem", "-noout"]);
    }
}

#[test]
fn cross_checked_with_pqgpu_api() {
    let Some(e) = Env::new("ctru-cross") else {
        return;
    };
    for (p, name) in SETS {
        e.ok(Cfg::Pq, &["genpkey", "-algorithm", name, "-out", "k.pem"]);
        e.ok(
            Cfg::Pq,
            &["pkey", "-in", "k.pem", "-pubout", "-out", "pub.pem"],
        );
        let pk = raw_pk(&e, p, "pub.pem");
        let sk = raw_sk(&e, p, "k.pem");
        // openssl encapsulates, pqgpu's API decapsulates.
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-encap", "-pubin", "-inkey", "pub.pem", "-out", "ct", "-secret", "ss",
            ],
        );
        let mut ss = [0u8; 32];
        ctru::decaps(p, &sk, &e.read("ct"), &mut ss).unwrap();
        assert_eq!(
            ss.to_vec(),
            e.read("ss"),
            "{name}: pqgpu decaps of openssl's ct"
        );
        // pqgpu's API encapsulates, openssl decapsulates.
        let mut ct = vec![0u8; p.ciphertext_len()];
        let mut ss2 = [0u8; 32];
        ctru::encaps(p, &pk, &mut ct, &mut ss2).unwrap();
        e.write("api.ct", &ct);
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-decap", "-inkey", "k.pem", "-in", "api.ct", "-secret", "ss.api",
            ],
        );
        assert_eq!(
            e.read("ss.api"),
            ss2.to_vec(),
            "{name}: openssl decaps of pqgpu's ct"
        );
        // A key pair made by pqgpu's API, written as PKCS#8 here, loads and decapsulates.
        let mut pk3 = vec![0u8; p.public_key_len()];
        let mut sk3 = vec![0u8; p.secret_key_len()];
        ctru::keygen(p, &mut pk3, &mut sk3).unwrap();
        e.write("api.der", &pkcs8(p, &sk3));
        e.ok(
            Cfg::Pq,
            &[
                "pkey", "-inform", "DER", "-in", "api.der", "-pubout", "-out", "api.pub",
            ],
        );
        assert_eq!(
            raw_pk(&e, p, "api.pub"),
            pk3,
            "{name}: public key of an imported sk"
        );
        e.ok(
            Cfg::Pq,
            &[
                "pkeyutl", "-encap", "-pubin", "-inkey", "api.pub", "-out", "ct4", "-secret", "ss4",
            ],
        );
        let mut ss4 = [0u8; 32];
        ctru::decaps(p, &sk3, &e.read("ct4"), &mut ss4).unwrap();
        assert_eq!(ss4.to_vec(), e.read("ss4"));
    }
}

fn vectors() -> PathBuf {
    match std::env::var_os("PQGPU_VECTORS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/vectors"),
    }
    .join("ctru-prime")
}

fn cases(name: &str) -> Vec<HashMap<String, String>> {
    let path = vectors().join(format!("{}.rsp", name.to_lowercase()));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (set PQGPU_VECTORS_DIR)", path.display()));
    text.split("\n\n")
        .map(|b| {
            b.lines()
                .filter(|l| !l.starts_with('#') && l.contains('='))
                .map(|l| {
                    let (k, v) = l.split_once('=').unwrap();
                    (k.trim().to_string(), v.trim().to_string())
                })
                .collect::<HashMap<_, _>>()
        })
        .filter(|c| c.contains_key("count"))
        .collect()
}

/// Known answers through the provider: genpkey from d || z gives the recorded keys, encap with
/// ikme = e the recorded ciphertext and secret, decap the recorded secrets (the tampered cases'
/// the implicit-rejection key of the pqgpu decision), also from the recorded sk as PKCS#8.
#[test]
fn known_answers_through_the_provider() {
    let Some(e) = Env::new("ctru-kat") else {
        return;
    };
    // Plain cases, the first tampered ones (LSB and MSB of c_0, MSB of the tail), tampered
    // cases whose decryption yields another message in some set (19, 29, 34), and count 99
    // (only the padding bit flipped: must be rejected).
    let picks = ["0", "1", "4", "9", "14", "19", "29", "34", "99"];
    for (p, name) in SETS {
        let all = cases(name);
        assert_eq!(all.len(), 100, "{name}: cases in the vector file");
        for case in all.iter().filter(|c| picks.contains(&c["count"].as_str())) {
            let f = |k: &str| unhex(&case[k]);
            let count = &case["count"];
            let seed = format!("hexseed:{}{}", case["kg_rand0"], case["kg_rand1"]);
            e.ok(
                Cfg::Pq,
                &[
                    "genpkey",
                    "-algorithm",
                    name,
                    "-pkeyopt",
                    &seed,
                    "-out",
                    "k.pem",
                ],
            );
            e.ok(
                Cfg::Pq,
                &["pkey", "-in", "k.pem", "-pubout", "-out", "pub.pem"],
            );
            assert!(raw_sk(&e, p, "k.pem") == f("sk"), "{name} {count}: sk");
            assert!(raw_pk(&e, p, "pub.pem") == f("pk"), "{name} {count}: pk");
            let ikme = format!("hexikme:{}", case["enc_rand0"]);
            e.ok(
                Cfg::Pq,
                &[
                    "pkeyutl", "-encap", "-pubin", "-inkey", "pub.pem", "-pkeyopt", &ikme, "-out",
                    "ct", "-secret", "ss",
                ],
            );
            assert!(e.read("ct") == f("ct"), "{name} {count}: ct");
            assert_eq!(e.read("ss"), f("ss"), "{name} {count}: ss");
            // Decapsulation with the recorded sk imported as PKCS#8 (not from the seed).
            e.write("kat.der", &pkcs8(p, &f("sk")));
            e.write("kat.ct", &f("ct"));
            e.ok(
                Cfg::Pq,
                &[
                    "pkeyutl", "-decap", "-keyform", "DER", "-inkey", "kat.der", "-in", "kat.ct",
                    "-secret", "ssd",
                ],
            );
            assert_eq!(e.read("ssd"), f("ss_dec"), "{name} {count}: ss_dec");
            if case.contains_key("ct_tampered") {
                e.write("t.ct", &f("ct_tampered"));
                e.ok(
                    Cfg::Pq,
                    &[
                        "pkeyutl", "-decap", "-keyform", "DER", "-inkey", "kat.der", "-in", "t.ct",
                        "-secret", "sst",
                    ],
                );
                assert_eq!(
                    e.read("sst"),
                    f("ss_reject_intended"),
                    "{name} {count}: rejection key"
                );
                assert_ne!(e.read("sst"), f("ss_reject_reference"));
            }
        }
    }
}

/// Key files: the `seed` choice of the private key loads (and equals the key genpkey makes from
/// that seed); a key of the wrong length for its OID, or another set's OID on a key, do not
/// load. (Bytes after the DER object are never read: OpenSSL reads one object from a file.)
#[test]
fn key_files_are_checked() {
    let Some(e) = Env::new("ctru-files") else {
        return;
    };
    let seed: Vec<u8> = (0..64u8).collect();
    for (p, name) in SETS {
        let oid_p = tlv(0x30, &oid(set_index(p) + 1));
        // PKCS#8 with the seed choice [0].
        let mut body = tlv(0x02, &[0]);
        body.extend(&oid_p);
        body.extend(tlv(0x04, &tlv(0x80, &seed)));
        e.write("seed.der", &tlv(0x30, &body));
        e.ok(
            Cfg::Pq,
            &[
                "pkey",
                "-inform",
                "DER",
                "-in",
                "seed.der",
                "-out",
                "from-seed.pem",
            ],
        );
        let hexseed = format!(
            "hexseed:{}",
            seed.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        e.ok(
            Cfg::Pq,
            &[
                "genpkey",
                "-algorithm",
                name,
                "-pkeyopt",
                &hexseed,
                "-out",
                "gen.pem",
            ],
        );
        assert_eq!(
            e.read("from-seed.pem"),
            e.read("gen.pem"),
            "{name}: seed choice"
        );
        let sk = raw_sk(&e, p, "gen.pem");
        // Wrong lengths.
        e.write("short.der", &pkcs8(p, &sk[..sk.len() - 1]));
        e.fails(
            Cfg::Pq,
            &["pkey", "-inform", "DER", "-in", "short.der", "-noout"],
        );
        let mut bits = vec![0u8];
        bits.extend(vec![1u8; p.public_key_len() + 1]);
        let mut spki = oid_p.clone();
        spki.extend(tlv(0x03, &bits));
        e.write("long.pub", &tlv(0x30, &spki));
        e.fails(
            Cfg::Pq,
            &[
                "pkey", "-pubin", "-inform", "DER", "-in", "long.pub", "-noout",
            ],
        );
        // This set's key under another set's OID.
        let other = (set_index(p) + 1) % 3;
        let mut body = tlv(0x02, &[0]);
        body.extend(tlv(0x30, &oid(other + 1)));
        body.extend(tlv(0x04, &tlv(0x04, &sk)));
        e.write("other.der", &tlv(0x30, &body));
        e.fails(
            Cfg::Pq,
            &["pkey", "-inform", "DER", "-in", "other.der", "-noout"],
        );
    }
}

/// `openssl speed` drives the KEM inside async jobs: every counted encapsulation and
/// decapsulation went through pqgpu, on helper threads, and concurrent jobs' requests ran
/// together in a dispatcher batch.
#[test]
fn speed_with_async_jobs() {
    let Some(e) = Env::new("ctru-speed") else {
        return;
    };
    let o = e.ok_with_stderr(
        Cfg::Pq,
        &[
            "speed",
            "-seconds",
            "1",
            "-elapsed",
            "-async_jobs",
            "64",
            "-propquery",
            "provider=pqgpu",
            "CTRU-Prime-653",
        ],
    );
    let row = o
        .lines()
        .find(|l| l.trim_start().starts_with("CTRU-Prime-653 "))
        .unwrap_or_else(|| panic!("{o}"));
    let rates: Vec<f64> = row
        .split_whitespace()
        .skip(4)
        .filter_map(|v| v.parse().ok())
        .collect();
    assert!(rates.len() == 3 && rates.iter().all(|&r| r > 0.0), "{row}");
    let trace = std::fs::read_to_string(e.path("trace.log")).unwrap();
    for op in ["encaps", "decaps"] {
        let on_helpers = e.traced(&format!("{op} CTRU-Prime-653 Cpu helper"));
        assert!(on_helpers > 0, "{op}: nothing on helper threads");
        let max = trace
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("batch {op} CTRU-Prime-653 Cpu n=")))
            .map(|n| n.parse::<usize>().unwrap())
            .max()
            .unwrap_or(0);
        println!("{op}: largest batch {max}");
        assert!(max > 1, "{op}: no batch of more than one request");
    }
}
