//! FIPS 205 Table 2: the twelve parameter sets, and the sizes that follow from them.

/// Winternitz parameter lg_w (all sets): w = 16.
pub const LG_W: usize = 4;
/// w = 2^lg_w.
pub const W: u32 = 1 << LG_W;
/// len_2: checksum digits (3 for lg_w = 4 and every n of Table 2).
pub const LEN2: usize = 3;
/// The largest n (bytes of a hash value), for fixed-size buffers.
pub const MAX_N: usize = 32;

/// An SLH-DSA parameter set. The order is PKCS#11 3.2's CKP_SLH_DSA_* (value 1..12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamSet {
    Sha2_128s,
    Shake128s,
    Sha2_128f,
    Shake128f,
    Sha2_192s,
    Shake192s,
    Sha2_192f,
    Shake192f,
    Sha2_256s,
    Shake256s,
    Sha2_256f,
    Shake256f,
}

/// The numbers of one row of FIPS 205 Table 2 (and the hash family of the set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Bytes of a hash value (security parameter).
    pub n: usize,
    /// Total hypertree height.
    pub h: usize,
    /// Hypertree layers.
    pub d: usize,
    /// Height of one XMSS tree (h' = h / d).
    pub hp: usize,
    /// Height of a FORS tree.
    pub a: usize,
    /// Number of FORS trees.
    pub k: usize,
    /// Bytes of H_msg's output.
    pub m: usize,
    /// SHA2 family (FIPS 205 section 11.2) rather than SHAKE (section 11.1).
    pub sha2: bool,
}

impl ParamSet {
    pub const ALL: [ParamSet; 12] = [
        ParamSet::Sha2_128s,
        ParamSet::Shake128s,
        ParamSet::Sha2_128f,
        ParamSet::Shake128f,
        ParamSet::Sha2_192s,
        ParamSet::Shake192s,
        ParamSet::Sha2_192f,
        ParamSet::Shake192f,
        ParamSet::Sha2_256s,
        ParamSet::Shake256s,
        ParamSet::Sha2_256f,
        ParamSet::Shake256f,
    ];

    /// Position in [`ParamSet::ALL`] (PKCS#11's CKP value minus 1).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// FIPS 205's name, e.g. "SLH-DSA-SHA2-128s" (also ACVP's `parameterSet`).
    pub const fn name(self) -> &'static str {
        match self {
            ParamSet::Sha2_128s => "SLH-DSA-SHA2-128s",
            ParamSet::Shake128s => "SLH-DSA-SHAKE-128s",
            ParamSet::Sha2_128f => "SLH-DSA-SHA2-128f",
            ParamSet::Shake128f => "SLH-DSA-SHAKE-128f",
            ParamSet::Sha2_192s => "SLH-DSA-SHA2-192s",
            ParamSet::Shake192s => "SLH-DSA-SHAKE-192s",
            ParamSet::Sha2_192f => "SLH-DSA-SHA2-192f",
            ParamSet::Shake192f => "SLH-DSA-SHAKE-192f",
            ParamSet::Sha2_256s => "SLH-DSA-SHA2-256s",
            ParamSet::Shake256s => "SLH-DSA-SHAKE-256s",
            ParamSet::Sha2_256f => "SLH-DSA-SHA2-256f",
            ParamSet::Shake256f => "SLH-DSA-SHAKE-256f",
        }
    }

    /// The set with FIPS 205's name.
    pub fn from_name(name: &str) -> Option<ParamSet> {
        ParamSet::ALL.into_iter().find(|p| p.name() == name)
    }

    /// FIPS 205 Table 2.
    pub const fn params(self) -> Params {
        let (n, h, d, a, k, m) = match self {
            ParamSet::Sha2_128s | ParamSet::Shake128s => (16, 63, 7, 12, 14, 30),
            ParamSet::Sha2_128f | ParamSet::Shake128f => (16, 66, 22, 6, 33, 34),
            ParamSet::Sha2_192s | ParamSet::Shake192s => (24, 63, 7, 14, 17, 39),
            ParamSet::Sha2_192f | ParamSet::Shake192f => (24, 66, 22, 8, 33, 42),
            ParamSet::Sha2_256s | ParamSet::Shake256s => (32, 64, 8, 14, 22, 47),
            ParamSet::Sha2_256f | ParamSet::Shake256f => (32, 68, 17, 9, 35, 49),
        };
        let sha2 = matches!(
            self,
            ParamSet::Sha2_128s
                | ParamSet::Sha2_128f
                | ParamSet::Sha2_192s
                | ParamSet::Sha2_192f
                | ParamSet::Sha2_256s
                | ParamSet::Sha2_256f
        );
        Params {
            n,
            h,
            d,
            hp: h / d,
            a,
            k,
            m,
            sha2,
        }
    }

    pub const fn n(self) -> usize {
        self.params().n
    }

    /// PK.seed || PK.root.
    pub const fn public_key_len(self) -> usize {
        2 * self.n()
    }

    /// SK.seed || SK.prf || PK.seed || PK.root.
    pub const fn secret_key_len(self) -> usize {
        4 * self.n()
    }

    /// keygen's seed: SK.seed || SK.prf || PK.seed.
    pub const fn seed_len(self) -> usize {
        3 * self.n()
    }

    pub const fn signature_len(self) -> usize {
        self.params().sig_len()
    }
}

impl Params {
    /// len_1 = 8n / lg_w message digits of WOTS+.
    pub const fn len1(&self) -> usize {
        8 * self.n / LG_W
    }

    /// len = len_1 + len_2 WOTS+ chains.
    pub const fn wots_len(&self) -> usize {
        self.len1() + LEN2
    }

    /// Bytes of a WOTS+ signature.
    pub const fn wots_sig_len(&self) -> usize {
        self.wots_len() * self.n
    }

    /// Bytes of an XMSS signature (WOTS+ signature and h' authentication nodes).
    pub const fn xmss_sig_len(&self) -> usize {
        (self.wots_len() + self.hp) * self.n
    }

    /// Bytes of a FORS signature (k secret values and k authentication paths of a nodes).
    pub const fn fors_sig_len(&self) -> usize {
        self.k * (self.a + 1) * self.n
    }

    /// Bytes of a signature: R, SIG_FORS, SIG_HT.
    pub const fn sig_len(&self) -> usize {
        self.n + self.fors_sig_len() + self.d * self.xmss_sig_len()
    }

    /// Bytes of the digest's parts (FIPS 205 Alg. 19 lines 11-13): md, idx_tree, idx_leaf.
    pub const fn md_len(&self) -> usize {
        (self.k * self.a).div_ceil(8)
    }

    pub const fn tree_idx_len(&self) -> usize {
        (self.h - self.hp).div_ceil(8)
    }

    pub const fn leaf_idx_len(&self) -> usize {
        self.hp.div_ceil(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 205 Table 2's sizes (and the contract's table) follow from the parameters.
    #[test]
    fn sizes_match_table_2() {
        let want = [
            (32, 64, 7856),
            (32, 64, 7856),
            (32, 64, 17088),
            (32, 64, 17088),
            (48, 96, 16224),
            (48, 96, 16224),
            (48, 96, 35664),
            (48, 96, 35664),
            (64, 128, 29792),
            (64, 128, 29792),
            (64, 128, 49856),
            (64, 128, 49856),
        ];
        for (p, w) in ParamSet::ALL.into_iter().zip(want) {
            assert_eq!(
                (p.public_key_len(), p.secret_key_len(), p.signature_len()),
                w,
                "{}",
                p.name()
            );
            let q = p.params();
            assert_eq!(q.md_len() + q.tree_idx_len() + q.leaf_idx_len(), q.m);
            assert_eq!(q.hp * q.d, q.h);
        }
    }
}
