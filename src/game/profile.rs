//! Jurisdiction profiles: the bounds a regulator sets on a game, as data
//! (`games/profiles/<id>.toml`, built into the binary), checked when a definition that names
//! one (`profile = "fdj"`) is loaded. Whatever the profile, and without one, no stake may pay
//! back more than its stakes: a definition paying more than 100 % is a typo (two zeros too many
//! in a top prize), never a game.

use crate::money::canonical;
use rust_decimal::Decimal;
use serde::Deserialize;
use thiserror::Error;

/// A profile that cannot be used (the loader places it under the definition's `profile`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProfileError {
    /// No built-in profile of this id.
    #[error("no profile {}: the profiles are {}", crate::untrusted::shown(.0), ids().join(", "))]
    Unknown(String),
    /// A built-in profile that does not parse (a fault of the program's data).
    #[error("built-in profile {id}: {error}")]
    BuiltIn {
        /// The profile.
        id: String,
        /// Why.
        error: Box<ProfileError>,
    },
    /// Not valid TOML, or not the profile's fields.
    #[error("{0}")]
    Syntax(String),
    /// A share (`payout_min`, `payout_max`) that is not between 0 and 1.
    #[error("{key} = {value:?}: a share between 0 and 1")]
    Share {
        /// The key.
        key: &'static str,
        /// Its value.
        value: String,
    },
    /// The bounds are the wrong way round.
    #[error("payout_min is more than payout_max")]
    Bounds,
    /// `max_prize` is not a canonical amount.
    #[error("max_prize = {0:?}: a canonical amount in euros")]
    MaxPrize(String),
}

/// A stake's near-miss settings asking for more than its profile allows (the loader places it
/// under the stake's `layout.near_miss`).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{feature} is asked at {rate}, more than the {max} profile {profile} ({source_}) allows")]
pub struct NearMissError {
    /// The near miss, by the report's feature name (`near_miss_rows`...).
    pub feature: String,
    /// The rate asked.
    pub rate: f64,
    /// The profile's bound.
    pub max: f64,
    /// The profile's id.
    pub profile: String,
    /// Where its bounds come from.
    pub source_: String,
}

/// A stake's table that pays back more than its stakes, or is outside its profile's bounds
/// (the loader places it under the stake's `prizes`). Each names the figure and the bound.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PayoutError {
    /// The stakes of a block overflow, or are zero.
    #[error("the stakes of a block cannot be computed")]
    Stakes,
    /// The payout cannot be computed.
    #[error("the payout cannot be computed")]
    Payout,
    /// More than 100 %: `figure` says the prizes, the payout and the stakes.
    #[error("{figure}: a game never pays back more than 100 % of its stakes. Is an amount or a count mistyped (a top prize with two zeros too many)?")]
    OverStakes {
        /// The figure, in words.
        figure: String,
    },
    /// Outside the profile's payout bounds.
    #[error("{figure}: profile {profile} ({source_}) allows {min} % to {max} %")]
    OutOfProfile {
        /// The figure, in words.
        figure: String,
        /// The profile's id.
        profile: String,
        /// Where its bounds come from.
        source_: String,
        /// Its lowest payout, in percent.
        min: String,
        /// Its highest payout, in percent.
        max: String,
    },
    /// A prize above the profile's maximum.
    #[error(
        "the top prize {prize} € is more than the {max} € profile {profile} ({source_}) allows"
    )]
    TopPrize {
        /// The top prize, canonical.
        prize: String,
        /// The profile's maximum, canonical.
        max: String,
        /// The profile's id.
        profile: String,
        /// Where its bounds come from.
        source_: String,
    },
}

/// Built-in profiles: (id, TOML text).
const BUILTIN: &[(&str, &str)] = &[("fdj", include_str!("../../games/profiles/fdj.toml"))];

/// A jurisdiction's bounds on one game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Short id, as definitions name it (`fdj`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// The text the bounds come from (law, article).
    pub source: String,
    /// Least share of the stakes paid back as prizes, per stake (0.62 for 62 %).
    pub payout_min: Decimal,
    /// Greatest share of the stakes paid back as prizes, per stake.
    pub payout_max: Decimal,
    /// Largest prize a ticket may win, if the jurisdiction bounds it.
    pub max_prize: Option<Decimal>,
    /// Highest rate a definition may ask for any one near miss (the rates of
    /// [`crate::mechanic::Mechanic::near_miss_rates`], between 0 and 1), if the jurisdiction
    /// bounds them.
    pub near_miss_max: Option<Decimal>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    id: String,
    name: String,
    source: String,
    payout_min: String,
    payout_max: String,
    #[serde(default)]
    max_prize: Option<String>,
    #[serde(default)]
    near_miss_max: Option<String>,
}

/// The ids of the built-in profiles.
pub fn ids() -> Vec<&'static str> {
    BUILTIN.iter().map(|(id, _)| *id).collect()
}

impl Profile {
    /// The built-in profile `id`; the error lists the known ones.
    pub fn builtin(id: &str) -> Result<Profile, ProfileError> {
        let text = BUILTIN
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, t)| *t)
            .ok_or_else(|| ProfileError::Unknown(id.to_string()))?;
        Profile::parse(text).map_err(|e| ProfileError::BuiltIn {
            id: id.to_string(),
            error: Box::new(e),
        })
    }

    /// Parses and checks a profile's text.
    pub fn parse(text: &str) -> Result<Profile, ProfileError> {
        let raw: RawProfile =
            toml::from_str(text).map_err(|e| ProfileError::Syntax(e.message().to_string()))?;
        let share = |key: &'static str, value: &str| -> Result<Decimal, ProfileError> {
            value
                .parse::<Decimal>()
                .ok()
                .filter(|d| *d >= Decimal::ZERO && *d <= Decimal::ONE)
                .ok_or_else(|| ProfileError::Share {
                    key,
                    value: value.to_string(),
                })
        };
        let payout_min = share("payout_min", &raw.payout_min)?;
        let payout_max = share("payout_max", &raw.payout_max)?;
        if payout_min > payout_max {
            return Err(ProfileError::Bounds);
        }
        let max_prize = match &raw.max_prize {
            None => None,
            Some(text) => Some(
                crate::money::parse_canonical(text)
                    .ok_or_else(|| ProfileError::MaxPrize(text.clone()))?,
            ),
        };
        let near_miss_max = raw
            .near_miss_max
            .as_deref()
            .map(|text| share("near_miss_max", text))
            .transpose()?;
        Ok(Profile {
            id: raw.id,
            name: raw.name,
            source: raw.source,
            payout_min,
            payout_max,
            max_prize,
            near_miss_max,
        })
    }
}

/// A share as a percentage with at most three decimals, e.g. `70`, `62.5`, `233.333` (enough
/// that a payout a cent above a bound never prints as the bound).
pub fn percent(share: Decimal) -> String {
    canonical((share * Decimal::from(100)).round_dp(3))
}

/// Checks one stake's table: its payout (`total` over `price × block_size`) is at most 100 %,
/// and within `profile`'s bounds if there is one, and no prize is above the profile's maximum.
/// The message names the figure and the bound.
pub fn check_stake(
    profile: Option<&Profile>,
    price: Decimal,
    block_size: u64,
    total: Decimal,
    top_prize: Decimal,
) -> Result<(), PayoutError> {
    let stakes = price
        .checked_mul(Decimal::from(block_size))
        .filter(|s| *s > Decimal::ZERO)
        .ok_or(PayoutError::Stakes)?;
    let payout = total.checked_div(stakes).ok_or(PayoutError::Payout)?;
    let figure = format!(
        "the prizes ({} €) are {} % of the stakes of a block ({} tickets at {} € = {} €)",
        canonical(total),
        percent(payout),
        block_size,
        canonical(price),
        canonical(stakes)
    );
    if payout > Decimal::ONE {
        return Err(PayoutError::OverStakes { figure });
    }
    let Some(profile) = profile else {
        return Ok(());
    };
    if payout < profile.payout_min || payout > profile.payout_max {
        return Err(PayoutError::OutOfProfile {
            figure,
            profile: profile.id.clone(),
            source_: profile.source.clone(),
            min: percent(profile.payout_min),
            max: percent(profile.payout_max),
        });
    }
    if let Some(max) = profile.max_prize {
        if top_prize > max {
            return Err(PayoutError::TopPrize {
                prize: canonical(top_prize),
                max: canonical(max),
                profile: profile.id.clone(),
                source_: profile.source.clone(),
            });
        }
    }
    Ok(())
}

/// Checks one stake's near-miss settings (`rates`, as the mechanic asks them) against
/// `profile`'s bound, if it has one: the error names the near miss, the rate and the bound.
pub fn check_near_misses(
    profile: Option<&Profile>,
    rates: &[(&'static str, f64)],
) -> Result<(), NearMissError> {
    use rust_decimal::prelude::ToPrimitive;
    let Some((profile, max)) = profile.and_then(|p| Some((p, p.near_miss_max?.to_f64()?))) else {
        return Ok(());
    };
    match rates.iter().find(|(_, rate)| *rate > max) {
        None => Ok(()),
        Some((feature, rate)) => Err(NearMissError {
            feature: (*feature).to_string(),
            rate: *rate,
            max,
            profile: profile.id.clone(),
            source_: profile.source.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile may bound the near-miss rates a definition asks (data, as its payout bounds
    /// are); the FDJ's sets none (the décret sets none), and a rate above the bound is refused
    /// naming the near miss, the rate and the bound.
    #[test]
    fn near_miss_rates_asked_are_bounded_by_a_profile_that_says_so() {
        let fdj = Profile::builtin("fdj").unwrap();
        assert_eq!(fdj.near_miss_max, None);
        let rates = [("near_miss_rows", 0.3), ("near_miss_honey", 0.6)];
        assert_eq!(check_near_misses(Some(&fdj), &rates), Ok(()));
        assert_eq!(check_near_misses(None, &rates), Ok(()));
        let strict = Profile::parse(
            "id = \"lab\"\nname = \"a test\"\nsource = \"a test\"\npayout_min = \"0\"\npayout_max = \"1\"\nnear_miss_max = \"0.5\"\n",
        )
        .unwrap();
        assert_eq!(strict.near_miss_max, Some(d("0.5")));
        let e = check_near_misses(Some(&strict), &rates).unwrap_err();
        assert_eq!(
            e.to_string(),
            "near_miss_honey is asked at 0.6, more than the 0.5 profile lab (a test) allows"
        );
        assert_eq!(check_near_misses(Some(&strict), &rates[..1]), Ok(()));
        let bad = Profile::parse(
            "id = \"lab\"\nname = \"n\"\nsource = \"s\"\npayout_min = \"0\"\npayout_max = \"1\"\nnear_miss_max = \"1.5\"\n",
        );
        assert!(matches!(
            bad,
            Err(ProfileError::Share {
                key: "near_miss_max",
                ..
            })
        ));
    }

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn every_built_in_profile_parses() {
        for id in ids() {
            let p = Profile::builtin(id).unwrap();
            assert_eq!(p.id, id);
        }
        let fdj = Profile::builtin("fdj").unwrap();
        assert_eq!((fdj.payout_min, fdj.payout_max), (d("0.62"), d("0.75")));
        assert!(Profile::builtin("nowhere")
            .unwrap_err()
            .to_string()
            .contains("fdj"));
    }

    #[test]
    fn payouts_are_bounded_by_100_percent_and_by_the_profile() {
        let fdj = Profile::builtin("fdj").unwrap();
        // La ruche d'or at 2 €: 1 260 000 € of prizes for 1 800 000 € of stakes, 70 %.
        assert!(check_stake(None, d("2"), 900_000, d("1260000"), d("10000")).is_ok());
        assert!(check_stake(Some(&fdj), d("2"), 900_000, d("1260000"), d("10000")).is_ok());
        // Exactly 75 % is allowed; a cent more is not.
        assert!(check_stake(Some(&fdj), d("2"), 100, d("150"), d("10")).is_ok());
        let e = check_stake(Some(&fdj), d("2"), 100, d("150.01"), d("10"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("75 %") && e.contains("75.005 %") && e.contains("2019-1061"),
            "{e}"
        );
        let e = check_stake(Some(&fdj), d("2"), 100, d("100"), d("10"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("50 %") && e.contains("62 %"), "{e}");
        // 233 %: refused with or without a profile.
        let e = check_stake(None, d("3"), 100, d("700"), d("500"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("233.333 %") && e.contains("100 %"), "{e}");
    }

    #[test]
    fn a_maximum_prize_is_checked_when_the_profile_has_one() {
        let mut p = Profile::builtin("fdj").unwrap();
        p.max_prize = Some(d("1000"));
        let e = check_stake(Some(&p), d("2"), 100, d("140"), d("1000.5"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("1000.5 €") && e.contains("1000 €"), "{e}");
    }
}
