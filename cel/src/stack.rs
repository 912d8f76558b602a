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
