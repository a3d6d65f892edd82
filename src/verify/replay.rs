//! Seed replay, for an audit with the emission's seed: the manifest's commitment must be the
//! seed's, and every ticket's prize the one the seed draws and its layout the one the seed
//! makes. Only meaningful with the generator that made the block.

use super::lines::TicketCheck;
use crate::block::manifest::{Manifest, GENERATOR_VERSION};
use crate::game::{Game, Stake};
use crate::mechanic::Synthesizer;
use crate::plan::{seed_commitment, BlockKey, Seed};
use crate::problem::{Code, Fault, Problem};
use crate::untrusted::{shown, shown_path};
use std::path::Path;

/// With the seed: the block as the seed makes it.
pub(super) struct Replay {
    key: BlockKey,
    /// Prize tier of every ticket, as drawn.
    order: Vec<u8>,
    synthesizer: Box<dyn Synthesizer>,
}

impl Replay {
    /// The block the seed makes at the manifest's coordinates; the error is the problem that
    /// forbids a replay (another seed, another generator, a game that cannot synthesize).
    pub(super) fn new(
        seed: &Seed,
        beacon: Option<&crate::emission::beacon::Round>,
        manifest: &Manifest,
        manifest_path: &Path,
        game: &Game,
        stake: &Stake,
        name: &str,
    ) -> Result<Replay, Problem> {
        let shown_manifest = shown_path(manifest_path);
        if hex::encode(seed_commitment(seed)) != manifest.seed_sha256 {
            return Err(Problem::in_file(
                Code::ReplaySeed,
                &shown_manifest,
                format!(
                    "{shown_manifest}: seed_sha256 is not the SHA-256 of the seed given: this block was made from another seed (an emission has one seed)"
                ),
            ));
        }
        // A replay is only meaningful with the generator that made the block.
        if manifest.generator_version() != Some(GENERATOR_VERSION) {
            return Err(Problem::in_file(
                Code::ReplayGenerator,
                &shown_manifest,
                format!(
                    "{}: the block was made by {} and this program is generator {GENERATOR_VERSION} ({}): it cannot replay it; use the version that made it",
                    manifest_path.display(),
                    crate::emission::shown(manifest.generator.as_bytes()),
                    crate::block::manifest::generator()
                ),
            ));
        }
        let synthesizer = stake.synthesizer().map_err(|m| {
            Problem::in_file(
                Code::ReplaySynthesizer,
                name,
                format!("{name}: game {}: {m}", game.id),
            )
        })?;
        // A beacon emission's blocks come from the secret and the round its record names.
        let seed = crate::emission::beacon::replay_seed(seed, beacon, manifest, manifest_path)
            .map_err(|m| Problem::in_file(Code::ReplayBeacon, &shown_manifest, m.to_string()))?;
        let key = BlockKey::derive(
            &seed,
            &game.id,
            stake,
            manifest.emission().number(),
            manifest.id.number(),
        );
        Ok(Replay {
            order: key.prize_order(stake, game.block_size),
            key,
            synthesizer,
        })
    }

    /// Compares a ticket with the one the seed makes at `index`.
    pub(super) fn check(
        &self,
        tickets: &TicketCheck,
        index: u64,
        tier: Option<usize>,
        layout: &[u8],
        problems: &mut Vec<Fault>,
    ) {
        let Some(&drawn) = usize::try_from(index).ok().and_then(|i| self.order.get(i)) else {
            problems.push(Fault::new(
                Code::ReplayNoTicket,
                "the seed draws no ticket at this index",
            ));
            return;
        };
        let drawn = usize::from(drawn);
        if tier != Some(drawn) {
            problems.push(Fault::new(
                Code::ReplayPrize,
                format!(
                    "the seed draws {} € for this ticket",
                    tickets.tier_text[drawn]
                ),
            ));
            return;
        }
        let mut made = Vec::with_capacity(layout.len());
        let mut rng = self.key.ticket_rng(index);
        match self
            .synthesizer
            .synthesize(tickets.tiers[drawn], &mut rng, &mut made)
        {
            Ok(()) if made == layout => {}
            Ok(()) => problems.push(Fault::new(
                Code::ReplayLayout,
                format!("the seed makes the layout {}", shown(&made)),
            )),
            Err(e) => problems.push(Fault::new(
                Code::ReplayLayoutUnmade,
                format!("the seed's layout cannot be made: {e}"),
            )),
        }
    }
}
