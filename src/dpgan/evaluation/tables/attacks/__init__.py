"""Privacy attacks on synthetic tables: DCR, attribute inference, shadow-model membership, LOGAN, and `run_attacks`."""
