//! Any bytes as a layout to the decoders of every stake of `ruche-or`: no panic, the same answer
//! twice, a form exactly when the layout decodes.
#![no_main]

use emission_factory::mechanic::Decoder;
use emission_factory_fuzz::{decoders, exercise};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static DECODERS: OnceLock<Vec<Box<dyn Decoder>>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    exercise(DECODERS.get_or_init(|| decoders("ruche-or")), data);
});
