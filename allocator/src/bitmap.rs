//! The bitmap of one range (kube's `allocator.AllocationBitmap`): bit `i` says whether the
//! range's `i`-th value is taken, written as kube writes it, the bytes of Go's
//! `big.Int.Bytes()` (big-endian, no leading zero bytes), so a stored range reads the
//! same in both.
//!
//! Free values are found as kube's `randomScanStrategyWithOffset` finds them: values below
//! the range's static band are kept for the values users ask for, so a free value is first
//! looked for above it, from a random place, wrapping around the upper band, then in the
//! static band the same way.

/// The taken values of a range of `size` values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bitmap {
    words: Vec<u64>,
    size: usize,
}

impl Bitmap {
    /// An empty bitmap of `size` values.
    pub fn new(size: usize) -> Bitmap {
        Bitmap {
            words: vec![0; size.div_ceil(64)],
            size,
        }
    }

    /// How many values the range has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether value `offset` is taken (`false` outside the range).
    pub fn has(&self, offset: usize) -> bool {
        offset < self.size && self.words[offset / 64] & (1 << (offset % 64)) != 0
    }

    /// Takes value `offset`; `false` when it was taken already or is outside the range.
    pub fn set(&mut self, offset: usize) -> bool {
        if offset >= self.size || self.has(offset) {
            return false;
        }
        self.words[offset / 64] |= 1 << (offset % 64);
        true
    }

    /// Frees value `offset`; `false` when it was free.
    pub fn clear(&mut self, offset: usize) -> bool {
        if !self.has(offset) {
            return false;
        }
        self.words[offset / 64] &= !(1 << (offset % 64));
        true
    }

    /// How many values are taken.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The taken values, in order.
    pub fn taken(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.size).filter(|&offset| self.has(offset))
    }

    /// A free value, found as kube's scan with a static band of `static_band` values
    /// finds one; `None` when the range is full.
    pub fn free(&self, static_band: usize) -> Option<usize> {
        if self.count() >= self.size {
            return None;
        }
        let band = static_band.min(self.size);
        self.scan(band, self.size).or_else(|| self.scan(0, band))
    }

    /// A free value in `[from, to)`, from a random place, wrapping around.
    fn scan(&self, from: usize, to: usize) -> Option<usize> {
        let width = to.checked_sub(from).filter(|&w| w > 0)?;
        let start = fastrand::usize(..width);
        (0..width)
            .map(|i| from + (start + i) % width)
            .find(|&offset| !self.has(offset))
    }

    /// The bytes of Go's `big.Int.Bytes()` of the bitmap: big-endian, no leading zeros.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes: Vec<u8> = self
            .words
            .iter()
            .rev()
            .flat_map(|w| w.to_be_bytes())
            .collect();
        let leading = bytes.iter().take_while(|&&b| b == 0).count();
        bytes.drain(..leading);
        bytes
    }

    /// The bitmap of a range of `size` values from [`Bitmap::to_bytes`]'s form; bits
    /// beyond the range are dropped (a range that shrank).
    pub fn from_bytes(size: usize, bytes: &[u8]) -> Bitmap {
        let mut bitmap = Bitmap::new(size);
        for (i, byte) in bytes.iter().rev().enumerate() {
            for bit in 0..8 {
                if byte & (1 << bit) != 0 {
                    bitmap.set(i * 8 + bit);
                }
            }
        }
        bitmap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_a_big_endian_integer() {
        let mut bitmap = Bitmap::new(300);
        assert_eq!(bitmap.to_bytes(), Vec::<u8>::new());
        bitmap.set(0);
        assert_eq!(bitmap.to_bytes(), vec![1]);
        bitmap.set(9);
        assert_eq!(bitmap.to_bytes(), vec![2, 1]);
        bitmap.set(299);
        let bytes = bitmap.to_bytes();
        assert_eq!(bytes.len(), 38);
        assert_eq!(Bitmap::from_bytes(300, &bytes), bitmap);
        // A smaller range keeps what fits.
        let smaller = Bitmap::from_bytes(10, &bytes);
        assert_eq!(smaller.taken().collect::<Vec<_>>(), vec![0, 9]);
    }

    #[test]
    fn free_values_come_from_above_the_static_band_first() {
        let mut bitmap = Bitmap::new(20);
        for _ in 0..16 {
            let offset = bitmap.free(4).unwrap();
            assert!(offset >= 4, "{offset} is in the static band");
            assert!(bitmap.set(offset));
        }
        for _ in 0..4 {
            let offset = bitmap.free(4).unwrap();
            assert!(offset < 4);
            assert!(bitmap.set(offset));
        }
        assert_eq!(bitmap.free(4), None);
        assert!(bitmap.clear(7));
        assert_eq!(bitmap.free(4), Some(7));
        assert!(!bitmap.set(20) && !bitmap.has(20));
    }
}
