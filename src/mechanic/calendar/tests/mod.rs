//! Tests of the calendar mechanic: the decoder on hand-written layouts (every rule and every
//! invalid case of SPEC §3), the parameters, and the synthesizer checked by the decoder.

mod decode;
mod params;
mod synth;

use crate::game::{Game, Prize, Stake};
use rust_decimal::Decimal;
use std::str::FromStr;

/// Decimal from text (test data only).
fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

/// The built-in stake of "2013 Année de la chance".
fn builtin_stake() -> Stake {
    Game::builtin("annee-chance").unwrap().stakes[0].clone()
}

/// A stake with this `layout` table (TOML text) and these prizes.
fn stake_with(layout: &str, prizes: &[&str]) -> Stake {
    let prizes: Vec<Prize> = prizes
        .iter()
        .map(|a| Prize {
            amount: d(a),
            count: 1,
        })
        .collect();
    Stake {
        price: d("3"),
        cents: 300,
        winners: prizes.len() as u64,
        total: prizes.iter().map(|p| p.amount).sum(),
        prizes,
        layout: toml::from_str(layout).unwrap(),
    }
}
