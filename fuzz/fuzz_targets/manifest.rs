//! Any bytes to the manifest reader: no panic; what it accepts is written back and read again
//! to the same value, and writing that value again gives the same bytes.
#![no_main]

use emission_factory::block::manifest::Manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(manifest) = Manifest::from_bytes(data) {
        let bytes = manifest.to_bytes();
        let again = Manifest::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("a manifest we wrote does not read back: {e}"));
        assert_eq!(manifest, again, "the manifest does not round-trip");
        assert_eq!(
            again.to_bytes(),
            bytes,
            "writing the manifest twice differs"
        );
    }
});
