//! Bytes handed from one thread to another through a bounded channel, seen as readers: a
//! stream that two checks read in one pass (a pack's CSV member, read once, checked by the
//! verification on one thread while it is loaded on another), memory bounded by the chunks
//! in flight.

use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// A bounded channel of chunks: its sending and its reading end.
pub fn channel(chunks: usize) -> (SyncSender<Vec<u8>>, ChunkReader) {
    let (tx, rx) = sync_channel(chunks);
    (
        tx,
        ChunkReader {
            rx,
            chunk: Vec::new(),
            at: 0,
            back: None,
        },
    )
}

/// The chunks a channel receives, as a reader; the end when every sender is gone.
pub struct ChunkReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
    /// Where a chunk read is handed back to be filled again, if the sender recycles them.
    back: Option<SyncSender<Vec<u8>>>,
}

impl ChunkReader {
    /// Hands every chunk read back to `back` (a bounded channel: a chunk that does not fit
    /// is dropped), so that the sender refills its buffers instead of making new ones.
    pub fn recycling(mut self, back: SyncSender<Vec<u8>>) -> Self {
        self.back = Some(back);
        self
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    let used = std::mem::replace(&mut self.chunk, chunk);
                    if let Some(back) = &self.back {
                        if used.capacity() > 0 {
                            let _ = back.try_send(used);
                        }
                    }
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A reader that also sends a copy of every byte it reads down a channel (until the
/// channel's reader is gone: then it only reads). Dropping it ends the channel.
pub struct Tee<'a> {
    inner: &'a mut dyn Read,
    to: Option<SyncSender<Vec<u8>>>,
}

impl<'a> Tee<'a> {
    /// Reads `inner`, copying what it reads to `to`.
    pub fn new(inner: &'a mut dyn Read, to: SyncSender<Vec<u8>>) -> Self {
        Tee {
            inner,
            to: Some(to),
        }
    }
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            if let Some(to) = &self.to {
                if to.send(buf[..n].to_vec()).is_err() {
                    // The other reader stopped (its reason is its own); this one goes on.
                    self.to = None;
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tee_gives_both_readers_every_byte_and_ends_the_channel_when_dropped() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let (tx, mut copy) = channel(2);
        let copied = std::thread::spawn(move || {
            let mut out = Vec::new();
            copy.read_to_end(&mut out).unwrap();
            out
        });
        let mut source = &data[..];
        let mut read = Vec::new();
        {
            let mut tee = Tee::new(&mut source, tx);
            let mut buf = [0u8; 777];
            loop {
                let n = tee.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                read.extend_from_slice(&buf[..n]);
            }
        }
        assert_eq!(read, data);
        assert_eq!(copied.join().unwrap(), data);
    }

    #[test]
    fn a_tee_goes_on_reading_when_the_copy_stops() {
        let data = vec![7u8; 10_000];
        let (tx, copy) = channel(1);
        drop(copy);
        let mut source = &data[..];
        let mut tee = Tee::new(&mut source, tx);
        let mut out = Vec::new();
        tee.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }
}
