//! The fitted weights of the final score (see [`super::rank`]).
//!
//! Written by `bench/recall/fit.py`: a listwise fit of the signals' weights over the dev splits
//! of the recall sets (`bench/recall/`), then Platt scaling of "is this hit evidence for the
//! query" on each query's best ten hits, both sets weighing the same; the script prints the
//! fit's quality and the recall it gives. Do not edit by hand: run the script.

use super::rank::SignalWeights;

pub const FITTED: SignalWeights = SignalWeights {
    bias: -4.7216,
    semantic: 1.5325,
    lexical: 1.2539,
    fused: 1.2137,
    coverage: -0.5575,
    proximity: 1.7299,
    interaction: 2.0947,
    entity: 2.1350,
    speaker: 1.1108,
    time: 1.9510,
    brevity: -1.5665,
    neighbour: 2.3916,
};
