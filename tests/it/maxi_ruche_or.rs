//! A full Maxi Ruche d'or block (7 500 000 tickets): emitted with a fixed seed by 1 and by 2
//! threads, byte-identical, and verified (with the forms each prize took).

use crate::common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "maxi-ruche-or", "3");
    assert_pinned(
        &folder,
        "6395ce22055578fe273ae25c5d034aec6a154c96c3549e32495d4e4810756d62",
        "a656190a44c89be4f9de715391bd0903e51d25afe8a36ac51b9384a15393eeba",
        "c2c14dd4a9c49c46107042ff316ffee40167bc057d67bd8a5edff7c690cc5b62",
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
}
