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
        "9ec69a8e1bcee90affb9898b73a6328699d8d0a5bb4077ebd8985aeff6404db6",
        "e0987bbb650c404f8a7915fcf9d915daf1ecb201d5064a691a988bc5aefded90",
        "860ae8ba2cafc3c9ab6641b4f76896450ac9ab4aeaade9d459b75dca9f3997c7",
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
