//! Any bytes as a pack's lines member (`block-NNNNN.lines.csv`), the first byte the manifest's
//! ticket count: the rebuild never panics; what it rebuilds is of the size the manifest's CSV
//! would be, and stripping it again gives the very bytes it was rebuilt from (the mapping is one
//! to one, docs/FORMAT.md "Emission pack").
#![no_main]

use emission_factory::pack::lines::{lines_bytes, Rebuild, Strip};
use libfuzzer_sys::fuzz_target;
use std::io::Read;

fuzz_target!(|data: &[u8]| {
    let Some((&tickets, lines)) = data.split_first() else {
        return;
    };
    let tickets = u64::from(tickets % 16);
    let mut csv = Vec::new();
    if Rebuild::new(lines, tickets).read_to_end(&mut csv).is_ok() {
        assert_eq!(
            lines_bytes(csv.len() as u64, tickets),
            Some(lines.len() as u64),
            "the rebuilt CSV is not of the size its lines make"
        );
        let mut again = Vec::new();
        Strip::new(&csv[..], tickets)
            .read_to_end(&mut again)
            .unwrap_or_else(|e| panic!("a rebuilt CSV does not strip: {e}"));
        assert_eq!(again, lines, "strip(rebuild(lines)) is not the lines");
    }
});
