//! Layouts to hold the fast readings to their referees (tests only, issue 21 item 3): layouts
//! of every prize tier of every built-in stake, drawn by the synthesizers, then changed at
//! random: recombined with another layout of the same stake at their separators (`/`, `|`:
//! valid layouts that no synthesizer drew, which win other prizes or break a rule of the
//! whole ticket), bytes replaced, inserted or removed, cut short, or replaced by text of the
//! layout alphabet. The property tests that use them (`explain.rs`, `verify/lines.rs`) take
//! a seed from proptest and draw the changes from it; a failure prints the layout.

use super::LayoutRng;
use crate::game::{Game, Stake, BUILTIN};
use rand::{Rng, SeedableRng};

/// The layouts of one built-in stake.
pub(crate) struct StakeLayouts {
    /// The game.
    pub game: Game,
    /// The stake, an index in `game.stakes`.
    pub stake: usize,
    /// Synthesized layouts: every tier (losers too), a few seeds each.
    pub layouts: Vec<Vec<u8>>,
}

impl StakeLayouts {
    pub fn stake(&self) -> &Stake {
        &self.game.stakes[self.stake]
    }
}

/// Every built-in stake's layouts (made once).
pub(crate) fn stakes() -> &'static [StakeLayouts] {
    static STAKES: std::sync::OnceLock<Vec<StakeLayouts>> = std::sync::OnceLock::new();
    STAKES.get_or_init(|| {
        let mut out = Vec::new();
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).expect("built-in game");
            for stake in 0..game.stakes.len() {
                let synth = game.stakes[stake].synthesizer().expect("synthesizer");
                let mut layouts = Vec::new();
                for (i, tier) in game.stakes[stake].tiers().into_iter().enumerate() {
                    for seed in 0..4u64 {
                        let mut layout = Vec::new();
                        let mut rng = LayoutRng::seed_from_u64(seed * 1000 + i as u64);
                        synth
                            .synthesize(tier, &mut rng, &mut layout)
                            .expect("a layout of each tier");
                        layouts.push(layout);
                    }
                }
                out.push(StakeLayouts {
                    game: game.clone(),
                    stake,
                    layouts,
                });
            }
        }
        out
    })
}

/// Bytes a layout is made of, and a few it never holds.
const ALPHABET: &[u8] = b"PABHEFQ23456X.:/|#+-0123456789MJDSVLKNRZ,x \xc3\xa9\xff\0";

/// A layout of `stake` drawn from `seed`: synthesized (one in eight), recombined with another,
/// changed in one to four places (a byte replaced, inserted or removed, a span copied over
/// another place, a field put in another's place, the layout cut), or text of the layout alphabet.
pub(crate) fn changed(stake: &StakeLayouts, seed: u64) -> Vec<u8> {
    let mut rng = LayoutRng::seed_from_u64(seed);
    let n = stake.layouts.len();
    let mut bytes = stake.layouts[rng.random_range(0..n)].clone();
    let edits = match rng.random_range(0..8u8) {
        0 => return bytes,
        1..=3 => {
            let other = &stake.layouts[rng.random_range(0..n)];
            bytes = recombined(&bytes, other, &mut rng);
            rng.random_range(0..3)
        }
        7 => {
            let len = rng.random_range(0..300);
            return (0..len)
                .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
                .collect();
        }
        _ => rng.random_range(1..5),
    };
    for _ in 0..edits {
        let byte = if rng.random_bool(0.8) {
            ALPHABET[rng.random_range(0..ALPHABET.len())]
        } else {
            rng.random()
        };
        let at = rng.random_range(0..=bytes.len());
        match rng.random_range(0..6u8) {
            // A field (between any of `/|-:`) replaced by another field of the layout: an
            // amount, a row or a number shown twice, or where the other kind belongs.
            5 => bytes = field_repeated(&bytes, &mut rng),
            // A short span of the layout copied over another place: a symbol, a digit or an
            // amount repeated where it may not be.
            4 if !bytes.is_empty() => {
                let from = rng.random_range(0..bytes.len());
                let span = bytes[from..bytes.len().min(from + rng.random_range(1..4))].to_vec();
                let to = rng.random_range(0..bytes.len());
                for (i, b) in span.into_iter().enumerate() {
                    if let Some(slot) = bytes.get_mut(to + i) {
                        *slot = b;
                    }
                }
            }
            0 if at < bytes.len() => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// `layout` with one of its fields (the bytes between two of `/|-:`) replaced by another.
fn field_repeated(layout: &[u8], rng: &mut LayoutRng) -> Vec<u8> {
    let fields: Vec<&[u8]> = layout.split(|&c| b"/|-:".contains(&c)).collect();
    let (to, from) = (
        rng.random_range(0..fields.len()),
        rng.random_range(0..fields.len()),
    );
    let mut out = Vec::with_capacity(layout.len());
    let mut start = 0;
    for (i, field) in fields.iter().enumerate() {
        out.extend_from_slice(if i == to { fields[from] } else { field });
        start += field.len();
        if let Some(&sep) = layout.get(start) {
            out.push(sep);
            start += 1;
        }
    }
    out
}

/// `a`'s pieces (each up to and with its `/` or `|`), each replaced by `b`'s piece at the same
/// place half the time; now and then a piece of `b` is added or one of `a` dropped.
fn recombined(a: &[u8], b: &[u8], rng: &mut LayoutRng) -> Vec<u8> {
    let pieces = |l: &[u8]| -> Vec<Vec<u8>> {
        l.split_inclusive(|&c| c == b'/' || c == b'|')
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (a, b) = (pieces(a), pieces(b));
    let mut out = Vec::new();
    for i in 0..a.len().max(b.len()) {
        let piece = match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => {
                if rng.random_bool(0.5) {
                    x
                } else {
                    y
                }
            }
            (Some(x), None) if rng.random_bool(0.9) => x,
            (None, Some(y)) if rng.random_bool(0.1) => y,
            _ => continue,
        };
        if rng.random_bool(0.03) {
            continue;
        }
        out.extend_from_slice(piece);
    }
    out
}

/// The properties that use these layouts cannot pass on refusals alone: for every stake, some
/// of them are valid layouts no synthesizer drew, and some of those win a prize.
#[test]
#[allow(clippy::print_stderr)] // says what it saw, for --nocapture
fn changed_layouts_include_valid_ones_no_synthesizer_drew() {
    for layouts in stakes() {
        let dec = layouts.stake().decoder();
        let (mut valid, mut new, mut new_winners) = (0, 0, 0);
        for seed in 0..2000 {
            let bytes = changed(layouts, seed);
            if let Ok(prize) = dec.decode(&bytes) {
                valid += 1;
                if !layouts.layouts.contains(&bytes) {
                    new += 1;
                    new_winners += usize::from(!prize.is_zero());
                }
            }
        }
        let name = format!("{} {}", layouts.game.id, layouts.stake().price);
        eprintln!(
            "{name}: of 2000 changed layouts, {valid} valid, {new} new, {new_winners} new winners"
        );
        assert!(
            new >= 100 && new_winners >= 20,
            "{name}: {valid} valid, {new} new, {new_winners} new winners"
        );
    }
}
