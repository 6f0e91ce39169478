"""Learners, one module per paper family. Each factory returns an `oslr.types.Learner`."""
