//! A chunk's messages as the kernels read them: per item an 8-byte aligned region holding a
//! 64-byte tr slot then M' (FIPS 204 Alg. 2/3 line 10, Alg. 4/5), or mu itself for an
//! external mu; the kernels fill the slot with tr and hash the region into mu. Shared by
//! signing and verification, so both compute mu on the device. Round 3's 32-byte tr takes the
//! slot's last 32 bytes, so tr || M' stays contiguous; its M' is the message alone.

use crate::gpu::launch::Dev;
use crate::gpu::worker::Worker;
use crate::mldsa::{Message, Variant};
use cudarc::driver::DriverError;

/// Length marker for an external mu (the region holds mu itself).
pub const EXTERNAL_MU: u32 = u32::MAX;

/// Bytes of M' (0 for an external mu, which takes the tr slot instead).
fn m_prime_len(m: &Message<'_>) -> usize {
    match *m {
        Message::Pure { ctx, msg } => 2 + ctx.len() + msg.len(),
        Message::PreHashed { ctx, digest, .. } => 2 + ctx.len() + 11 + digest.len(),
        Message::Internal(m) => m.len(),
        Message::Mu(_) => 0,
    }
}

/// Writes one region: the tr slot (or mu) then M'.
fn write_region(m: &Message<'_>, r: &mut [u8]) {
    let (head, tail) = r.split_at_mut(64);
    match *m {
        Message::Pure { ctx, msg } => {
            tail[0] = 0;
            tail[1] = ctx.len() as u8;
            tail[2..2 + ctx.len()].copy_from_slice(ctx);
            tail[2 + ctx.len()..2 + ctx.len() + msg.len()].copy_from_slice(msg);
        }
        Message::PreHashed { ctx, ph, digest } => {
            tail[0] = 1;
            tail[1] = ctx.len() as u8;
            tail[2..2 + ctx.len()].copy_from_slice(ctx);
            let o = 2 + ctx.len();
            tail[o..o + 11].copy_from_slice(&ph.oid_der());
            tail[o + 11..o + 11 + digest.len()].copy_from_slice(digest);
        }
        Message::Internal(mp) => tail[..mp.len()].copy_from_slice(mp),
        Message::Mu(mu) => head.copy_from_slice(mu),
    }
}

/// The regions of one chunk's messages, laid out back to back.
pub struct Regions {
    variant: Variant,
    offs: Vec<u64>,
    total: usize,
}

/// The message in the form its scheme hashes after tr (`Variant::message`); the chunk's
/// items were checked with that same function before they got here.
fn hashed<'m>(v: Variant, m: &Message<'m>) -> Message<'m> {
    v.message(m).expect("message checked before staging")
}

/// Device pointers of a chunk's staged regions.
pub struct DeviceRegions {
    pub arena: Dev<u8>,
    pub off: Dev<u64>,
    pub len: Dev<u32>,
}

impl Regions {
    /// Offsets 8-byte aligned and regions sized to whole lanes (the kernels read u64 lanes).
    /// Every message must pass `variant.message` (the chunk's own checks).
    pub fn of<'m>(variant: Variant, msgs: impl Iterator<Item = &'m Message<'m>>) -> Regions {
        let mut offs = Vec::new();
        let mut total = 0usize;
        for m in msgs {
            offs.push(total as u64);
            total += (64 + m_prime_len(&hashed(variant, m))).div_ceil(8) * 8;
        }
        Regions {
            variant,
            offs,
            total,
        }
    }

    /// Host staging bytes: offsets (u64), lengths (u32), then the regions.
    pub fn host_bytes(&self) -> usize {
        self.offs.len() * 12 + self.total
    }

    /// Writes the messages (in the order given to `of`) into `h` (`host_bytes` long): the
    /// offsets (u64), the lengths (u32, `EXTERNAL_MU` for a mu), then the regions.
    pub fn write<'m>(&self, msgs: impl Iterator<Item = &'m Message<'m>>, h: &mut [u8]) {
        let m = self.offs.len();
        let (off_h, rest) = h.split_at_mut(m * 8);
        let (len_h, arena_h) = rest.split_at_mut(m * 4);
        let mut rest = &mut arena_h[..self.total];
        for (j, msg) in msgs.enumerate() {
            let msg = &hashed(self.variant, msg);
            let len = m_prime_len(msg);
            let (r, tail) = rest.split_at_mut((64 + len).div_ceil(8) * 8);
            write_region(msg, r);
            rest = tail;
            off_h[8 * j..8 * j + 8].copy_from_slice(&self.offs[j].to_le_bytes());
            let ml = if matches!(msg, Message::Mu(_)) {
                EXTERNAL_MU
            } else {
                len as u32
            };
            len_h[4 * j..4 * j + 4].copy_from_slice(&ml.to_le_bytes());
        }
    }

    /// Writes the messages as `write` does and queues their copy to the device; `h` must stay
    /// untouched until the worker's `sync`.
    pub fn stage<'m>(
        &self,
        w: &mut Worker,
        msgs: impl Iterator<Item = &'m Message<'m>>,
        h: &mut [u8],
    ) -> Result<DeviceRegions, DriverError> {
        self.write(msgs, h);
        let m = self.offs.len();
        let (off_h, rest) = h.split_at_mut(m * 8);
        let (len_h, arena_h) = rest.split_at_mut(m * 4);
        let d = DeviceRegions {
            arena: w.dev("msg_arena", self.total.max(8))?,
            off: w.dev("msg_off", m)?,
            len: w.dev("msg_len", m)?,
        };
        w.htod(d.off, off_h)?;
        w.htod(d.len, len_h)?;
        w.htod(d.arena, &arena_h[..self.total])?;
        Ok(d)
    }
}
