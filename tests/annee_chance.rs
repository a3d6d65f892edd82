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
        "faac20b747d22575db88523924ffd449116d1319186289f6de379b7da0b035a8",
        "ea295163cd131d06a7c6c0eea6b7193c3f3e949f1ebf0d953ec8c484f3b885e2",
        "9898876183fc25d6eeb20bdfeef3267f30dec3bebdbdb71a6011e2adea9e853f",
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
