//! Any bytes as a ticket line to `verify`'s line checks ([`TicketCheck`]), for the mini test
//! game and every stake of the built-in games.
//!
//! Input: one byte choosing the game and stake, four bytes of ticket index (little-endian),
//! then the line itself. The checks must not panic, must give the same verdict twice, the
//! quick reading of a line must agree with the full one (`TicketCheck::readings_agree`), and
//! a line they accept must be short enough and end with the SHA-256 of what comes before it.
#![no_main]

use emission_factory::game::Game;
use emission_factory::verify::TicketCheck;
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The checks of block 1 of emission 1 (the blocks the seed corpus comes from), chosen by the
/// input's first byte modulo 7: 0 the mini game (2 €), 1 to 4 La ruche d'or at 0.5, 1, 2 and
/// 3 €, 5 Maxi Ruche d'or, 6 Année de la chance.
fn checkers() -> &'static [TicketCheck] {
    static CHECKERS: OnceLock<Vec<TicketCheck>> = OnceLock::new();
    CHECKERS.get_or_init(|| {
        let mini = Game::parse(
            include_str!("../../tests/data/mini-ruche.toml"),
            "tests/data/mini-ruche.toml",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut games = vec![mini];
        for id in ["ruche-or", "maxi-ruche-or", "annee-chance"] {
            games.push(Game::builtin(id).unwrap_or_else(|e| panic!("{e}")));
        }
        let mut out = Vec::new();
        for game in &games {
            for stake in &game.stakes {
                out.push(TicketCheck::new(game, stake, 1, 1));
            }
        }
        out
    })
}

fuzz_target!(|data: &[u8]| {
    let [which, i0, i1, i2, i3, line @ ..] = data else {
        return;
    };
    let checkers = checkers();
    let checker = &checkers[usize::from(*which) % checkers.len()];
    let index = u64::from(u32::from_le_bytes([*i0, *i1, *i2, *i3]));
    if let Err(e) = checker.readings_agree(line, index) {
        panic!("{e}");
    }
    let verdict = checker.check(line, index);
    assert_eq!(
        verdict,
        checker.check(line, index),
        "check is not deterministic"
    );
    if verdict.is_ok() {
        assert!(
            line.len() <= checker.max_line(),
            "an accepted line is too long"
        );
        let comma = line
            .iter()
            .rposition(|&b| b == b',')
            .unwrap_or_else(|| panic!("an accepted line has no comma"));
        let hash = hex_lower(&Sha256::digest(&line[..comma]));
        assert_eq!(
            &line[comma + 1..],
            hash.as_bytes(),
            "an accepted line does not end with the SHA-256 of serial,prize,layout"
        );
    }
});

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
