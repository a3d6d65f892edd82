//! A full Maxi Ruche d'or block (7 500 000 tickets): emitted with a fixed seed by 1 and by 2
//! threads, byte-identical, and verified (with the forms each prize took); then its layouts'
//! forms, near misses and features (tests/it/layouts.rs).

use crate::common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "maxi-ruche-or", "3");
    assert_pinned(
        &folder,
        "6395ce22055578fe273ae25c5d034aec6a154c96c3549e32495d4e4810756d62",
        "e3b1d143f03ae073ef4dfa0f61046b50097527034f0935bc519f1f9a34f41f17",
        "bcc71352bf0e4d0003208dcdbe1503dd4e46fc4c31be4137fe613ea8af1b77f2",
    );
    verify_with_forms(&w, &folder, "7 500 000");
    assert_article_3(
        &folder,
        &[
            ("100000", 3),
            ("5000", 15),
            ("500", 250),
            ("50", 50_000),
            ("20", 200_000),
            ("10", 187_500),
            ("5", 1_000_000),
            ("3", 1_000_000),
            ("0", 5_062_232),
        ],
        2_437_768,
        "16875000",
    );
    // The forms, near misses and features of its layouts (tests/it/layouts.rs), on this block.
    crate::layouts::maxi_ruche_or_full_block_forms_near_misses_and_no_tell(
        &folder.join("block-00001.csv"),
    );
}
