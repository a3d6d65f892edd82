//! The designer's preview of a definition (`games --game FILE`): for every stake, what it
//! pays (payout share, odds, hit frequency, the near-miss rates it asks for) and, for every
//! prize, the forms its layouts take.
//!
//! The forms are those of real layouts: the stake's synthesizer (the one `emit` builds, so a
//! definition `emit` would refuse is refused here with the same message) draws
//! [`PREVIEW_SAMPLES`] layouts of each prize from fixed seeds, and each is read back by the
//! decoder and the explainer. A form is the decoder's own text (what `report` counts and
//! `show --form` looks for); a split is the amounts of its winning parts, highest first. The
//! shares are those of the sample: a form rarer than about one ticket in [`PREVIEW_SAMPLES`]
//! may be missing from it, a form listed is one the mechanic does show.

use super::{Game, Stake};
use crate::mechanic::{BuildError, LayoutRng};
use crate::money::{canonical, parse_canonical};
use rand::SeedableRng;
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;

/// Layouts drawn per prize (seeds `0` to `PREVIEW_SAMPLES - 1` of the layout generator).
pub const PREVIEW_SAMPLES: u32 = 1000;

/// Most splits listed per form; the others are counted in [`FormPreview::other_splits`].
pub const MAX_SPLITS: usize = 6;

/// Why a preview could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// The synthesizer cannot be built (a prize cannot be shown), as `emit` says it.
    #[error("game {game}: {cause}")]
    Build {
        /// The game's id.
        game: String,
        /// The synthesizer's error, naming the stake and setting: part of the message, not a
        /// chained source, so that it is said once.
        cause: BuildError,
    },
    /// A synthesized layout did not read back as its prize: a defect of the mechanic.
    #[error("game {game}, stake {price} €, prize {prize} €: a synthesized layout does not read back: {message}")]
    Layout {
        /// The game's id.
        game: String,
        /// The stake.
        price: String,
        /// The prize drawn.
        prize: String,
        /// The decoder's or explainer's message.
        message: String,
    },
}

/// One stake's preview.
#[derive(Debug, Clone, Serialize)]
pub struct StakePreview {
    /// Price of a ticket, canonical.
    pub price: String,
    /// Winning tickets per block.
    pub winners: u64,
    /// Losing tickets per block.
    pub losers: u64,
    /// Prizes per block, canonical euros.
    pub total_prizes: String,
    /// Prizes over the stakes of a block, in %, rounded to 2 decimals.
    pub payout_percent: String,
    /// Block size over winners, rounded to 2 decimals (one winner in ...).
    pub odds_one_in: String,
    /// Winners over the block size, in %, rounded to 2 decimals.
    pub hit_frequency_percent: String,
    /// The near-miss rates the definition asks for, by the report's feature name: each a share
    /// of the parts it is a rate of (rows that do not win...), on winners and losers alike.
    pub near_miss_rates: BTreeMap<String, f64>,
    /// The prize table, highest first.
    pub prizes: Vec<PrizePreview>,
}

/// One prize of a stake.
#[derive(Debug, Clone, Serialize)]
pub struct PrizePreview {
    /// The prize, canonical euros.
    pub amount: String,
    /// Tickets of a block that win it.
    pub count: u64,
    /// Block size over count, rounded to 2 decimals.
    pub odds_one_in: String,
    /// Its share of the block's prizes, in %, rounded to 2 decimals.
    pub payout_share_percent: String,
    /// The forms of the sample, most frequent first.
    pub forms: Vec<FormPreview>,
}

/// One form of a prize in the sample.
#[derive(Debug, Clone, Serialize)]
pub struct FormPreview {
    /// The decoder's text of the form (`row + honey`, `2 months + clover`...).
    pub form: String,
    /// Layouts of the sample with this form.
    pub samples: u32,
    /// Their share of the sample, in %, rounded to 1 decimal.
    pub percent: String,
    /// The winning parts of the first layout of this form: the explainer's lines
    /// (`row 4: 3 × P → 20 €`, `6 honey pots → 6 €`).
    pub example: Vec<String>,
    /// The amounts its winning parts add up from, most frequent first (at most
    /// [`MAX_SPLITS`]).
    pub splits: Vec<SplitPreview>,
    /// Samples of this form whose split is not listed.
    pub other_splits: u32,
}

/// One way of adding up a prize.
#[derive(Debug, Clone, Serialize)]
pub struct SplitPreview {
    /// The amounts of the winning parts, canonical, highest first.
    pub amounts: Vec<String>,
    /// Layouts of the sample with this form and split.
    pub samples: u32,
}

/// Previews every stake of `game`.
pub fn preview(game: &Game) -> Result<Vec<StakePreview>, PreviewError> {
    game.stakes
        .iter()
        .map(|stake| preview_stake(game, stake))
        .collect()
}

fn percent_of(part: Decimal, whole: Decimal, dp: u32) -> String {
    if whole.is_zero() {
        return "0".into();
    }
    canonical((part * Decimal::ONE_HUNDRED / whole).round_dp(dp))
}

fn ratio(whole: u64, part: u64) -> String {
    canonical((Decimal::from(whole) / Decimal::from(part.max(1))).round_dp(2))
}

/// The amount a winning part pays: what an explainer's line says after its last `→` or `=`
/// (`row 5: 3 × P → 5000 € × 10 = 50000 €`).
fn part_amount(line: &str) -> Option<Decimal> {
    let (_, after) = line.rsplit_once(['→', '='])?;
    parse_canonical(after.trim().strip_suffix('€')?.trim())
}

/// A form met in the sample: its text, its samples, its first example, and its splits with
/// their samples.
type Seen = (String, u32, Vec<String>, BTreeMap<Vec<Decimal>, u32>);

fn preview_stake(game: &Game, stake: &Stake) -> Result<StakePreview, PreviewError> {
    let synth = stake.synthesizer().map_err(|cause| PreviewError::Build {
        game: game.id.clone(),
        cause,
    })?;
    let decoder = stake.decoder();
    let explainer = stake.mechanic.explainer();
    let block = Decimal::from(game.block_size);
    let mut prizes = Vec::with_capacity(stake.prizes.len());
    for prize in &stake.prizes {
        let fail = |message: String| PreviewError::Layout {
            game: game.id.clone(),
            price: canonical(stake.price),
            prize: canonical(prize.amount),
            message,
        };
        // In the order first seen.
        let mut forms: Vec<Seen> = Vec::new();
        let mut layout = Vec::new();
        for seed in 0..PREVIEW_SAMPLES {
            crate::interrupt::check().map_err(|e| PreviewError::Build {
                game: game.id.clone(),
                cause: e.into(),
            })?;
            layout.clear();
            let mut rng = LayoutRng::seed_from_u64(u64::from(seed));
            synth
                .synthesize(prize.amount, &mut rng, &mut layout)
                .map_err(|e| fail(e.to_string()))?;
            let won = decoder.decode(&layout).map_err(|e| fail(e.to_string()))?;
            if won != prize.amount {
                return Err(fail(format!("it reads {} €", canonical(won))));
            }
            let text = std::str::from_utf8(&layout).map_err(|e| fail(e.to_string()))?;
            let e = explainer.explain(text).map_err(|e| fail(e.to_string()))?;
            let mut split: Vec<Decimal> = e
                .wins
                .iter()
                .map(|w| part_amount(w).ok_or_else(|| fail(format!("no amount in {w:?}"))))
                .collect::<Result<_, _>>()?;
            split.sort_by(|a, b| b.cmp(a));
            match forms.iter_mut().find(|f| f.0 == e.form) {
                Some(f) => {
                    f.1 += 1;
                    *f.3.entry(split).or_default() += 1;
                }
                None => forms.push((e.form, 1, e.wins, BTreeMap::from([(split, 1)]))),
            }
        }
        // Most frequent first; ties in the order first seen (the sort is stable).
        forms.sort_by_key(|f| std::cmp::Reverse(f.1));
        let forms = forms
            .into_iter()
            .map(|(form, samples, example, splits)| {
                let mut splits: Vec<(Vec<Decimal>, u32)> = splits.into_iter().collect();
                splits.sort_by_key(|s| std::cmp::Reverse(s.1));
                let other_splits = splits.iter().skip(MAX_SPLITS).map(|s| s.1).sum();
                FormPreview {
                    form,
                    samples,
                    percent: percent_of(Decimal::from(samples), Decimal::from(PREVIEW_SAMPLES), 1),
                    example,
                    splits: splits
                        .into_iter()
                        .take(MAX_SPLITS)
                        .map(|(amounts, samples)| SplitPreview {
                            amounts: amounts.into_iter().map(canonical).collect(),
                            samples,
                        })
                        .collect(),
                    other_splits,
                }
            })
            .collect();
        prizes.push(PrizePreview {
            amount: canonical(prize.amount),
            count: prize.count,
            odds_one_in: ratio(game.block_size, prize.count),
            payout_share_percent: percent_of(
                prize.amount * Decimal::from(prize.count),
                stake.total,
                2,
            ),
            forms,
        });
    }
    Ok(StakePreview {
        price: canonical(stake.price),
        winners: stake.winners,
        losers: stake.losers(game.block_size),
        total_prizes: canonical(stake.total),
        payout_percent: percent_of(stake.total, stake.price * block, 2),
        odds_one_in: ratio(game.block_size, stake.winners),
        hit_frequency_percent: percent_of(Decimal::from(stake.winners), block, 2),
        near_miss_rates: stake
            .mechanic
            .near_miss_rates()
            .into_iter()
            .map(|(name, rate)| (name.to_string(), rate))
            .collect(),
        prizes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BUILTIN;

    #[test]
    fn every_prize_of_every_built_in_game_has_its_forms() {
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            let stakes = preview(&game).unwrap();
            assert_eq!(stakes.len(), game.stakes.len());
            for (s, stake) in stakes.iter().zip(&game.stakes) {
                assert_eq!(s.prizes.len(), stake.prizes.len());
                for (p, prize) in s.prizes.iter().zip(&stake.prizes) {
                    let total: u32 = p.forms.iter().map(|f| f.samples).sum();
                    assert_eq!(total, PREVIEW_SAMPLES, "{id} {}", p.amount);
                    for f in &p.forms {
                        // Every split adds up to the prize.
                        for split in &f.splits {
                            let sum: Decimal = split
                                .amounts
                                .iter()
                                .map(|a| parse_canonical(a).unwrap())
                                .sum();
                            assert_eq!(sum, prize.amount, "{id} {} {}", p.amount, f.form);
                        }
                        let listed: u32 = f.splits.iter().map(|s| s.samples).sum();
                        assert_eq!(listed + f.other_splits, f.samples);
                        assert!(!f.example.is_empty());
                    }
                }
            }
        }
    }

    #[test]
    fn la_ruche_d_or_shows_its_figures_and_its_honey() {
        let game = Game::builtin("ruche-or").unwrap();
        let stakes = preview(&game).unwrap();
        let two = stakes.iter().find(|s| s.price == "2").unwrap();
        assert_eq!(two.payout_percent, "70");
        assert_eq!(two.hit_frequency_percent, "26.48");
        assert_eq!(two.odds_one_in, "3.78");
        assert_eq!(two.near_miss_rates.len(), 3, "{:?}", two.near_miss_rates);
        // 2 € (60 000 tickets of 900 000): one in 15, 9.52 % of the prizes.
        let low = two.prizes.last().unwrap();
        assert_eq!((low.amount.as_str(), low.odds_one_in.as_str()), ("2", "15"));
        assert_eq!(low.payout_share_percent, "9.52");
        // 20 € is shown by a row, and also by honey (7 pots pay 20 € at this stake).
        let twenty = two.prizes.iter().find(|p| p.amount == "20").unwrap();
        let forms: Vec<&str> = twenty.forms.iter().map(|f| f.form.as_str()).collect();
        assert!(forms.contains(&"row"), "{forms:?}");
        assert!(
            twenty
                .forms
                .iter()
                .flat_map(|f| &f.example)
                .any(|w| w.contains("honey pots")),
            "{:?}",
            twenty.forms
        );
    }

    #[test]
    fn l_annee_de_la_chance_shows_months_and_the_clover() {
        let game = Game::builtin("annee-chance").unwrap();
        let stakes = preview(&game).unwrap();
        let forms: Vec<&str> = stakes[0]
            .prizes
            .iter()
            .flat_map(|p| p.forms.iter().map(|f| f.form.as_str()))
            .collect();
        assert!(forms.iter().any(|f| f.contains("clover")), "{forms:?}");
        assert!(forms.iter().any(|f| f.contains("month")), "{forms:?}");
    }

    #[test]
    fn a_part_s_amount_is_read_after_its_arrow() {
        assert_eq!(part_amount("row 4: 3 × P → 20 €"), Some(Decimal::from(20)));
        assert_eq!(
            part_amount("EXTRA hive 1, 6 honey pots → 7.5 €"),
            "7.5".parse().ok()
        );
        assert_eq!(
            part_amount("row 5: 3 × P → 5000 € × 10 = 50000 €"),
            Some(Decimal::from(50000))
        );
        assert_eq!(part_amount("row 4"), None);
    }
}
