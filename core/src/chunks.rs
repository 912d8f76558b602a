//! Bodies written as chunks while they are sent (a list, a Table): a head, then items
//! copied into chunks of about [`CHUNK`] bytes, so no buffer of the whole body exists. The
//! registry writes the items (Table rows), the endpoints the lists; both share this loop.

use bytes::{Bytes, BytesMut};

/// The size of a body's chunks: large enough that a list costs few writes, small enough
/// that a response never holds a second copy of a large list.
pub const CHUNK: usize = 64 * 1024;

/// What writes a body's items, one at a time.
pub trait ItemWriter {
    /// Why an item could not be written.
    type Error;

    /// Writes the next item (with its separator) at the end of `buffer`, or, when there is
    /// none left, the body's tail; `Ok(false)` once the tail is written.
    fn write_next(&mut self, buffer: &mut BytesMut) -> Result<bool, Self::Error>;
}

/// A body as chunks: the head, then what `writer` writes, a chunk at a time. An error
/// ends the chunks (the body is cut short).
pub struct Chunks<W> {
    buffer: BytesMut,
    writer: W,
    done: bool,
}

impl<W: ItemWriter> Chunks<W> {
    /// The chunks of a body opening with `head`.
    pub fn new(head: &[u8], writer: W) -> Chunks<W> {
        Chunks {
            buffer: BytesMut::from(head),
            writer,
            done: false,
        }
    }
}

impl<W: ItemWriter> Iterator for Chunks<W> {
    type Item = Result<Bytes, W::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        while self.buffer.len() < CHUNK {
            match self.writer.write_next(&mut self.buffer) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
        Some(Ok(self.buffer.split().freeze()))
    }
}
