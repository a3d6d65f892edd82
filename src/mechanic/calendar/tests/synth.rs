//! The synthesizer, judged by the decoder: exact prizes, variety of forms, near misses, and
//! non-winning parts that do not depend on the prize.

use super::{builtin_stake, d};
use crate::mechanic::calendar::{CalendarDecoder, CalendarSynthesizer};
use crate::mechanic::{Decoder, LayoutRng, Synthesizer};
use proptest::prelude::*;
use rand::SeedableRng;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

static PAIR: LazyLock<(CalendarSynthesizer, CalendarDecoder, Vec<Decimal>)> = LazyLock::new(|| {
    let stake = builtin_stake();
    (
        CalendarSynthesizer::new(&stake).unwrap(),
        CalendarDecoder::new(&stake).unwrap(),
        stake.tiers(),
    )
});

const LETTERS: &[u8] = b"ABCDEFGH";

/// A month as shown: two symbols and the amount's text.
struct Month<'a> {
    first: u8,
    second: u8,
    amount: &'a str,
}

/// Splits a (valid) layout into its months and clover, for statistics.
fn parts(layout: &str) -> (Vec<Month<'_>>, Vec<u8>, &str) {
    let (months, clover) = layout.split_once('|').unwrap();
    let months = months
        .split('/')
        .map(|m| Month {
            first: m.as_bytes()[0],
            second: m.as_bytes()[1],
            amount: &m[3..],
        })
        .collect();
    let (numbers, amount) = clover.split_once(':').unwrap();
    let numbers = numbers.split('-').map(|n| n.parse().unwrap()).collect();
    (months, numbers, amount)
}

fn synthesize(prize: Decimal, seed: u64) -> String {
    let mut rng = LayoutRng::seed_from_u64(seed);
    let mut out = String::new();
    PAIR.0.synthesize(prize, &mut rng, &mut out).unwrap();
    out
}

fn form_text(months: usize, clover: bool) -> String {
    match (months, clover) {
        (0, false) => "loss".into(),
        (0, true) => "clover".into(),
        (1, false) => "1 month".into(),
        (n, false) => format!("{n} months"),
        (1, true) => "1 month + clover".into(),
        (n, true) => format!("{n} months + clover"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    /// decode(synthesize(prize)) == prize for every prize of the table and 0, across seeds.
    #[test]
    fn every_prize_round_trips(seed in any::<u64>(), tier in 0usize..8) {
        let (syn, dec, tiers) = &*PAIR;
        let prize = tiers[tier % tiers.len()];
        let mut rng = LayoutRng::seed_from_u64(seed);
        let mut out = String::from("kept:");
        syn.synthesize(prize, &mut rng, &mut out).unwrap();
        // The layout is appended: what `out` held stays.
        prop_assert!(out.starts_with("kept:"));
        prop_assert_eq!(dec.decode(&out[5..]), Ok(prize), "{}", out);
    }
}

#[test]
fn same_seed_same_layout() {
    for &p in &PAIR.2 {
        assert_eq!(synthesize(p, 42), synthesize(p, 42));
    }
    assert_ne!(synthesize(d("0"), 1), synthesize(d("0"), 2));
}

#[test]
fn prize_outside_the_table_is_refused() {
    let mut rng = LayoutRng::seed_from_u64(0);
    let mut out = String::new();
    let e = PAIR.0.synthesize(d("7"), &mut rng, &mut out).unwrap_err();
    assert!(e.0.contains("prize 7 €"), "{e}");
    assert!(out.is_empty());
}

/// Over 20 000 tickets per prize, every form the amounts allow appears, and simple forms
/// dominate. Prints the forms observed (run with --nocapture for the report).
#[test]
fn every_form_appears() {
    let (syn, dec, tiers) = &*PAIR;
    for &prize in tiers {
        let expected: BTreeSet<String> = syn
            .forms(prize)
            .into_iter()
            .map(|(m, c)| form_text(m, c))
            .collect();
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        for seed in 0..20_000 {
            let layout = synthesize(prize, seed);
            assert_eq!(dec.decode(&layout), Ok(prize), "{layout}");
            *seen.entry(dec.form(&layout).unwrap()).or_default() += 1;
        }
        println!("{prize:>6} €: {seen:?}");
        if prize.is_zero() {
            assert_eq!(seen.keys().collect::<Vec<_>>(), ["loss"]);
            continue;
        }
        let seen_forms: BTreeSet<String> = seen.keys().cloned().collect();
        assert_eq!(seen_forms, expected, "prize {prize}");
        if expected.len() >= 2 {
            assert!(seen.len() >= 2, "prize {prize} shows a single form");
        }
        // One component (one month or the clover alone) is the most common when possible.
        let simple: u32 = ["1 month", "clover"]
            .iter()
            .filter_map(|f| seen.get(*f))
            .sum();
        let top = seen.values().max().copied().unwrap_or(0);
        if simple > 0 {
            assert!(
                seen.get("1 month").or(seen.get("clover")) >= Some(&(top / 2)),
                "prize {prize}: {seen:?}"
            );
        }
    }
}

/// Every prize with at least two possible forms has them (the built-in amounts allow it).
#[test]
fn builtin_prizes_have_several_forms() {
    let (syn, _, tiers) = &*PAIR;
    for &p in tiers.iter().filter(|p| !p.is_zero()) {
        assert!(syn.forms(p).len() >= 2, "prize {p}: {:?}", syn.forms(p));
    }
}

#[test]
fn losers_show_near_misses() {
    let n = 20_000;
    let (mut twelve, mut adjacent_tickets, mut adjacent_months) = (0, 0, 0);
    for seed in 0..n {
        let layout = synthesize(Decimal::ZERO, seed);
        let (months, numbers, _) = parts(&layout);
        assert!(!numbers.contains(&13), "{layout}");
        twelve += usize::from(numbers.contains(&12));
        let adj = months
            .iter()
            .filter(|m| {
                let a = LETTERS.iter().position(|&l| l == m.first).unwrap();
                let b = LETTERS.iter().position(|&l| l == m.second).unwrap();
                a.abs_diff(b) == 1
            })
            .count();
        adjacent_months += adj;
        adjacent_tickets += usize::from(adj > 0);
    }
    let twelve = twelve as f64 / n as f64;
    let adjacent_months = adjacent_months as f64 / (12 * n) as f64;
    let adjacent_tickets = adjacent_tickets as f64 / n as f64;
    println!("losers: clover with 12 {twelve:.3}, neighbouring symbols per month {adjacent_months:.3}, tickets with one {adjacent_tickets:.3}");
    assert!(twelve > 0.3, "{twelve}");
    assert!(adjacent_months > 0.3, "{adjacent_months}");
    assert!(adjacent_tickets > 0.95, "{adjacent_tickets}");
}

/// Frequencies of the amounts shown by non-winning months and non-winning clovers, and of the
/// symbol pairs of non-winning months.
#[derive(Default)]
struct Shown {
    month_amounts: BTreeMap<String, f64>,
    pairs: BTreeMap<(u8, u8), f64>,
    clover_amounts: BTreeMap<String, f64>,
    clover_twelve: f64,
    months: f64,
    clovers: f64,
}

impl Shown {
    fn add(&mut self, layout: &str) {
        let (months, numbers, clover_amount) = parts(layout);
        for m in months.iter().filter(|m| m.first != m.second) {
            *self.month_amounts.entry(m.amount.to_string()).or_default() += 1.0;
            *self.pairs.entry((m.first, m.second)).or_default() += 1.0;
            self.months += 1.0;
        }
        if !numbers.contains(&13) {
            *self
                .clover_amounts
                .entry(clover_amount.to_string())
                .or_default() += 1.0;
            self.clover_twelve += f64::from(u8::from(numbers.contains(&12)));
            self.clovers += 1.0;
        }
    }
}

/// Largest difference of frequency between two histograms.
fn gap<K: Ord + Clone>(a: &BTreeMap<K, f64>, na: f64, b: &BTreeMap<K, f64>, nb: f64) -> f64 {
    let keys: BTreeSet<K> = a.keys().chain(b.keys()).cloned().collect();
    keys.iter()
        .map(|k| (a.get(k).unwrap_or(&0.0) / na - b.get(k).unwrap_or(&0.0) / nb).abs())
        .fold(0.0, f64::max)
}

/// What does not win looks the same on winning and losing tickets: the amounts of
/// non-winning months and clovers, and the symbol pairs, follow one distribution.
#[test]
fn non_winning_parts_do_not_reveal_the_prize() {
    let mut losers = Shown::default();
    for seed in 0..20_000 {
        losers.add(&synthesize(Decimal::ZERO, seed));
    }
    for prize in ["6", "10", "100", "1000"] {
        let mut winners = Shown::default();
        for seed in 0..20_000 {
            winners.add(&synthesize(d(prize), seed));
        }
        let g = gap(
            &losers.month_amounts,
            losers.months,
            &winners.month_amounts,
            winners.months,
        );
        assert!(g < 0.006, "prize {prize}: month amounts differ by {g}");
        let g = gap(&losers.pairs, losers.months, &winners.pairs, winners.months);
        assert!(g < 0.005, "prize {prize}: symbol pairs differ by {g}");
        if winners.clovers > 5000.0 {
            let g = gap(
                &losers.clover_amounts,
                losers.clovers,
                &winners.clover_amounts,
                winners.clovers,
            );
            assert!(g < 0.02, "prize {prize}: clover amounts differ by {g}");
            let g = (losers.clover_twelve / losers.clovers
                - winners.clover_twelve / winners.clovers)
                .abs();
            assert!(g < 0.02, "prize {prize}: 12 on the clover differs by {g}");
        }
    }
}

/// Winning months fall anywhere among the twelve.
#[test]
fn winning_months_at_any_position() {
    let mut at = [0u32; 12];
    for seed in 0..12_000 {
        let layout = synthesize(d("10"), seed);
        for (i, m) in parts(&layout).0.iter().enumerate() {
            at[i] += u32::from(m.first == m.second);
        }
    }
    let (lo, hi) = (at.iter().min().unwrap(), at.iter().max().unwrap());
    assert!(*lo > 0 && f64::from(*hi) / f64::from(*lo) < 1.3, "{at:?}");
}

/// Speed of synthesize + decode, release mode:
/// `cargo test --release --lib mechanic::calendar -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed() {
    let (syn, dec, tiers) = &*PAIR;
    // Prizes in the proportions of a block.
    let stake = builtin_stake();
    let mut prizes: Vec<Decimal> = Vec::new();
    for p in &stake.prizes {
        prizes.extend(std::iter::repeat_n(
            p.amount,
            (p.count / 100).max(1) as usize,
        ));
    }
    prizes.extend(std::iter::repeat_n(Decimal::ZERO, 15_663));
    let n = 1_000_000;
    let mut out = String::with_capacity(128);
    let mut total = Decimal::ZERO;
    let start = std::time::Instant::now();
    for i in 0..n {
        let mut rng = LayoutRng::seed_from_u64(i as u64);
        let prize = prizes[i % prizes.len()];
        out.clear();
        syn.synthesize(prize, &mut rng, &mut out).unwrap();
        total += dec.decode(&out).unwrap();
    }
    let both = start.elapsed();
    let start = std::time::Instant::now();
    for i in 0..n {
        let mut rng = LayoutRng::seed_from_u64(i as u64);
        out.clear();
        syn.synthesize(prizes[i % prizes.len()], &mut rng, &mut out)
            .unwrap();
    }
    let synth_only = start.elapsed();
    let layouts: Vec<String> = (0..100_000)
        .map(|i| synthesize(prizes[i % prizes.len()], i as u64))
        .collect();
    let start = std::time::Instant::now();
    for _ in 0..10 {
        for l in &layouts {
            total += dec.decode(std::hint::black_box(l)).unwrap();
        }
    }
    let decode_only = start.elapsed();
    // Calibration: one pass over the same bytes doing almost nothing.
    let start = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..10 {
        for l in &layouts {
            sum += std::hint::black_box(l)
                .bytes()
                .map(|b| u64::from(b == b'/'))
                .sum::<u64>();
        }
    }
    println!(
        "calibration: {:.0} ns per layout scan ({sum})",
        start.elapsed().as_nanos() as f64 / 1e6
    );
    println!(
        "{n} tickets: synthesize + decode {:.0} ns/ticket, synthesize alone {:.0} ns/ticket, decode alone {:.0} ns/ticket (total {total}, tiers {})",
        both.as_nanos() as f64 / n as f64,
        synth_only.as_nanos() as f64 / n as f64,
        decode_only.as_nanos() as f64 / 1e6,
        tiers.len()
    );
}
