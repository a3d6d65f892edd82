//! What belongs to an emission as a whole, beyond its blocks: the locks that let several
//! processes (or machines, on a shared file system) work on one emission safely.

pub mod lock;
