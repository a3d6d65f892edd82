//! A full 2013 Année de la chance block (2 000 000 tickets): emitted with a fixed seed by 1
//! and by 2 threads, byte-identical, and verified (with the forms each prize took); then its layouts'
//! forms, near misses and features (tests/it/layouts.rs).

use crate::common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "annee-chance", "3");
    assert_pinned(
        &folder,
        "e16be1cd7e9b326c1de57b73ea45696511f5f2dd2e206b981cded2ff86aeccdd",
        "1c4e3c6c9a02110c2b653c75a16561c14f501472bbb9e8d72ecf914eb7092062",
        "e200d8d73af22453d8e918314fc503a8be9b72ce3a02ef60cdf384488e0532bf",
    );
    verify_with_forms(&w, &folder, "2 000 000");
    assert_article_3(
        &folder,
        &[
            ("40000", 2),
            ("1000", 18),
            ("100", 1_700),
            ("50", 8_000),
            ("20", 20_000),
            ("10", 117_000),
            ("6", 287_000),
            ("0", 1_566_280),
        ],
        433_720,
        "3960000",
    );
    // The forms, near misses and features of its layouts (tests/it/layouts.rs), on this block.
    crate::layouts::annee_chance_full_block_forms_near_misses_and_no_tell(
        &folder.join("block-00001.csv"),
    );
}
