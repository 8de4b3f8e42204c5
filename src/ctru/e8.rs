//! The scalable E8 lattice code: the [8,4,4] extended Hamming code over coordinate pairs, scaled by
//! q2/2 (spec section 5.5). Decoding is constant time: costs and choices are computed with masks,
//! never with secret-dependent branches or table indexes. The tie-breaks are those of the
//! reference and matter for bit-exact decapsulation of malformed ciphertexts.

/// -1 if a < b else 0 (|a - b| < 2^31).
#[inline(always)]
fn lt_mask(a: i32, b: i32) -> i32 {
    (a - b) >> 31
}

/// mask ? a : b for mask in {0, -1}.
#[inline(always)]
fn select(mask: i32, a: i32, b: i32) -> i32 {
    b ^ (mask & (a ^ b))
}

/// The 8-bit codeword of a nibble: bit j is the message bit of coefficient j of the block.
#[inline(always)]
pub(crate) fn encode(nibble: u8) -> u8 {
    let bit = |k: u32| 0u8.wrapping_sub((nibble >> k) & 1);
    (bit(0) & 0x55) ^ (bit(1) & 0x0F) ^ (bit(2) & 0x3C) ^ (bit(3) & 0xF0)
}

/// Decodes one block x (coordinates in [0, q2)) to the nearest codeword's nibble.
pub(crate) fn decode(x: &[i32], q2: i32) -> u8 {
    debug_assert_eq!(x.len(), 8);
    let half = q2 / 2;
    // cost[b][j]: squared distance of x_j to b * q2/2 modulo q2.
    let mut cost = [[0i32; 8]; 2];
    for j in 0..8 {
        let d0 = select(lt_mask(q2, 2 * x[j]), q2 - x[j], x[j]);
        let d1 = x[j] - half;
        cost[0][j] = d0 * d0;
        cost[1][j] = d1 * d1;
    }

    // For each coset s: the pair t takes value (b ^ s, b); pick the cheaper b per pair, then fix
    // the parity (sum of b_t must be even) by flipping the pair whose flip costs least.
    let mut total = [0i32; 2];
    let mut bits = [[0i32; 4]; 2];
    for s in 0..2 {
        let mut min_delta = (1 << 30) - 1;
        let mut t_star = 0i32;
        let mut parity = 0i32;
        for t in 0..4 {
            let c0 = cost[s][2 * t] + cost[0][2 * t + 1];
            let c1 = cost[1 - s][2 * t] + cost[1][2 * t + 1];
            let b = lt_mask(c1, c0); // -1: b_t = 1 (ties pick 0)
            let best = select(b, c1, c0);
            let delta = select(b, c0, c1) - best;
            total[s] += best;
            bits[s][t] = b & 1;
            parity ^= b & 1;
            // The first t with strictly smallest delta wins.
            let smaller = lt_mask(delta, min_delta);
            min_delta = select(smaller, delta, min_delta);
            t_star = select(smaller, t as i32, t_star);
        }
        let odd = -parity;
        for (t, bt) in bits[s].iter_mut().enumerate() {
            let is_star = !(((t as i32 ^ t_star) | -(t as i32 ^ t_star)) >> 31);
            *bt ^= odd & is_star & 1;
        }
        total[s] += odd & min_delta;
    }

    // Coset 1 only when strictly cheaper.
    let s1 = lt_mask(total[1], total[0]);
    let b: [i32; 4] = core::array::from_fn(|t| select(s1, bits[1][t], bits[0][t]));
    let a0 = s1 & 1;
    (a0 | (b[0] << 1) | ((b[0] ^ b[1]) << 2) | (b[3] << 3)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codewords_round_trip_with_noise() {
        for q2 in [1024, 2048] {
            for nibble in 0..16u8 {
                let w = encode(nibble);
                for noise in [-(q2 / 8) + 1, -3, 0, 5, q2 / 8 - 1] {
                    let x: Vec<i32> = (0..8)
                        .map(|j| (((w >> j) & 1) as i32 * (q2 / 2) + noise).rem_euclid(q2))
                        .collect();
                    assert_eq!(decode(&x, q2), nibble, "q2={q2} nibble={nibble}");
                }
            }
        }
    }
}
