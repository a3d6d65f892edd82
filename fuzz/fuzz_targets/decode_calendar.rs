//! Any bytes as a layout to the decoders and explainers of every stake of `annee-chance`: no panic,
//! the same answer twice, a form exactly when the layout decodes, `decode_cents` agreeing with
//! `decode` and `features` with `explain` (`emission_factory_fuzz::exercise`).
#![no_main]

use emission_factory_fuzz::{decoders, exercise, Readers};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static READERS: OnceLock<Vec<Readers>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    exercise(READERS.get_or_init(|| decoders("annee-chance")), data);
});
