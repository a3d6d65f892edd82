//! The auditor's report on blocks: the prize table recomputed from the tickets, forms, near
//! misses, leak check, order statistics and duplicate layouts.

pub mod stats;
