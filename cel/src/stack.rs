//! Deep expressions on any thread: the parser takes nesting up to 250 levels (cel-go's
//! limit, which kube keeps), and every pass over the tree (conversion, checking, planning,
//! cost estimation, evaluation) recurses once per level. Each recursive step asks for more
//! stack when little is left, so that a deep rule is refused or evaluated, never a stack
//! overflow that would take the server down.

/// The stack left below which a step gets a new segment.
const RED_ZONE: usize = 128 * 1024;
/// The size of each new segment.
const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f` with enough stack for one more level.
pub(crate) fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// The stack the parser runs on: its recursive descent takes tens of kilobytes per level
/// of parentheses (in a debug build), far more than a worker thread's stack for the 250
/// levels CEL allows.
const PARSER_STACK: usize = 256 * 1024 * 1024;

/// Runs the parser (`f`) on a stack of its own, reserved for the call (mapped lazily, so
/// only what it touches costs memory).
pub(crate) fn for_parser<R>(f: impl FnOnce() -> R) -> R {
    stacker::grow(PARSER_STACK, f)
}
