//! The little DER and PEM this provider writes and reads for its private-OID keys
//! (CTRU-Prime): SubjectPublicKeyInfo and PKCS#8 PrivateKeyInfo, definite lengths only,
//! parsed strictly (minimal lengths, nothing trailing).

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
/// `[0] IMPLICIT OCTET STRING`: the seed choice of the private key.
const SEED_TAG: u8 = 0x80;

/// The DER content octets of an OID given as arcs (the first two arcs combined, base 128).
pub fn oid_content(arcs: &[u128]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |mut v: u128| {
        let mut tmp = vec![(v & 0x7f) as u8];
        v >>= 7;
        while v > 0 {
            tmp.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        out.extend(tmp.iter().rev());
    };
    push(arcs[0] * 40 + arcs[1]);
    for &a in &arcs[2..] {
        push(a);
    }
    out
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

fn algorithm(oid: &[u8]) -> Vec<u8> {
    tlv(SEQUENCE, &tlv(OID, oid))
}

/// SubjectPublicKeyInfo { algorithm { oid } (no parameters), BIT STRING pk }.
pub fn spki(oid: &[u8], pk: &[u8]) -> Vec<u8> {
    let mut bits = vec![0u8];
    bits.extend_from_slice(pk);
    let mut body = algorithm(oid);
    body.extend(tlv(BIT_STRING, &bits));
    tlv(SEQUENCE, &body)
}

/// PrivateKeyInfo { 0, algorithm { oid }, OCTET STRING { OCTET STRING sk } }: the private key
/// is the `expandedKey` choice (see `PrivateKey`).
pub fn pkcs8(oid: &[u8], sk: &[u8]) -> zeroize::Zeroizing<Vec<u8>> {
    let inner = zeroize::Zeroizing::new(tlv(OCTET_STRING, sk));
    let wrapped = zeroize::Zeroizing::new(tlv(OCTET_STRING, &inner));
    let mut body = zeroize::Zeroizing::new(tlv(INTEGER, &[0]));
    body.extend(algorithm(oid));
    body.extend_from_slice(&wrapped);
    zeroize::Zeroizing::new(tlv(SEQUENCE, &body))
}

/// One element: (tag, content, rest). Strict DER lengths.
fn next(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let k = (first & 0x7f) as usize;
        if k == 0 || k > size_of::<usize>() || rest.len() < k || rest[0] == 0 {
            return None;
        }
        let len = rest[..k].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        if len < 0x80 {
            return None; // not minimal
        }
        (len, &rest[k..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// Exactly one element of `tag` filling `input`.
fn only(input: &[u8], tag: u8) -> Option<&[u8]> {
    match next(input)? {
        (t, c, []) if t == tag => Some(c),
        _ => None,
    }
}

/// SubjectPublicKeyInfo: (oid content, public key bytes).
pub fn parse_spki(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let body = only(der, SEQUENCE)?;
    let (t, alg, rest) = next(body)?;
    if t != SEQUENCE {
        return None;
    }
    let oid = only(alg, OID)?;
    let bits = only(rest, BIT_STRING)?;
    match bits.split_first()? {
        (0, pk) => Some((oid, pk)),
        _ => None,
    }
}

/// The private key inside PKCS#8: `seed [0] IMPLICIT OCTET STRING` or `expandedKey OCTET STRING`.
#[derive(Debug, PartialEq, Eq)]
pub enum PrivateKey<'a> {
    Seed(&'a [u8]),
    Expanded(&'a [u8]),
}

/// PrivateKeyInfo (version 0, no attributes): (oid content, private key).
pub fn parse_pkcs8(der: &[u8]) -> Option<(&[u8], PrivateKey<'_>)> {
    let body = only(der, SEQUENCE)?;
    let (t, version, rest) = next(body)?;
    if t != INTEGER || version != [0] {
        return None;
    }
    let (t, alg, rest) = next(rest)?;
    if t != SEQUENCE {
        return None;
    }
    let oid = only(alg, OID)?;
    let key = only(rest, OCTET_STRING)?;
    let pk = match next(key)? {
        (SEED_TAG, seed, []) => PrivateKey::Seed(seed),
        (OCTET_STRING, sk, []) => PrivateKey::Expanded(sk),
        _ => return None,
    };
    Some((oid, pk))
}

/// PEM with the given label, 64 base64 characters a line.
pub fn pem(label: &str, der: &[u8]) -> zeroize::Zeroizing<Vec<u8>> {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = zeroize::Zeroizing::new(Vec::with_capacity(der.len() * 4 / 3 + 100));
    text.extend_from_slice(format!("-----BEGIN {label}-----\n").as_bytes());
    let mut col = 0;
    for chunk in der.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            let c = if i <= chunk.len() {
                B64[(v >> (18 - 6 * i) & 63) as usize]
            } else {
                b'='
            };
            text.push(c);
        }
        col += 4;
        if col == 64 {
            text.push(b'\n');
            col = 0;
        }
    }
    if col != 0 {
        text.push(b'\n');
    }
    text.extend_from_slice(format!("-----END {label}-----\n").as_bytes());
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oid_content_is_x690() {
        // 1.2.840.113549 = 2a 86 48 86 f7 0d (X.690's example RSA arc).
        assert_eq!(
            oid_content(&[1, 2, 840, 113549]),
            [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d]
        );
    }

    #[test]
    fn round_trips_and_strictness() {
        let oid = oid_content(&[2, 25, 1, 2]);
        let pk: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let der = spki(&oid, &pk);
        assert_eq!(parse_spki(&der), Some((&oid[..], &pk[..])));
        let sk: Vec<u8> = (0..1500u32).map(|i| (i * 3) as u8).collect();
        let der8 = pkcs8(&oid, &sk);
        assert_eq!(
            parse_pkcs8(&der8),
            Some((&oid[..], PrivateKey::Expanded(&sk[..])))
        );
        // Trailing bytes, truncation, a non-minimal length: refused.
        let mut long = der.clone();
        long.push(0);
        assert!(parse_spki(&long).is_none());
        assert!(parse_spki(&der[..der.len() - 1]).is_none());
        assert!(parse_pkcs8(&der).is_none());
        assert!(next(&[0x04, 0x81, 0x05, 1, 2, 3, 4, 5]).is_none());
        // The seed choice.
        let seed = [7u8; 64];
        let mut body = tlv(INTEGER, &[0]);
        body.extend(algorithm(&oid));
        body.extend(tlv(OCTET_STRING, &tlv(SEED_TAG, &seed)));
        let d = tlv(SEQUENCE, &body);
        assert_eq!(
            parse_pkcs8(&d),
            Some((&oid[..], PrivateKey::Seed(&seed[..])))
        );
    }

    #[test]
    fn pem_matches_known_base64() {
        let p = pem("X", b"foobar!");
        assert_eq!(
            &p[..],
            b"-----BEGIN X-----\nZm9vYmFyIQ==\n-----END X-----\n"
        );
    }
}
