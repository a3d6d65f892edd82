//! A full 2013 Année de la chance block (2 000 000 tickets): emitted with a fixed seed by 1
//! and by 2 threads, byte-identical, and verified (with the forms each prize took).

mod common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "annee-chance", "3");
    assert_pinned(
        &folder,
        "38758cdafc480b3f2f761ad0639a41e78a5bde470eedf82d33d65d845ad72191",
        "2b0376dc93c49e0ce5f0317e77e4b993edb4f2f750ffbd4b08cc00c07b2e5f63",
        "6865d9f5f75190f091103bb08073867f6d7b5cfdffe44dd9d04fad9dfe730df1",
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
}
