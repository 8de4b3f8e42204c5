//! ADRS, the 32-byte hash address of FIPS 205 section 4.2, and its 22-byte compressed form
//! ADRS^c used by the SHA2 sets (section 11.2).
//!
//! Layout (big-endian words): layer (bytes 0-3), tree address (4-15), type (16-19), key pair
//! (20-23), chain address or tree height (24-27), hash address or tree index (28-31).

/// The address types of FIPS 205 section 4.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum AdrsType {
    WotsHash = 0,
    WotsPk = 1,
    Tree = 2,
    ForsTree = 3,
    ForsRoots = 4,
    WotsPrf = 5,
    ForsPrf = 6,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Adrs(pub [u8; 32]);

impl Adrs {
    fn set_word(&mut self, at: usize, v: u32) {
        self.0[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    fn word(&self, at: usize) -> u32 {
        u32::from_be_bytes(self.0[at..at + 4].try_into().expect("4 bytes"))
    }

    pub fn set_layer_address(&mut self, l: u32) {
        self.set_word(0, l);
    }

    /// The tree address is 12 bytes; every parameter set's fits in the low 8.
    pub fn set_tree_address(&mut self, t: u64) {
        self.0[4..8].fill(0);
        self.0[8..16].copy_from_slice(&t.to_be_bytes());
    }

    /// Sets the type and clears the last 12 bytes (setTypeAndClear).
    pub fn set_type_and_clear(&mut self, t: AdrsType) {
        self.set_word(16, t as u32);
        self.0[20..32].fill(0);
    }

    pub fn set_key_pair_address(&mut self, i: u32) {
        self.set_word(20, i);
    }

    pub fn key_pair_address(&self) -> u32 {
        self.word(20)
    }

    pub fn set_chain_address(&mut self, i: u32) {
        self.set_word(24, i);
    }

    pub fn set_tree_height(&mut self, z: u32) {
        self.set_word(24, z);
    }

    pub fn set_hash_address(&mut self, i: u32) {
        self.set_word(28, i);
    }

    pub fn set_tree_index(&mut self, i: u32) {
        self.set_word(28, i);
    }

    pub fn tree_index(&self) -> u32 {
        self.word(28)
    }

    /// ADRS^c: layer (1 byte), tree address (low 8 bytes), type (1 byte), the last 12 bytes.
    pub fn compressed(&self) -> [u8; 22] {
        let mut c = [0u8; 22];
        c[0] = self.0[3];
        c[1..9].copy_from_slice(&self.0[8..16]);
        c[9] = self.0[19];
        c[10..22].copy_from_slice(&self.0[20..32]);
        c
    }
}
