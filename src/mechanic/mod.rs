//! Game mechanics: how a layout shows a prize, and how a prize is read back from a layout.
//!
//! Every mechanic is a folder made to one template, the same files and names in each
//! (`<Name>` is `Ruche`, `Maxi`, `Calendar`):
//! - `mod.rs`: what the mechanic is, and its trait impls ([`Params`], [`Decoder`],
//!   [`Synthesizer`]), which only delegate;
//! - `params.rs`: `<Name>Settings`, its settings as a game definition writes them (a serde
//!   struct that refuses unknown keys), and `<Name>Params`, their checked form, the only thing
//!   the two halves share (private: `mod.rs` re-exports what others use);
//! - `decode.rs`: `<Name>Decoder` (`from_params`, `prize`, `prize_cents`, `form`,
//!   `max_layout_len`), the referee, written from the published rules: `verify` and the tests
//!   trust it, and every synthesized ticket is decoded before it is written;
//! - `synth.rs`: `<Name>Synthesizer` (`new`, `synthesize`), draws a natural-looking layout for
//!   a given prize;
//! - `features.rs`: `<Name>Explainer` (`new`), a ticket explained for `show` and `report`, and
//!   the report's one-pass `features`;
//! - `tests.rs`: the decoder on hand-written layouts, the synthesizer checked by the decoder.
//!
//! The two hive games share their geometry and row reading ([`hive`], [`hive::read_row`]);
//! every decoder reads with one [`Cursor`]. What a decoder refuses is a [`LayoutError`] naming
//! the rule broken (each mechanic's rules are an enum of its `decode.rs`); what a synthesizer
//! cannot show is an [`Unshowable`] ([`BuildError`]). [`agree`] states what ties each fast
//! reading to its referee, for the tests and the fuzz targets. The registry below is the one
//! place that lists the mechanics: the
//! [`Mechanic`] enum and the functions that build the two halves from it. `mechanic` knows
//! nothing of `game`: it is given the `layout` tables and the prize amounts as plain data.

pub mod agree;
pub mod calendar;
#[cfg(test)]
pub(crate) mod changed;
pub(crate) mod cursor;
pub(crate) mod draw;
mod error;
pub mod explain;
pub mod hive;
pub mod maxi_ruche;
pub(crate) mod rows;
pub mod ruche;
pub(crate) mod util;

pub(crate) use cursor::Cursor;
pub use error::{BuildError, Expected, Found, LayoutError, Quoted, SynthesisError, Unshowable};

use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use thiserror::Error;

/// The registry: one line per mechanic, `Variant(its checked parameters)`. It makes the
/// [`Mechanic`] enum, the list of names, and the dispatch from a name to a mechanic's settings
/// and from a [`Mechanic`] to its decoder and synthesizer.
macro_rules! registry {
    ($($variant:ident($params:ty)),+ $(,)?) => {
        /// The mechanic of one stake, with its checked layout parameters.
        #[derive(Debug, Clone)]
        pub enum Mechanic {
            $(
                #[doc = concat!("`", stringify!($params), "`")]
                $variant($params),
            )+
        }

        /// The mechanics' names, as `mechanic = "..."` writes them in a game definition.
        pub const NAMES: &[&str] = &[$(<$params as Params>::NAME),+];

        impl Mechanic {
            /// Reads the `layout` settings of every stake of a game definition (`[layout]`
            /// overlaid by each `[stakes.layout]`) for the mechanic called `name`, in the order
            /// of the file's `[[stakes]]`. A misspelt key or a value of the wrong type fails the
            /// whole file ([`SettingsError::Syntax`], with its place); an impossible value fails
            /// its stake only (the inner `Err`, naming the key).
            pub fn read_stakes(
                name: &str,
                definition: &str,
            ) -> Result<Vec<Result<Mechanic, SettingError>>, SettingsError> {
                $(
                    if name == <$params as Params>::NAME {
                        return Ok(read_stakes::<$params>(definition)?
                            .into_iter()
                            .map(|p| p.map(Mechanic::$variant))
                            .collect());
                    }
                )+
                Err(SettingsError::Unknown(name.to_string()))
            }

            /// Calls `visitor` with the settings type of the mechanic called `name` (`None`
            /// for no such mechanic): how `game::schema` lists the keys a `layout` table of it
            /// accepts, without a list of mechanics of its own.
            pub fn visit_settings<V: SettingsVisitor>(name: &str, visitor: V) -> Option<V::Output> {
                $(
                    if name == <$params as Params>::NAME {
                        return Some(visitor.visit::<<$params as Params>::Settings>());
                    }
                )+
                None
            }

            /// The mechanic's name in a game definition.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Mechanic::$variant(_) => <$params as Params>::NAME,)+
                }
            }

            /// The near-miss rates the game definition asks for, by the feature names of the
            /// report (`near_miss_rows`...): what `report` shows beside the rates obtained.
            pub fn near_miss_rates(&self) -> Vec<(&'static str, f64)> {
                match self {
                    $(Mechanic::$variant(p) => p.near_miss_rates(),)+
                }
            }

            /// The referee of this stake's layouts.
            pub fn decoder(&self) -> Box<dyn Decoder> {
                match self {
                    $(Mechanic::$variant(p) => Box::new(p.decoder()),)+
                }
            }

            /// The explainer of this stake's layouts (`show`, `report`).
            pub fn explainer(&self) -> Box<dyn explain::Explain> {
                match self {
                    $(Mechanic::$variant(p) => Box::new(p.explainer()),)+
                }
            }

            /// The synthesizer for this stake, whose prize table lists `prizes` (losers
            /// excluded); fails, naming the setting, if a prize cannot be shown, or if a signal
            /// arrives meanwhile (the build checks for one many times a second).
            pub fn synthesizer(
                &self,
                prizes: &[Decimal],
            ) -> Result<Box<dyn Synthesizer>, BuildError> {
                match self {
                    $(Mechanic::$variant(p) => Ok(Box::new(p.synthesizer(prizes)?)),)+
                }
            }
        }
    };
}

registry! {
    Ruche(ruche::RucheParams),
    MaxiRuche(maxi_ruche::MaxiParams),
    Calendar(calendar::CalendarParams),
}

/// Something done with a mechanic's settings type, whichever it is
/// ([`Mechanic::visit_settings`]).
pub trait SettingsVisitor {
    /// What the visit gives.
    type Output;
    /// The visit of the settings type `S`.
    fn visit<S: DeserializeOwned + Default + Clone>(self) -> Self::Output;
}

/// What a mechanic's folder provides to the registry.
pub trait Params: Sized + Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The name a game definition gives it: `mechanic = "ruche"`.
    const NAME: &'static str;
    /// One `layout` table as written, every key optional so that a stake's
    /// `[stakes.layout]` can override the game's `[layout]` key by key. It must refuse unknown
    /// keys (`#[serde(deny_unknown_fields)]`): a misspelt setting is never ignored.
    type Settings: DeserializeOwned + Default + Clone;
    /// The referee.
    type Decoder: Decoder + 'static;
    /// The layout maker.
    type Synthesizer: Synthesizer + 'static;
    /// Explains a layout for `show` and `report` (its prize and form are the decoder's).
    type Explainer: explain::Explain + 'static;

    /// The game's settings with the stake's on top.
    fn overlay(game: &Self::Settings, stake: Self::Settings) -> Self::Settings;
    /// Checks the settings of one stake; the message names the key at fault and the fix.
    fn check(settings: Self::Settings) -> Result<Self, SettingError>;
    /// The decoder for these parameters.
    fn decoder(&self) -> Self::Decoder;
    /// The near-miss rates these settings ask for, by feature name (`near_miss_rows`...).
    fn near_miss_rates(&self) -> Vec<(&'static str, f64)>;
    /// The synthesizer for these parameters and the stake's prize amounts (losers excluded);
    /// the error ([`Unshowable`]) names a prize that cannot be shown and the setting to
    /// change. Its work is polynomial in the sizes of the lists, which SPEC §6.1 bounds, and
    /// it calls [`crate::interrupt::check`] as it goes.
    fn synthesizer(&self, prizes: &[Decimal]) -> Result<Self::Synthesizer, BuildError>;
    /// The explainer for these parameters.
    fn explainer(&self) -> Self::Explainer;
}

/// Calls [`crate::interrupt::check`] once every `2^16` calls of [`Ticker::tick`]: what the
/// synthesizers' start-up loops call at each combination they weigh (a few nanoseconds each),
/// so that a signal stops them within a millisecond or so, at no measurable cost.
#[derive(Debug)]
pub(crate) struct Ticker {
    steps: u32,
    check: fn() -> Result<(), crate::interrupt::Interrupted>,
}

impl Default for Ticker {
    fn default() -> Self {
        Ticker {
            steps: 0,
            check: crate::interrupt::check,
        }
    }
}

impl Ticker {
    /// One more step of work; `Err` once a signal has arrived.
    #[inline]
    pub(crate) fn tick(&mut self) -> Result<(), crate::interrupt::Interrupted> {
        self.steps = self.steps.wrapping_add(1);
        if self.steps & 0xffff == 0 {
            (self.check)()?;
        }
        Ok(())
    }

    /// A ticker whose checks find that a SIGTERM has arrived: for tests of the loops that
    /// tick (a test cannot raise a signal without stopping every other test of the process).
    #[cfg(test)]
    pub(crate) fn signalled() -> Self {
        Ticker {
            steps: 0,
            check: || Err(crate::interrupt::Interrupted(15)),
        }
    }
}

/// Why the layout settings of a definition cannot be read.
#[derive(Debug, Error)]
pub enum SettingsError {
    /// `mechanic = "..."` names no mechanic.
    #[error("unknown mechanic {}: the mechanics are {}", crate::untrusted::shown(.0), NAMES.join(", "))]
    Unknown(String),
    /// A `layout` table has an unknown key or a value of the wrong type; the TOML error holds
    /// the place and says which keys are valid.
    #[error("{0}")]
    Syntax(toml::de::Error),
}

/// A layout setting of one stake that cannot be used ([`Params::check`]): the key at fault,
/// as the definition writes it (`row_amounts[2]`, `honey`, `near_miss.extra_rate`), and what
/// is wrong and how to fix it. The game's loader places it under its stake
/// ([`crate::game::GameError::Invalid`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SettingError {
    /// A list longer than SPEC §6.1 allows: refused before any entry is read.
    #[error("{key}: {len} entries, at most {max} (SPEC §6.1)")]
    TooMany {
        /// The list.
        key: String,
        /// Its entries.
        len: usize,
        /// The most allowed.
        max: usize,
    },
    /// A required key is missing.
    #[error("'{key}' is missing: {how}")]
    Missing {
        /// The key.
        key: String,
        /// How to write it.
        how: String,
    },
    /// A list that must not be empty is.
    #[error("'{key}' is empty")]
    Empty {
        /// The list.
        key: String,
    },
    /// A value that is wrong: `key: message`.
    #[error("{key}: {message}")]
    Invalid {
        /// The key or entry at fault.
        key: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// A value that is wrong, said in a sentence that names its key.
    #[error("{message}")]
    Rule {
        /// The key or entry at fault.
        key: String,
        /// The sentence.
        message: String,
    },
}

impl SettingError {
    /// The key or entry at fault.
    pub fn key(&self) -> &str {
        match self {
            SettingError::TooMany { key, .. }
            | SettingError::Missing { key, .. }
            | SettingError::Empty { key }
            | SettingError::Invalid { key, .. }
            | SettingError::Rule { key, .. } => key,
        }
    }

    /// `key: message`.
    pub fn invalid(key: impl Into<String>, message: impl Into<String>) -> SettingError {
        SettingError::Invalid {
            key: key.into(),
            message: message.into(),
        }
    }

    /// A sentence `message` about `key`, which it names.
    pub fn rule(key: impl Into<String>, message: impl Into<String>) -> SettingError {
        SettingError::Rule {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// The `layout` tables of a definition, read as `P`'s settings (the game's overlaid by each
/// stake's), in the order of its `[[stakes]]`; every other key is left to the game's reader.
fn stake_settings<P: Params>(definition: &str) -> Result<Vec<P::Settings>, toml::de::Error> {
    #[derive(Deserialize)]
    struct Definition<S> {
        #[serde(default)]
        layout: Option<S>,
        #[serde(default)]
        stakes: Vec<StakeLayout<S>>,
    }
    #[derive(Deserialize)]
    struct StakeLayout<S> {
        #[serde(default)]
        layout: Option<S>,
    }
    let doc: Definition<P::Settings> = toml::from_str(definition)?;
    let game = doc.layout.unwrap_or_default();
    Ok(doc
        .stakes
        .into_iter()
        .map(|s| P::overlay(&game, s.layout.unwrap_or_default()))
        .collect())
}

/// Checks the settings of every stake of a definition.
fn read_stakes<P: Params>(definition: &str) -> Result<Vec<Result<P, SettingError>>, SettingsError> {
    let settings = stake_settings::<P>(definition).map_err(SettingsError::Syntax)?;
    Ok(settings.into_iter().map(P::check).collect())
}

/// The settings of stake `index` (in the file's order) of a definition, for tests that edit
/// them before checking.
#[cfg(test)]
pub(crate) fn settings_of<P: Params>(definition: &str, index: usize) -> P::Settings {
    stake_settings::<P>(definition)
        .expect("the test definition reads")
        .swap_remove(index)
}

/// The fast generator that fills in the cosmetic parts of a layout. It never decides who wins:
/// the prize is given to the synthesizer, drawn beforehand by the ChaCha20 shuffle.
pub type LayoutRng = rand_pcg::Pcg64Mcg;

/// `a + b` for the wins of a layout. Amounts a game may state are bounded (SPEC §6) so that
/// no layout's wins can overflow, but a decoder reads untrusted files: it answers, it never
/// panics, even on a stake built without those bounds.
pub(crate) fn add_wins(a: Decimal, b: Decimal) -> Result<Decimal, LayoutError> {
    a.checked_add(b).ok_or_else(too_large)
}

/// `amount × factor` for a multiplied win, checked like [`add_wins`].
pub(crate) fn multiply_win(amount: Decimal, factor: u32) -> Result<Decimal, LayoutError> {
    amount
        .checked_mul(Decimal::from(factor))
        .ok_or_else(too_large)
}

#[cold]
fn too_large() -> LayoutError {
    LayoutError::WinsOverflow
}

/// A prize read by a decoder's `Decimal` path, in whole cents (what
/// [`Decoder::decode_cents`] answers when its one-pass reading declines a layout).
#[cold]
pub(crate) fn prize_in_cents(prize: Decimal) -> Result<u64, LayoutError> {
    crate::money::cents(prize).ok_or(LayoutError::NotWholeCents { prize })
}

/// Reads a layout under the game's rules. A layout is bytes: it comes from a file nobody
/// vouches for, and every valid one is ASCII.
pub trait Decoder: Send + Sync {
    /// The prize this layout wins, or the rule it breaks.
    fn decode(&self, layout: &[u8]) -> Result<Decimal, LayoutError>;

    /// The fast reading of a layout: its prize in euro cents, in one pass over the bytes,
    /// without allocating and without `Decimal` arithmetic, or `None` for any layout it does
    /// not read (an invalid one, or one it leaves to [`decode`](Self::decode)). Whatever it
    /// reads must be [`decode`](Self::decode)'s verdict: the referee tests
    /// (`mechanic::changed`) compare them on mutated layouts.
    fn prize_cents(&self, layout: &[u8]) -> Option<u64>;

    /// The prize this layout wins in euro cents, or the rule it breaks: what `verify` and
    /// `emit` ask of every ticket. [`prize_cents`](Self::prize_cents) when it reads the
    /// layout; otherwise the layout is read again by [`decode`](Self::decode), which names the
    /// rule it breaks.
    fn decode_cents(&self, layout: &[u8]) -> Result<u64, LayoutError> {
        match self.prize_cents(layout) {
            Some(cents) => Ok(cents),
            None => prize_in_cents(self.decode(layout)?),
        }
    }

    /// A short description of the way the layout shows its prize, for reports: e.g.
    /// `row`, `2 rows`, `honey + EXTRA`, `bonus 8 bees`, `loss`. Layouts of the same form
    /// share the same text.
    fn form(&self, layout: &[u8]) -> Result<String, LayoutError>;

    /// The length in bytes of the longest layout this decoder can accept, from the grammar and
    /// the longest amounts the stake allows: `verify` refuses a longer ticket line without
    /// decoding it, and a reader can bound what it holds in memory.
    fn max_layout_len(&self) -> usize;
}

/// Draws layouts for prizes.
pub trait Synthesizer: Send + Sync {
    /// Appends to `out` a layout (ASCII) that decodes to exactly `prize` (which may be zero):
    /// straight into the chunk of ticket lines being made.
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError>;
}

#[cfg(test)]
mod tests {
    //! Every decoder reads untrusted files: whatever the bytes, it answers, never panics.

    use super::*;
    use crate::game::{Game, BUILTIN};
    use proptest::prelude::*;
    use rand::SeedableRng;

    /// A decoder and a layout it reads.
    type Sample = (Box<dyn Decoder>, Vec<u8>);

    /// A synthesized layout of each built-in game and stake, to mutate (built once).
    fn samples() -> &'static [Sample] {
        static SAMPLES: std::sync::OnceLock<Vec<Sample>> = std::sync::OnceLock::new();
        SAMPLES.get_or_init(build_samples)
    }

    /// Layouts of every prize tier (losers too) of every built-in stake, a few seeds each.
    fn tier_samples() -> &'static [Sample] {
        static SAMPLES: std::sync::OnceLock<Vec<Sample>> = std::sync::OnceLock::new();
        SAMPLES.get_or_init(|| {
            let mut out = Vec::new();
            for (id, _) in BUILTIN {
                let game = Game::builtin(id).unwrap();
                for stake in &game.stakes {
                    let synth = stake.synthesizer().unwrap();
                    for tier in stake.tiers() {
                        for seed in 0..3 {
                            let mut layout = Vec::new();
                            let mut rng = LayoutRng::seed_from_u64(seed);
                            synth.synthesize(tier, &mut rng, &mut layout).unwrap();
                            let decoder = stake.decoder();
                            // Valid layouts read the same both ways.
                            assert_eq!(
                                decoder.decode_cents(&layout).ok(),
                                crate::money::cents(tier)
                            );
                            out.push((decoder, layout));
                        }
                    }
                }
            }
            out
        })
    }

    fn build_samples() -> Vec<Sample> {
        let mut out = Vec::new();
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                let synth = stake.synthesizer().unwrap();
                let mut layout = Vec::new();
                let mut rng = LayoutRng::seed_from_u64(1);
                synth
                    .synthesize(stake.prizes[0].amount, &mut rng, &mut layout)
                    .unwrap();
                out.push((stake.decoder(), layout));
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn decoders_never_panic_on_mutated_layouts(
            which in 0usize..6,
            at in any::<prop::sample::Index>(),
            cut in any::<prop::sample::Index>(),
            byte in prop::sample::select(b"PABHEFQ23456X.:/|#+-0123456789\xc3\xa9 ".to_vec()),
            mode in 0u8..4,
        ) {
            let samples = samples();
            let (decoder, layout) = &samples[which % samples.len()];
            let mut bytes = layout.clone();
            let i = at.index(bytes.len());
            match mode {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => { bytes.remove(i); }
                _ => bytes.truncate(cut.index(bytes.len())),
            }
            let decoded = decoder.decode(&bytes);
            let form = decoder.form(&bytes);
            prop_assert_eq!(decoded.is_ok(), form.is_ok());
            // The one-pass reading in cents gives the same verdict: any byte change of a valid
            // layout is refused, or read as the prize the new bytes show.
            let in_cents = decoder.decode_cents(&bytes);
            prop_assert_eq!(
                in_cents.clone().ok(),
                decoded.clone().ok().map(|p| crate::money::cents(p).unwrap())
            );
            prop_assert_eq!(in_cents.err(), decoded.clone().err());
            // What decodes is never longer than the bound verify reads lines with.
            prop_assert!(layout.len() <= decoder.max_layout_len());
            if decoded.is_ok() {
                prop_assert!(bytes.len() <= decoder.max_layout_len());
            }
        }

        #[test]
        fn decoders_never_panic_on_arbitrary_text(which in 0usize..6, text in ".{0,300}") {
            let samples = samples();
            let (decoder, _) = &samples[which % samples.len()];
            let decoded = decoder.decode(text.as_bytes());
            let _ = decoder.form(text.as_bytes());
            prop_assert_eq!(decoder.decode_cents(text.as_bytes()).err(), decoded.err());
        }

        /// Any change of one to three bytes of a valid layout of any prize is either refused by
        /// both readings of the decoder, or read by both as the prize the new bytes show.
        #[test]
        fn the_one_pass_reading_agrees_with_the_decoder_on_changed_layouts(
            which in any::<prop::sample::Index>(),
            edits in prop::collection::vec(
                (any::<prop::sample::Index>(), prop_oneof![
                    prop::sample::select(b"PABHEFQ23456X.:/|#+-0123456789MJDSVLKNRZ".to_vec()),
                    any::<u8>(),
                ], 0u8..3),
                1..4,
            ),
        ) {
            let samples = tier_samples();
            let (decoder, layout) = &samples[which.index(samples.len())];
            let mut bytes = layout.clone();
            for (at, byte, mode) in edits {
                let i = at.index(bytes.len().max(1));
                match mode {
                    0 if i < bytes.len() => bytes[i] = byte,
                    1 => bytes.insert(i.min(bytes.len()), byte),
                    _ if i < bytes.len() => { bytes.remove(i); }
                    _ => {}
                }
            }
            let decoded = decoder.decode(&bytes);
            let in_cents = decoder.decode_cents(&bytes);
            match (&decoded, &in_cents) {
                (Ok(prize), Ok(cents)) => {
                    prop_assert_eq!(crate::money::cents(*prize), Some(*cents));
                }
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                _ => prop_assert!(
                    false,
                    "{:?}: decode says {:?}, decode_cents {:?}",
                    String::from_utf8_lossy(&bytes),
                    decoded,
                    in_cents
                ),
            }
        }
    }
}

/// Test helpers: the decoders and synthesizers on text, as tests write layouts.
#[cfg(test)]
pub(crate) mod text {
    use super::{Decoder, LayoutError, LayoutRng, SynthesisError, Synthesizer};
    use rust_decimal::Decimal;

    /// [`Decoder`] on anything that is bytes (`&str`, `&String`, `&[u8]`...).
    pub(crate) trait DecodeText {
        fn decode_text(&self, layout: impl AsRef<[u8]>) -> Result<Decimal, LayoutError>;
        fn form_text(&self, layout: impl AsRef<[u8]>) -> Result<String, LayoutError>;
    }

    impl<D: Decoder + ?Sized> DecodeText for D {
        fn decode_text(&self, layout: impl AsRef<[u8]>) -> Result<Decimal, LayoutError> {
            self.decode(layout.as_ref())
        }
        fn form_text(&self, layout: impl AsRef<[u8]>) -> Result<String, LayoutError> {
            self.form(layout.as_ref())
        }
    }

    /// [`Synthesizer`] appending to a `String`.
    pub(crate) trait SynthesizeText {
        fn synthesize_text(
            &self,
            prize: Decimal,
            rng: &mut LayoutRng,
            out: &mut String,
        ) -> Result<(), SynthesisError>;
    }

    impl<S: Synthesizer + ?Sized> SynthesizeText for S {
        fn synthesize_text(
            &self,
            prize: Decimal,
            rng: &mut LayoutRng,
            out: &mut String,
        ) -> Result<(), SynthesisError> {
            let mut bytes = Vec::new();
            self.synthesize(prize, rng, &mut bytes)?;
            out.push_str(std::str::from_utf8(&bytes).expect("layouts are ASCII"));
            Ok(())
        }
    }
}
